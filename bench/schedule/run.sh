#!/usr/bin/env bash
# bench/schedule/run.sh — the time of one fairshare.schedule() pass with
# 10k, 100k and 1M RUNNABLE jobs over 100 shares and 1,000 instances, and
# the same decisions computed by a straightforward SQL query with window
# functions, all in one run, printed as ratios.
#
# The workload is chosen so that the window query's decisions are exactly
# the scheduler's: one quota-share queue, 100 LEND shares (nobody borrows)
# with a guarantee of 10 instances each on a 1,000-instance environment,
# every job 1 instance, nothing running.  A pass then places each share's 10
# highest-priority, oldest jobs — what a running count per share gives —
# 1,000 placements written back with their attempts and events.  The run
# checks that both chose the same 1,000 jobs.
#
# Each timing is the median of ROUNDS runs in one warm session (as the
# dispatcher runs passes), each pass in a subtransaction that is rolled
# back so every run starts from the same state.  The pure core's decisions
# per second are measured by bench/schedule/core_bench (plain gcc).
#
# Usage: bash bench/schedule/run.sh        SIZES="10000 100000 1000000" ROUNDS=5
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
SIZES=${SIZES:-"10000 100000 1000000"}
ROUNDS=${ROUNDS:-5}

fs_setup "$top" > /dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fs_cluster_init "$work/c" "shared_buffers = '1GB'" "max_wal_size = '8GB'" "work_mem = '64MB'" \
	"fairshare.database = 'postgres'" > /dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" > /dev/null
q() { fs_psql "$work/c" -d bench -At "$@"; }

q > /dev/null <<'SQL'
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'NUM_INSTANCES', 1000);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('q', 'quota');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy)
	SELECT 'q', 'share-' || lpad(s::text, 3, '0'), 'LEND' FROM generate_series(1, 100) s;
INSERT INTO fairshare.quota_share_limits
	SELECT 'q', 'share-' || lpad(s::text, 3, '0'), 'NUM_INSTANCES', 10 FROM generate_series(1, 100) s;
-- The same decisions in plain SQL: per share, a running count of its
-- waiting jobs in the share's order, within what its guarantee leaves.
-- Milliseconds of each of `rounds' runs of `query' in one session, each in
-- a subtransaction that is rolled back; the first run only warms up.
CREATE FUNCTION public.time_runs(query text, rounds int) RETURNS SETOF float8 LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz;
BEGIN
	FOR i IN 0..rounds LOOP
		BEGIN
			t0 := clock_timestamp();
			EXECUTE query;
			IF i > 0 THEN
				RETURN NEXT extract(epoch FROM clock_timestamp() - t0) * 1000;
			END IF;
			RAISE EXCEPTION USING ERRCODE = 'P0004';
		EXCEPTION WHEN assert_failure THEN
			NULL;
		END;
	END LOOP;
END
$$;
CREATE FUNCTION public.window_decisions() RETURNS SETOF bigint LANGUAGE sql AS $$
	SELECT job_id FROM (
		SELECT j.job_id, j.instance_count, l.max_capacity,
			   coalesce(h.held, 0) AS held,
			   sum(j.instance_count) OVER (PARTITION BY j.quota_share
										   ORDER BY j.scheduling_priority DESC, j.runnable_at, j.job_id) AS running
		  FROM fairshare.jobs j
		  JOIN fairshare.quota_share_limits l ON l.job_queue = j.job_queue AND l.quota_share = j.quota_share
		  LEFT JOIN (SELECT quota_share, sum(instance_count) AS held FROM fairshare.jobs
					  WHERE status IN ('SCHEDULED', 'STARTING', 'RUNNING') GROUP BY 1) h
				 ON h.quota_share = j.quota_share
		 WHERE j.status = 'RUNNABLE') ranked
	 WHERE held + running <= max_capacity
$$;
SQL

request='{"RoleArn": "arn:aws:iam::1:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"}, "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1}}'
# Bulk-load RUNNABLE jobs directly (bypassing the submission triggers: the
# bench measures a pass, not INSERT).
load() {	# load TOTAL: make the table hold TOTAL RUNNABLE jobs
	local have
	have=$(q -c "SELECT count(*) FROM fairshare.jobs")
	q > /dev/null <<SQL
SET session_replication_role = replica;
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, scheduling_priority, request,
							instance_types, instance_count, status, runnable_at)
SELECT 'j' || i, 'q', 'share-' || lpad((1 + i % 100)::text, 3, '0'), (i::bigint * 7919) % 10, '$request',
	   '{ml.p4d.24xlarge}', 1, 'RUNNABLE', now() - make_interval(secs => i)
  FROM generate_series($have + 1, $1) i;
RESET session_replication_role;
VACUUM ANALYZE fairshare.jobs;
SQL
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

time_pass() {	# ms of one schedule() pass, median of ROUNDS in one session
	q -c "SELECT public.time_runs('SELECT count(*) FROM fairshare.schedule()', $ROUNDS)" | median
}

time_window() {
	q -c "SELECT public.time_runs('SELECT count(*) FROM public.window_decisions()', $ROUNDS)" | median
}

same_decisions() {	# do the pass and the window query choose the same jobs?
	q -c "BEGIN" -c "CREATE TEMP TABLE passed ON COMMIT DROP AS SELECT job_id FROM fairshare.schedule()" \
	  -c "SELECT count(*) FROM passed" \
	  -c "SELECT count(*) FROM (SELECT job_id FROM passed EXCEPT SELECT * FROM public.window_decisions_before) d" \
	  -c "ROLLBACK" 2>/dev/null | tail -2 | paste -sd' '
}

declare -A pass_ms window_ms
for n in $SIZES; do
	load "$n"
	q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS public.window_decisions_before" \
	  -c "CREATE TABLE public.window_decisions_before AS SELECT * FROM public.window_decisions()" > /dev/null
	check=$(same_decisions)
	pass_ms[$n]=$(time_pass)
	window_ms[$n]=$(time_window)
	printf '%8d RUNNABLE: schedule() %9.1f ms, window query %9.1f ms, placed/differing: %s\n' \
		"$n" "${pass_ms[$n]}" "${window_ms[$n]}" "$check"
done

set -- $SIZES
first=$1; last=${!#}
awk -v a="${pass_ms[$last]}" -v b="${pass_ms[$first]}" -v n="$last" -v m="$first" \
	'BEGIN {printf "pass time %d / %d RUNNABLE: %.2f (target <= 2)\n", n, m, a / b}'
awk -v w="${window_ms[$last]}" -v p="${pass_ms[$last]}" -v n="$last" \
	'BEGIN {printf "window query / schedule() at %d RUNNABLE: %.1fx (target >= 20)\n", n, w / p}'

echo "pure core (bench/schedule/core_bench):"
make -s -C "$top/bench/schedule" run
