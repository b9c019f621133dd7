#!/usr/bin/env bash
# bench/views/run.sh — query times of the dashboard views and of the
# housekeeping functions, first with only the live jobs (20k RUNNABLE, 400
# holding capacity), then with the same live jobs and 1M finished jobs
# (about 1.2M attempts, 4.6M events) spread over 30 days, and the ratio between
# the two.  Current-state views should not care about the finished history
# (ratio near 1); the 24-hour history views read one day of it (~33k jobs).
# Then retention: batch times while it deletes 5 days of history, and the
# daily procedure deleting 5 more.
#
# The history is loaded with INSERT ... SELECT under session_replication_role
# = replica, which skips the triggers (submission check, state machine) and
# the foreign-key checks: the rows are written consistent with what the
# state machine would have written (attempts, the events of every
# transition, training job names), at about 100k jobs per few seconds
# instead of one job per several statements.
#
# Each query runs RUNS times in one session; the median is printed.
# PLANS=1 also prints EXPLAIN ANALYZE of each query with the full history.
#
# Usage: bash bench/views/run.sh   (JOBS=1000000 RUNS=7 by default)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib/setup.sh"
. "$top/test/lib/cluster.sh"
JOBS=${JOBS:-1000000}
RUNS=${RUNS:-7}
PLANS=${PLANS:-0}
KEEP=${KEEP:-0}		# KEEP=1: leave the cluster running at the end, to look around

fs_setup "$top" > /dev/null
work=$(mktemp -d /tmp/fairshare-bench.XXXXXX); chmod 755 "$work"
if [ "$KEEP" = 1 ]; then
	trap 'echo "cluster left running: $work/c, port $(fs_cluster_port "$work/c"), database bench"' EXIT
else
	trap 'fs_cluster_stop "$work/c" immediate; rm -rf "$work"' EXIT
fi
fs_cluster_init "$work/c" "shared_buffers = '1GB'" "work_mem = '16MB'" "max_wal_size = '8GB'" \
	"checkpoint_timeout = '30min'" "autovacuum = off" > /dev/null
fs_cluster_start "$work/c"
fs_psql "$work/c" -c "CREATE DATABASE bench" > /dev/null
sql() { fs_psql "$work/c" -d bench "$@"; }

echo "== setting up: 3 environments, 3 queues (quota, fair share, FIFO), live jobs"
sql > /dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION fairshare;
INSERT INTO fairshare.service_environments (name) VALUES ('p4'), ('p5'), ('g5');
INSERT INTO fairshare.capacity_limits VALUES
	('p4', 'ml.p4d.24xlarge', 400),
	('p5', 'NUM_INSTANCES', 200), ('p5', 'ml.p5.48xlarge', 120),
	('g5', 'NUM_INSTANCES', 1000), ('g5', 'ml.g5.xlarge', 600), ('g5', 'ml.g5.12xlarge', 400);
INSERT INTO fairshare.scheduling_policies (name, kind, share_decay_seconds) VALUES
	('quota', 'QUOTA_SHARE', 0), ('fair', 'FAIR_SHARE', 3600);
INSERT INTO fairshare.share_distribution SELECT 'fair', 'team-' || i, 1 + i % 5 FROM generate_series(1, 20) i;
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES
	('prod', 100, 'quota'), ('research', 50, 'fair'), ('sweeps', 10, NULL);
INSERT INTO fairshare.queue_environments VALUES
	('prod', 'p4', 1), ('prod', 'p5', 2), ('research', 'g5', 1), ('research', 'p5', 2), ('sweeps', 'g5', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES
	('prod', 'ProdExp1', 'LEND_AND_BORROW', -1), ('prod', 'ProdExp2', 'LEND', NULL),
	('prod', 'ProdExp3', 'RESERVE', NULL), ('prod', 'ProdExp4', 'LEND_AND_BORROW', 100);
INSERT INTO fairshare.quota_share_limits VALUES
	('prod', 'ProdExp1', 'ml.p4d.24xlarge', 200), ('prod', 'ProdExp2', 'ml.p4d.24xlarge', 100),
	('prod', 'ProdExp3', 'ml.p4d.24xlarge', 50), ('prod', 'ProdExp4', 'ml.p4d.24xlarge', 50),
	('prod', 'ProdExp1', 'ml.p5.48xlarge', 60), ('prod', 'ProdExp2', 'ml.p5.48xlarge', 60);

-- One row per job to create: queue, share, placement, times.
-- Finished jobs end in the order of their ids (with an hour of jitter) over
-- the last 30 days, as they would: ids grow with submission time.
CREATE FUNCTION public.gen_jobs(first bigint, n bigint, kind text, total bigint) RETURNS TABLE (
	g bigint, queue text, quota text, share text, env text, itype text, cnt integer, prio integer,
	status fairshare.job_status, att integer, r timestamptz, w interval, run interval, stop timestamptz)
LANGUAGE sql AS $$
	SELECT g, q.queue,
		   CASE q.queue WHEN 'prod' THEN 'ProdExp' || (1 + g % 4) END,
		   CASE q.queue WHEN 'research' THEN 'team-' || (1 + g % 20) END,
		   CASE q.queue WHEN 'prod' THEN 'p4' ELSE 'g5' END,
		   CASE q.queue WHEN 'prod' THEN 'ml.p4d.24xlarge' ELSE 'ml.g5.xlarge' END,
		   (1 + g % 4)::integer, ((g % 3) * 50)::integer,
		   CASE kind WHEN 'finished' THEN (CASE WHEN g % 10 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END)::fairshare.job_status
					 WHEN 'running' THEN 'RUNNING' ELSE 'RUNNABLE' END,
		   CASE WHEN kind = 'finished' AND g % 10 IN (0, 5) THEN 2 WHEN kind = 'finished' THEN 1
				WHEN kind = 'runnable' AND g % 5 = 0 THEN 1 WHEN kind = 'running' THEN 1 ELSE 0 END,
		   t.stop - t.run - t.w, t.w, t.run, t.stop
	  FROM generate_series(first, first + n - 1) g
	 CROSS JOIN LATERAL (SELECT (ARRAY['prod', 'research', 'sweeps'])[1 + (g / 7) % 3] AS queue) q
	 CROSS JOIN LATERAL (	-- "0 * g": one draw per job, not one for all
		SELECT CASE kind WHEN 'finished'
					THEN now() - (1 - g::float8 / total) * interval '30 days' - (random() + 0 * g) * interval '1 hour'
					ELSE now() END AS stop,
			   interval '10 minutes' + (random() + 0 * g) * interval '4 hours' AS run,
			   (random() + 0 * g) * interval '1 hour' AS w) t
$$;

CREATE FUNCTION public.load_jobs(first bigint, n bigint, kind text, total bigint DEFAULT 1) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	SET LOCAL session_replication_role = replica;
	PERFORM setseed(0.5);
	CREATE TEMP TABLE gen ON COMMIT DROP AS SELECT * FROM public.gen_jobs(first, n, kind, total);
	INSERT INTO fairshare.jobs
		(job_id, job_name, job_queue, share_identifier, quota_share, scheduling_priority, request,
		 instance_types, instance_count, status, status_reason, created_at, runnable_at, scheduled_at,
		 started_at, stopped_at, service_environment, instance_type, training_job_name, attempts,
		 preemptions, submitted_by)
	OVERRIDING SYSTEM VALUE
	SELECT g, 'job-' || g, queue, share, quota, prio,
		   jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
							  'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
							  'ResourceConfig', jsonb_build_object('InstanceType', itype, 'InstanceCount', cnt)),
		   ARRAY[itype], cnt, status,
		   CASE WHEN status = 'FAILED' THEN 'Received status from SageMaker: AlgorithmError: exit code 1' END,
		   r - interval '1 minute', r,
		   CASE WHEN status <> 'RUNNABLE' THEN stop - run END, CASE WHEN status <> 'RUNNABLE' THEN stop - run + interval '1 minute' END,
		   CASE WHEN status IN ('SUCCEEDED', 'FAILED') THEN stop END,
		   CASE WHEN status <> 'RUNNABLE' THEN env END, CASE WHEN status <> 'RUNNABLE' THEN itype END,
		   CASE WHEN status <> 'RUNNABLE' THEN 'fairshare-' || g || '-' || att END,
		   att, CASE WHEN g % 10 = 5 THEN 1 ELSE 0 END, 'user' || g % 50
	  FROM gen;
	-- Attempts: the first (the only one, or one that failed or was
	-- preempted), and the second of the jobs that have one.
	INSERT INTO fairshare.job_attempts
		(job_id, attempt, training_job_name, service_environment, instance_type, instance_count,
		 job_queue, share, scheduling_priority, queued_at, created_at, started_at, stopped_at, outcome, status_reason)
	SELECT g, 1, 'fairshare-' || g || '-1', env, itype, cnt, queue, coalesce(quota, share), prio, r,
		   r + w, r + w + interval '1 minute',
		   CASE WHEN status = 'RUNNING' THEN NULL WHEN att = 1 AND status <> 'RUNNABLE' THEN stop ELSE r + w + run / 3 END,
		   CASE WHEN status = 'RUNNING' THEN NULL WHEN att = 1 AND status <> 'RUNNABLE' THEN status::text
				WHEN status = 'RUNNABLE' OR g % 10 = 5 THEN 'PREEMPTED' ELSE 'FAILED' END,
		   NULL
	  FROM gen WHERE att >= 1;
	INSERT INTO fairshare.job_attempts
		(job_id, attempt, training_job_name, service_environment, instance_type, instance_count,
		 job_queue, share, scheduling_priority, queued_at, created_at, started_at, stopped_at, outcome)
	SELECT g, 2, 'fairshare-' || g || '-2', env, itype, cnt, queue, coalesce(quota, share), prio, r + w + run / 3,
		   r + w + run / 3 + interval '2 minutes',
		   r + w + run / 3 + interval '3 minutes', stop, status::text
	  FROM gen WHERE att = 2;
	-- Events: every transition the state machine would have recorded.
	INSERT INTO fairshare.job_events (job_id, at, old_status, new_status)
	SELECT g, e.at, e.old_status::fairshare.job_status, e.new_status::fairshare.job_status
	  FROM gen
	 CROSS JOIN LATERAL (VALUES
		(r, 'SUBMITTED', 'RUNNABLE', true),
		(r + w, 'RUNNABLE', 'SCHEDULED', att >= 1),
		(r + w + interval '1 minute', 'SCHEDULED', 'RUNNING', att >= 1),
		(r + w + run / 3, 'RUNNING', 'RUNNABLE', att = 2 OR (att = 1 AND status = 'RUNNABLE')),
		(r + w + run / 3 + interval '2 minutes', 'RUNNABLE', 'SCHEDULED', att = 2),
		(r + w + run / 3 + interval '3 minutes', 'SCHEDULED', 'RUNNING', att = 2),
		(stop, 'RUNNING', status::text, status IN ('SUCCEEDED', 'FAILED'))) e(at, old_status, new_status, wanted)
	 WHERE e.wanted;
END
$$;

-- Live jobs: 400 holding capacity, 20000 waiting (a fifth of them preempted once).
SELECT public.load_jobs(100000000, 400, 'running');
SELECT public.load_jobs(100000400, 20000, 'runnable');
INSERT INTO fairshare.share_usage SELECT 'research', 'team-' || i, i * 1.5, now() FROM generate_series(1, 20) i;
-- A month of minute-by-minute history, 8 series.
INSERT INTO fairshare.utilization_history (sampled_at, kind, service_environment, capacity_unit, capacity, in_use,
										   waiting_instances, queue_depth, oldest_wait_seconds)
SELECT now() - m * interval '1 minute', 'ENVIRONMENT', e, 'NUM_INSTANCES', 100, (m % 100)::int, 5, 3, 60
  FROM generate_series(1, 30 * 1440) m, unnest(ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) e;
SELECT setval(pg_get_serial_sequence('fairshare.jobs', 'job_id'), 200000000);
VACUUM ANALYZE;
SQL

# The queries measured.  name|query
queries=$(cat <<'Q'
environment_utilization|SELECT * FROM fairshare.environment_utilization
queue_status|SELECT * FROM fairshare.queue_status
quota_share_status|SELECT * FROM fairshare.quota_share_status
fair_share_status|SELECT * FROM fairshare.fair_share_status
active_alerts|SELECT * FROM fairshare.active_alerts
job_time_stats (24 h)|SELECT * FROM fairshare.job_time_stats
failures_by_hour (24 h)|SELECT * FROM fairshare.failures_by_hour
throughput_by_hour (24 h)|SELECT * FROM fairshare.throughput_by_hour
recent_failures (24 h)|SELECT * FROM fairshare.recent_failures
utilization_history (6 h)|SELECT * FROM fairshare.utilization_history WHERE sampled_at > now() - interval '6 hours'
job_time_stats (7 days)|SELECT * FROM fairshare.job_time_stats(now() - interval '7 days')
throughput_by_hour (7 days)|SELECT * FROM fairshare.throughput_by_hour(now() - interval '7 days')
record_utilization()|SELECT fairshare.record_utilization()
evaluate_alerts()|SELECT count(*) FROM fairshare.evaluate_alerts()
Q
)

measure() {	# measure QUERY -> "rows median_ms"
	local q=$1 rows times
	rows=$(sql -At -c "SELECT count(*) FROM ($q) s" 2>/dev/null || echo "?")
	times=$( { echo '\timing on'; echo '\o /dev/null'; for _ in $(seq 1 "$RUNS"); do echo "$q;"; done; } |
		sql 2>&1 | awk '/^Time:/ {print $2}' | sort -n)
	echo "$rows $(echo "$times" | awk '{a[NR] = $1} END {printf "%.1f", a[int((NR + 1) / 2)]}')"
}

declare -A before_rows before_ms
echo "== without history ($(sql -At -c "SELECT count(*) FROM fairshare.jobs") live jobs)"
while IFS='|' read -r name q; do
	read -r rows ms <<< "$(measure "$q")"
	before_rows[$name]=$rows; before_ms[$name]=$ms
done <<< "$queries"

echo "== loading $JOBS finished jobs over 30 days"
start=$(date +%s)
chunk=250000
for ((first = 1; first <= JOBS; first += chunk)); do
	n=$(( JOBS - first + 1 < chunk ? JOBS - first + 1 : chunk ))
	sql -c "SELECT public.load_jobs($first, $n, 'finished', $JOBS)" > /dev/null
done
sql -c "VACUUM ANALYZE" > /dev/null
echo "   loaded in $(( $(date +%s) - start )) s: $(sql -At -c "SELECT format('%s jobs, %s attempts, %s events, %s history rows',
	(SELECT count(*) FROM fairshare.jobs), (SELECT count(*) FROM fairshare.job_attempts),
	(SELECT count(*) FROM fairshare.job_events), (SELECT count(*) FROM fairshare.utilization_history))")"

echo
printf '%-28s %8s %14s %8s %14s %7s\n' "query" "rows" "no history" "rows" "$JOBS finished" "ratio"
while IFS='|' read -r name q; do
	read -r rows ms <<< "$(measure "$q")"
	b=${before_ms[$name]}
	if [[ "$name" == *"(24 h)"* || "$name" == *"(7 days)"* || "$name" == *"(6 h)"* ]]; then ratio="-"
	else ratio=$(awk -v a="$ms" -v b="$b" 'BEGIN {printf "%.2f", a / b}'); fi
	printf '%-28s %8s %11s ms %8s %11s ms %7s\n' "$name" "${before_rows[$name]}" "$b" "$rows" "$ms" "$ratio"
	if [ "$PLANS" = 1 ]; then sql -c "EXPLAIN (ANALYZE, BUFFERS) $q"; fi
done <<< "$queries"

echo
counts() {
	sql -At -c "SELECT format('%s jobs, %s attempts, %s events, %s history rows',
		(SELECT count(*) FROM fairshare.jobs), (SELECT count(*) FROM fairshare.job_attempts),
		(SELECT count(*) FROM fairshare.job_events), (SELECT count(*) FROM fairshare.utilization_history))"
}
echo "== retention: one batch (at most 1000 rows of each kind) per transaction, for what is 25-30 days old"
echo "   before: $(counts)"
{
	echo '\timing on'
	for _ in $(seq 1 400); do
		echo "SELECT sum(deleted) FROM fairshare.apply_retention_batch(1000, now() - interval '25 days');"
	done
} > "$work/retention.sql"
sql -At -f "$work/retention.sql" 2>&1 | awk '/^[0-9]+$/ {rows = $1; next} /^Time:/ {if (rows > 0) print $2}' |
	sort -n > "$work/batches"
echo "   after:  $(counts)"
awk '{a[NR] = $1; s += $1} END {printf "   %d batches in %.1f s; batch median %.0f ms, longest %.0f ms\n", NR, s / 1000, a[int((NR + 1) / 2)], a[NR]}' \
	"$work/batches"
echo "== retention: CALL fairshare.apply_retention() for what is 20-25 days old"
out=$( { echo '\timing on'; echo "SET fairshare.retention = '20d';"; echo "CALL fairshare.apply_retention();"; } | sql 2>&1)
echo "   $(echo "$out" | grep -o 'deleted.*')"
echo "   in $(echo "$out" | awk '/^Time:/ {t = $2} END {printf "%.1f s", t / 1000}')"
