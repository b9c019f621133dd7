#!/usr/bin/env bash
# bench/update/run.sh — bulk UPDATEs of fairshare.jobs (every row's
# scheduling_priority, then every row's status) at N and at 4 N jobs, in one
# run on one server, against a plain table with the same columns and
# indexes.  Prints per-row times and two ratios:
#   scaling   per-row time at 4 N / at N: about 1 when the statement is
#             linear in the rows it changes, about 4 when it is quadratic
#             (the statement trigger's join of its transition tables was,
#             until it became a set difference: 50,000 priorities took
#             minutes);
#   overhead  fairshare.jobs / plain table at 4 N: what the triggers, the
#             job events and the attempts cost.
#
# Usage: bash bench/update/run.sh   (N=20000 by default; about a minute)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
N=${N:-20000}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/c" "shared_buffers = '512MB'" "max_wal_size = '4GB'" \
	"fairshare.database = 'postgres'" >/dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
# The queue is DISABLED so that no pass moves the jobs while we do.
fs_psql "$work/c" -d bench >/dev/null 2>&1 <<'SQL'
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100);
INSERT INTO fairshare.job_queues (name, state) VALUES ('q', 'DISABLED');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE TABLE public.plain_jobs (LIKE fairshare.jobs INCLUDING ALL);
SQL

# one_size ROWS -> "priority_ms status_ms plain_priority_ms plain_status_ms"
one_size() {
	fs_psql "$work/c" -d bench -q -t -A <<SQL | tail -n 1
SET client_min_messages = warning;
SET session_replication_role = replica;	-- the jobs run nowhere: truncate even placed ones
TRUNCATE fairshare.jobs CASCADE;
RESET session_replication_role;
TRUNCATE public.plain_jobs;
INSERT INTO fairshare.jobs (job_name, job_queue, request)
SELECT 'job-' || g, 'q', '{"RoleArn": "arn:aws:iam::123456789012:role/R", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
	"ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1}}'
  FROM generate_series(1, $1) g;
INSERT INTO public.plain_jobs OVERRIDING SYSTEM VALUE SELECT * FROM fairshare.jobs;
-- wait for the dispatcher to have seen the SUBMITTED jobs (it leaves them PENDING)
DO \$\$ BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN NOT EXISTS (SELECT 1 FROM fairshare.jobs WHERE status = 'SUBMITTED');
		PERFORM pg_sleep(0.1);
	END LOOP;
END \$\$;
CREATE TEMP TABLE t (what text, ms float8);
DO \$\$
DECLARE
	t0 timestamptz;
	n bigint;
BEGIN
	t0 := clock_timestamp();
	UPDATE fairshare.jobs SET scheduling_priority = 7;
	INSERT INTO t VALUES ('priority', extract(epoch FROM clock_timestamp() - t0) * 1000);
	t0 := clock_timestamp();
	UPDATE fairshare.jobs SET status = 'RUNNABLE', runnable_at = now() WHERE status <> 'RUNNABLE';
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n <> (SELECT count(*) FROM public.plain_jobs) THEN
		RAISE EXCEPTION 'only % of the jobs went RUNNABLE', n;
	END IF;
	INSERT INTO t VALUES ('status', extract(epoch FROM clock_timestamp() - t0) * 1000);
	t0 := clock_timestamp();
	UPDATE public.plain_jobs SET scheduling_priority = 7;
	INSERT INTO t VALUES ('plain_priority', extract(epoch FROM clock_timestamp() - t0) * 1000);
	t0 := clock_timestamp();
	UPDATE public.plain_jobs SET status = 'RUNNABLE', runnable_at = now();
	INSERT INTO t VALUES ('plain_status', extract(epoch FROM clock_timestamp() - t0) * 1000);
END \$\$;
SELECT string_agg(round(ms)::text, ' ' ORDER BY what = 'priority' DESC, what = 'status' DESC,
				  what = 'plain_priority' DESC) FROM t;
SQL
}

small=$(one_size "$N")
large=$(one_size $((N * 4)))
echo "$small" "$large" | awk -v n="$N" '{
	printf "rows            priority (ms)  status (ms)  plain priority  plain status\n"
	printf "%-15d %13d %12d %15d %13d\n", n, $1, $2, $3, $4
	printf "%-15d %13d %12d %15d %13d\n", 4 * n, $5, $6, $7, $8
	printf "scaling 4N / N: priority %.2f (target <= 2), status %.2f (target <= 2) (per-row time; linear ~1, quadratic ~4)\n",
		($5 / 4) / $1, ($6 / 4) / $2
	printf "overhead at 4N (fairshare.jobs / plain): priority %.2f, status %.2f\n", $5 / $7, $6 / $8
}'
