#!/usr/bin/env bash
# bench/api/run.sh — SubmitServiceJob through the AWS Batch API against
# single-row INSERTs over libpq, on the same server in the same run.
#
#   API:   8 client processes, each on one keep-alive connection, sending
#          SubmitServiceJob requests signed beforehand (the client is not
#          the bottleneck: its CPU use per process is printed);
#   libpq: pgbench, 8 connections, each transaction one INSERT into
#          fairshare.jobs of the same job.
# Rounds alternate; the best of each side is compared.  Then p50/p99 of
# SubmitServiceJob and DescribeServiceJob from one client.  Durability as
# bench/submit: fsync and synchronous_commit on unless SYNC=off.
#
# Usage: bash bench/api/run.sh   (as root on a fresh machine is fine)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
. "$top/test/lib/e2e.sh"
SECONDS_PER_ROUND=${SECONDS_PER_ROUND:-10}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-8}
SYNC=${SYNC:-on}
LATENCY_N=${LATENCY_N:-1000}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
api_port=$(fs_free_port)
# The jobs (15 instances, 0 capacity) only wait: the dispatcher's passes
# stay cheap and it makes no SageMaker call.
fs_cluster_init "$work/c" "fsync = $SYNC" "synchronous_commit = $SYNC" "shared_buffers = '512MB'" \
	"max_wal_size = '4GB'" "fairshare.database = 'bench'" "fairshare.api_port = $api_port" \
	"fairshare.api_key_requests_per_second = 1000000" "fairshare.poll_interval = '1h'" ${API_WORKERS:+"fairshare.api_workers = $API_WORKERS"} >/dev/null
fs_cluster_start "$work/c"
port=$(fs_cluster_port "$work/c")
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
fs_psql "$work/c" -d bench >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 0);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE ROLE bench_submitter LOGIN IN ROLE fairshare_submitter;
SQL
read -r key secret <<<"$(fs_psql "$work/c" -d bench -At -c "SELECT access_key_id || ' ' || secret_access_key FROM fairshare.create_api_key('bench_submitter')")"
for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$api_port) 2>/dev/null && break; sleep 0.1; done
echo "{\"endpoint\": \"http://127.0.0.1:$api_port\", \"key\": [\"$key\", \"$secret\"]}" > "$work/cfg.json"
request='{"RoleArn": "arn:aws:iam::123456789012:role/SageMakerRole", "AlgorithmSpecification": {"TrainingImage": "123.dkr.ecr.us-east-1.amazonaws.com/train:1", "TrainingInputMode": "File"}, "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"}, "StoppingCondition": {"MaxRuntimeInSeconds": 86400}, "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100}}'
echo "INSERT INTO fairshare.jobs (job_name, job_queue, request, retry_attempts, attempt_duration_seconds) VALUES ('bench', 'q', '$request', 1, 86400);" > "$work/insert.sql"

best_api=0; best_sql=0; cpu=0
for r in $(seq 1 "$ROUNDS"); do
	out=$(python3 "$top/bench/api/api_bench.py" throughput "$work/cfg.json" "$CLIENTS" "$SECONDS_PER_ROUND")
	a=$(echo "$out" | awk '{print $2}'); cpu=$(echo "$out" | awk '{print $4}')
	s=$(fs_as_postgres "$FS_PGBIN/pgbench" -n -h 127.0.0.1 -p "$port" -U bench_submitter -c "$CLIENTS" -j "$CLIENTS" \
		-T "$SECONDS_PER_ROUND" -f "$work/insert.sql" bench 2>&1 | awk '/^tps/ {print int($3); exit}')
	echo "round $r: API $a submits/s (client CPU $cpu of a core per client), libpq $s inserts/s"
	[ "$a" -gt "$best_api" ] && best_api=$a
	[ "$s" -gt "$best_sql" ] && best_sql=$s
done
echo "clients=$CLIENTS fsync=$SYNC synchronous_commit=$SYNC cores=$(nproc)"
echo "API SubmitServiceJob: $best_api submits/s"
echo "libpq INSERT:         $best_sql inserts/s"
echo "ratio API/libpq: $(awk -v a="$best_api" -v s="$best_sql" 'BEGIN {printf "%.2f", a / s}') (target >= 0.5)"
python3 "$top/bench/api/api_bench.py" latency "$work/cfg.json" "$LATENCY_N"
