#!/usr/bin/env bash
# bench/update/run.sh — statements on fairshare.jobs must be linear in the
# rows they touch.  In one run, on one server:
#
# 1. Bulk UPDATEs (every row's scheduling_priority, then every row's status)
#    at N and at 4 N jobs, against a plain table with the same columns and
#    indexes.  Prints per-row times and two ratios:
#      scaling   per-row time at 4 N / at N: about 1 when the statement is
#                linear in the rows it changes, about 4 when it is quadratic
#                (the statement trigger's join of its transition tables was,
#                until it became a set difference: 50,000 priorities took
#                minutes);
#      overhead  fairshare.jobs / plain table at 4 N: what the triggers, the
#                job events and the attempts cost.
# 2. Taking in a backlog: a sweep of K jobs submitted in one INSERT ...
#    SELECT ... generate_series, after a first batch of 10,000 was scheduled
#    (256 placed) and VACUUM ANALYZEd -- so the planner believes no job is
#    SUBMITTED -- then schedule() called, each call its own transaction,
#    until no job is left SUBMITTED.  Prints the time per job taken in at
#    each size of INTAKE and the ratio of the largest to the smallest
#    (1M against 10k by default; about 1 when linear).  Before 24 a single
#    schedule() after such an INSERT of 100,000 had not returned after five
#    minutes (its update rescanned the new jobs once per new job).
#
# Usage: bash bench/update/run.sh
#   N=250000 (4 N = 1M rows) INTAKE="10000 1000000": about 15 minutes.
#   bench/check.sh runs N=5000 INTAKE="10000 200000".
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
N=${N:-250000}
INTAKE=${INTAKE:-"10000 1000000"}

fs_setup "$top" >/dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/c" "shared_buffers = '512MB'" "max_wal_size = '8GB'" \
	"fairshare.database = 'postgres'" >/dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" >/dev/null
# The dispatcher works on another database (fairshare.database), so nothing
# but this script moves the jobs.  Queue q is DISABLED (the UPDATEs of part
# 1 are the only statements on its jobs); queue qi is ENABLED on 256
# instances (part 2).
fs_psql "$work/c" -d bench >/dev/null 2>&1 <<'SQL'
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 256);
INSERT INTO fairshare.job_queues (name, state) VALUES ('q', 'DISABLED'), ('qi', 'ENABLED');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1), ('qi', 'p4', 1);
CREATE TABLE public.plain_jobs (LIKE fairshare.jobs INCLUDING ALL);
SQL

request='{"RoleArn": "arn:aws:iam::123456789012:role/R", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
	"ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1}}'

# one_size ROWS -> "priority_ms status_ms plain_priority_ms plain_status_ms"
one_size() {
	fs_psql "$work/c" -d bench -q -t -A <<SQL | tail -n 1
SET client_min_messages = warning;
SET session_replication_role = replica;	-- the jobs run nowhere: truncate even placed ones
TRUNCATE fairshare.jobs CASCADE;
RESET session_replication_role;
TRUNCATE public.plain_jobs;
INSERT INTO fairshare.jobs (job_name, job_queue, request)
SELECT 'job-' || g, 'q', '$request'
  FROM generate_series(1, $1) g;
INSERT INTO public.plain_jobs OVERRIDING SYSTEM VALUE SELECT * FROM fairshare.jobs;
VACUUM ANALYZE fairshare.jobs;
VACUUM ANALYZE public.plain_jobs;
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

# intake K -> "insert_ms intake_ms calls": the backlog of part 2
intake() {
	fs_psql "$work/c" -d bench -q -t -A <<SQL | tail -n 1
SET client_min_messages = warning;
SET session_replication_role = replica;
TRUNCATE fairshare.jobs CASCADE;
RESET session_replication_role;
INSERT INTO fairshare.jobs (job_name, job_queue, request)
SELECT 'first-' || g, 'qi', '$request' FROM generate_series(1, 10000) g;
DO \$\$ BEGIN
	LOOP
		PERFORM count(*) FROM fairshare.schedule();
		COMMIT;
		EXIT WHEN NOT EXISTS (SELECT 1 FROM fairshare.jobs WHERE status = 'SUBMITTED');
	END LOOP;
END \$\$;
VACUUM ANALYZE;
CREATE TEMP TABLE t (what text, v float8);
DO \$\$
DECLARE
	t0 timestamptz := clock_timestamp();
	calls integer := 0;
BEGIN
	INSERT INTO fairshare.jobs (job_name, job_queue, request)
	SELECT 'sweep-' || g, 'qi', '$request' FROM generate_series(1, $1) g;
	INSERT INTO t VALUES ('insert', extract(epoch FROM clock_timestamp() - t0) * 1000);
	COMMIT;
	t0 := clock_timestamp();
	LOOP
		PERFORM count(*) FROM fairshare.schedule();
		calls := calls + 1;
		COMMIT;
		EXIT WHEN NOT EXISTS (SELECT 1 FROM fairshare.jobs WHERE status = 'SUBMITTED');
	END LOOP;
	INSERT INTO t VALUES ('intake', extract(epoch FROM clock_timestamp() - t0) * 1000), ('calls', calls);
	IF (SELECT count(*) FROM fairshare.jobs WHERE status = 'RUNNABLE') <> $1 + 10000 - 256 THEN
		RAISE EXCEPTION 'the sweep was not taken in whole';
	END IF;
END \$\$;
SELECT string_agg(round(v)::text, ' ' ORDER BY what = 'insert' DESC, what = 'intake' DESC) FROM t;
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

printf "\nbacklog taken in by schedule() after one INSERT ... generate_series (first 10,000 scheduled, ANALYZEd)\n"
printf "%-10s %12s %12s %8s %14s %14s\n" "jobs" "insert (ms)" "intake (ms)" "calls" "insert us/job" "intake us/job"
first=""; last=""
for k in $INTAKE; do
	set -- $(intake "$k")
	printf "%-10d %12d %12d %8d %14.1f %14.1f\n" "$k" "$1" "$2" "$3" $(echo "$1 * 1000 / $k" | bc -l) \
		$(echo "$2 * 1000 / $k" | bc -l)
	per=$(echo "$2 / $k" | bc -l)
	[ -z "$first" ] && first=$per && first_k=$k
	last=$per; last_k=$k
done
awk -v a="$last" -v b="$first" -v n="$last_k" -v m="$first_k" \
	'BEGIN {printf "intake per job %d / %d: %.2f (target <= 1.5)\n", n, m, a / b}'
