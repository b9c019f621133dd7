#!/usr/bin/env bash
# bench/api/reads.sh — ListServiceJobs and GetJobQueueSnapshot through the
# AWS Batch API on a quota-share queue with FINISHED (default 1,000,000)
# finished jobs and WAITING (default 10,000) RUNNABLE ones: p50/p99 of each
# kind of request (target: p99 under 50 ms).
#
# The jobs are loaded with INSERT ... SELECT under session_replication_role
# = replica (no triggers: a bulk load, not a submission benchmark), then
# ANALYZE.  Each request is signed just before it is sent and only the
# round trip is timed, from one keep-alive client with an admin's key.
# Every job also carries a share identifier (team-1 to team-4; a real
# quota-share queue's jobs would have none), so that the SHARE_IDENTIFIER
# filter is measured on the same history as QUOTA_SHARE_NAME.
#
# Usage: bash bench/api/reads.sh   (FINISHED=200000 for a quicker run)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
. "$top/test/lib/e2e.sh"
FINISHED=${FINISHED:-1000000}
WAITING=${WAITING:-10000}
N=${N:-200}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
api_port=$(fs_free_port)
fs_cluster_init "$work/c" "fsync = off" "synchronous_commit = off" "shared_buffers = '512MB'" \
	"max_wal_size = '4GB'" "fairshare.database = 'bench'" "fairshare.api_port = $api_port" \
	"fairshare.api_key_requests_per_second = 1000000" "fairshare.poll_interval = '1h'" >/dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
t0=$(date +%s)
fs_psql "$work/c" -d bench >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 0);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('qs', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('q', 'qs');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy)
SELECT 'q', 'share-' || s, 'LEND' FROM generate_series(1, 4) s;
INSERT INTO fairshare.quota_share_limits SELECT 'q', 'share-' || s, 'ml.p4d.24xlarge', 8 FROM generate_series(1, 4) s;
CREATE ROLE bench_admin LOGIN IN ROLE fairshare_admin;
-- finished jobs over the last 30 days, then the waiting ones (ids grow with time)
CREATE FUNCTION public.load(first bigint, n bigint, finished boolean, total bigint) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
	SET LOCAL session_replication_role = replica;
	INSERT INTO fairshare.jobs (job_id, job_name, job_queue, quota_share, share_identifier, scheduling_priority, request,
		instance_types, instance_count, status, created_at, runnable_at, scheduled_at, started_at, stopped_at,
		service_environment, instance_type, attempts, submitted_by)
	OVERRIDING SYSTEM VALUE
	SELECT g, 'job-' || g, 'q', 'share-' || (1 + g % 4), 'team-' || (1 + g % 4), (g % 3)::integer,
		   '{"RoleArn": "arn:aws:iam::123456789012:role/R", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
			 "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1}}'::jsonb,
		   ARRAY['ml.p4d.24xlarge'], 1,
		   (CASE WHEN NOT finished THEN 'RUNNABLE' WHEN g % 10 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END)::fairshare.job_status,
		   t, t, CASE WHEN finished THEN t + interval '1 minute' END, CASE WHEN finished THEN t + interval '2 minutes' END,
		   CASE WHEN finished THEN t + interval '1 hour' END,
		   CASE WHEN finished THEN 'p4' END, CASE WHEN finished THEN 'ml.p4d.24xlarge' END,
		   CASE WHEN finished THEN 1 ELSE 0 END, 'bench_admin'
	  FROM generate_series(first, first + n - 1) g
	 CROSS JOIN LATERAL (SELECT CASE WHEN finished THEN now() - (1 - g::float8 / total) * interval '30 days' - interval '2 hours'
									 ELSE now() - (first + n - g) * interval '10 ms' END AS t) x;
END
\$\$;
SQL
for ((first = 1; first <= FINISHED; first += 100000)); do
	n=$(( FINISHED - first + 1 < 100000 ? FINISHED - first + 1 : 100000 ))
	fs_psql "$work/c" -d bench -q -c "SELECT public.load($first, $n, true, $FINISHED)" >/dev/null
done
fs_psql "$work/c" -d bench -q -c "SELECT public.load($((FINISHED + 1)), $WAITING, false, 0)" \
	-c "SELECT setval(pg_get_serial_sequence('fairshare.jobs', 'job_id'), $((FINISHED + WAITING)))" -c "ANALYZE" >/dev/null
echo "loaded $FINISHED finished and $WAITING RUNNABLE jobs in $(( $(date +%s) - t0 )) s"
read -r key secret <<<"$(fs_psql "$work/c" -d bench -At -c "SELECT access_key_id || ' ' || secret_access_key FROM fairshare.create_api_key('bench_admin')")"
for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$api_port) 2>/dev/null && break; sleep 0.1; done
echo "{\"endpoint\": \"http://127.0.0.1:$api_port\", \"key\": [\"$key\", \"$secret\"]}" > "$work/cfg.json"
python3 "$top/bench/api/api_bench.py" reads "$work/cfg.json" "$N" "$((FINISHED / 2))"
