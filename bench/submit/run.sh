#!/usr/bin/env bash
# bench/submit/run.sh — INSERT throughput into fairshare.jobs against a plain
# table with the same columns and indexes (no triggers, no foreign keys, no
# row-level security), in the same run on the same server, with pgbench.
#
# Each side runs ROUNDS times, alternating, for SECONDS seconds with CLIENTS
# clients; the best round of each side is compared.  Prints both rates and
# the ratio fairshare / plain.  Durability: the cluster runs with fsync on
# and synchronous_commit on unless SYNC=off (then the ratio measures CPU
# cost alone — the harder comparison for fairshare).
#
# With GRANTS=1 it also measures the grant checks
# (fairshare.require_role_arn_grant and fairshare.require_share_grant): two
# submitter roles, one checked against 51 grants of each kind and one not,
# insert in turn; prints both rates and the ratio checked / unchecked.
#
# Usage: bash bench/submit/run.sh   (as root on a fresh machine is fine)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-15}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-2}
SYNC=${SYNC:-on}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/c" "fsync = $SYNC" "synchronous_commit = $SYNC" "shared_buffers = '512MB'" \
	"max_wal_size = '4GB'" "fairshare.database = 'postgres'" >/dev/null
fs_cluster_start "$work/c"
port=$(fs_cluster_port "$work/c")
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
fs_psql "$work/c" -d bench >/dev/null <<'SQL'
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('q', 'quota');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES ('q', 'ProdExp1', 'LEND_AND_BORROW');
-- The plain table: the same columns, defaults, checks and indexes.
CREATE TABLE public.plain_jobs (LIKE fairshare.jobs INCLUDING ALL);
SQL
request='{"RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole", "AlgorithmSpecification": {"TrainingImage": "123.dkr.ecr.us-east-1.amazonaws.com/train:1", "TrainingInputMode": "File"}, "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}, "StoppingCondition": {"MaxRuntimeInSeconds": 86400}, "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100}}'
# The plain table has no trigger to fill instance_types/instance_count, so
# its INSERT names them; otherwise both statements are the same.
echo "INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, scheduling_priority, request) VALUES ('sft-llama', 'q', 'ProdExp1', 50, '$request');" > "$work/fairshare.sql"
echo "INSERT INTO public.plain_jobs (job_name, job_queue, quota_share, scheduling_priority, request, instance_types, instance_count) VALUES ('sft-llama', 'q', 'ProdExp1', 50, '$request', '{ml.p4d.24xlarge}', 15);" > "$work/plain.sql"

run() {	# run SCRIPT [ROLE] -> prints tps
	"$FS_PGBIN/pgbench" -n -h 127.0.0.1 -p "$port" -U "${2:-postgres}" -c "$CLIENTS" -j "$CLIENTS" \
		-T "$SECONDS_PER_ROUND" -f "$1" bench 2>&1 | awk '/^tps/ {print int($3); exit}'
}
best_plain=0; best_fs=0
for r in $(seq 1 "$ROUNDS"); do
	p=$(run "$work/plain.sql"); f=$(run "$work/fairshare.sql")
	echo "round $r: plain $p inserts/s, fairshare.jobs $f inserts/s"
	[ "$p" -gt "$best_plain" ] && best_plain=$p
	[ "$f" -gt "$best_fs" ] && best_fs=$f
done
ratio=$(awk -v f="$best_fs" -v p="$best_plain" 'BEGIN {printf "%.2f", f / p}')
echo "clients=$CLIENTS fsync=$SYNC synchronous_commit=$SYNC"
echo "plain table:    $best_plain inserts/s"
echo "fairshare.jobs: $best_fs inserts/s"
echo "ratio fairshare/plain: $ratio (target >= 0.80)"

[ "${GRANTS:-0}" = 1 ] || exit 0
fs_psql "$work/c" -d bench >/dev/null <<'SQL'
CREATE ROLE bench_checked LOGIN IN ROLE fairshare_submitter;
CREATE ROLE bench_unchecked LOGIN IN ROLE fairshare_submitter;
ALTER ROLE bench_checked SET fairshare.require_role_arn_grant = on;
ALTER ROLE bench_checked SET fairshare.require_share_grant = on;
-- Other teams' grants, to the group role, then the one that matches.
INSERT INTO fairshare.role_arn_grants (role, role_arn)
SELECT 'fairshare_submitter', 'arn:aws:iam::123456789012:role/team-' || i || '-*' FROM generate_series(1, 50) i;
INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('bench_checked', 'arn:aws:iam::123456789012:role/SageMaker*');
INSERT INTO fairshare.share_grants (role, job_queue, share)
SELECT 'fairshare_submitter', 'q', 'Team' || i || '*' FROM generate_series(1, 50) i;
INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('bench_checked', 'q', 'ProdExp1');
SQL
best_checked=0; best_unchecked=0
for r in $(seq 1 "$ROUNDS"); do
	u=$(run "$work/fairshare.sql" bench_unchecked); k=$(run "$work/fairshare.sql" bench_checked)
	echo "round $r: submitter unchecked $u inserts/s, checked $k inserts/s"
	[ "$u" -gt "$best_unchecked" ] && best_unchecked=$u
	[ "$k" -gt "$best_checked" ] && best_checked=$k
done
echo "grant checks (51 RoleArn and 51 share grants): unchecked $best_unchecked inserts/s, checked $best_checked inserts/s"
echo "ratio checked/unchecked: $(awk -v k="$best_checked" -v u="$best_unchecked" 'BEGIN {printf "%.2f", k / u}')"
