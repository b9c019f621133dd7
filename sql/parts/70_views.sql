-- 70_views.sql — the dashboard views (docs/sql-contract.md, 'Views', and
-- docs/dashboards.md): what every environment, queue and share holds and waits for
-- now, and wait times, run times, failures and throughput over a recent
-- window.  docs/dashboards.md says what each column means.
--
-- Two kinds of view, both cheap on a large history:
--   * current state (environment_utilization, queue_status,
--     quota_share_status, fair_share_status) reads only jobs that hold
--     capacity or wait for it, through partial indexes, each RUNNABLE job
--     once, so its cost follows the live jobs and not the finished ones;
--   * recent history (job_time_stats, failures_by_hour, throughput_by_hour,
--     recent_failures) covers the last 24 hours through indexes on the
--     finishing and placement times.  The functions of the same names take
--     any window.
--
-- Every public view is SELECT * FROM a function of the same name, and the
-- function runs the query (for the current state, an internal view named
-- with a leading underscore) as the extension's owner with JIT turned off:
--   * as the owner, so that fairshare_viewer reads them without any right
--     on the tables.  They count every job, whatever row-level security
--     would show the caller, which is why they are granted to viewers and
--     admins only, not to submitters;
--   * without JIT, because with a backlog the planner's estimates pass
--     jit_above_cost and compiling costs more (about 80 ms) than these
--     queries take (see bench/views).

-- What the history views read, without touching fairshare.jobs row by row:
-- each attempt records, when it is created, the job's queue, share and
-- priority, and since when the job had waited for it (job_attempts.job_queue,
-- share, scheduling_priority, queued_at; written by
-- fairshare._record_transitions).  A day of history is then one index range
-- scan.

-- Indexes the views need beyond those of the catalog (which already has
-- jobs_active_idx for jobs holding capacity and job_events_at_idx).
-- RUNNABLE jobs: the scheduler's partial indexes are split by queue kind;
-- this one finds all of them at once (inserts do not touch it: a job is
-- SUBMITTED when inserted).
CREATE INDEX jobs_runnable_idx ON fairshare.jobs (job_queue) WHERE status = 'RUNNABLE';
-- Windows of history, answered from the index alone once vacuum has marked
-- the pages all-visible: first placements (waits), attempt ends (run
-- times, failures, instance-hours), job ends (jobs finished and failed).
CREATE INDEX job_attempts_first_created_idx ON fairshare.job_attempts (created_at)
	INCLUDE (job_queue, share, scheduling_priority, queued_at) WHERE attempt = 1;
CREATE INDEX job_attempts_stopped_idx ON fairshare.job_attempts (stopped_at)
	INCLUDE (job_queue, share, scheduling_priority, started_at, outcome, instance_count);
CREATE INDEX jobs_finished_queue_idx ON fairshare.jobs (stopped_at)
	INCLUDE (job_queue, status) WHERE status IN ('SUCCEEDED', 'FAILED');

------------------------------------------------------------------------------
-- Building blocks (granted to nobody; the views below use them)
------------------------------------------------------------------------------

-- Jobs holding capacity: SCHEDULED, STARTING and RUNNING, including while a
-- stop is in progress (docs/scheduling.md, 'Capacity accounting').
CREATE VIEW fairshare._held_jobs AS
SELECT j.job_id, j.job_queue, j.share_identifier, j.quota_share,
	   j.service_environment, j.instance_type, j.instance_count,
	   j.stop_kind IS NOT NULL AS stopping
  FROM fairshare.jobs j
 WHERE j.status IN ('SCHEDULED', 'STARTING', 'RUNNING');

-- RUNNABLE jobs and since when each has waited: the end of its last
-- attempt, or runnable_at if it never ran.  (runnable_at itself is kept
-- across retries and preemptions: it is the job's place in line.)  Time
-- spent PENDING in a disabled queue or quota share since then counts as
-- waiting: knowing when a job last became RUNNABLE would take a look into
-- job_events for every waiting job, every minute.
CREATE VIEW fairshare._waiting_jobs AS
SELECT j.job_id, j.job_queue, q.state AS queue_state, j.share_identifier, j.quota_share,
	   j.scheduling_priority, j.instance_types, j.instance_count,
	   CASE WHEN j.attempts = 0 THEN j.runnable_at
			ELSE coalesce((SELECT a.stopped_at FROM fairshare.job_attempts a
							WHERE a.job_id = j.job_id AND a.attempt = j.attempts), j.runnable_at)
	   END AS waiting_since
  FROM fairshare.jobs j
  JOIN fairshare.job_queues q ON q.name = j.job_queue
 WHERE j.status = 'RUNNABLE';

-- The same, folded into groups of jobs alike for the dashboards (one pass
-- over the RUNNABLE jobs; a few dozen groups however long the backlog).
CREATE VIEW fairshare._waiting_groups AS
SELECT w.job_queue, w.queue_state, w.quota_share, w.share_identifier, w.instance_types, w.instance_count,
	   count(*) AS jobs, min(w.waiting_since) AS since
  FROM fairshare._waiting_jobs w
 GROUP BY 1, 2, 3, 4, 5, 6;

------------------------------------------------------------------------------
-- Current state
------------------------------------------------------------------------------

CREATE VIEW fairshare._environment_utilization AS
WITH held AS (
	SELECT service_environment, instance_type,
		   sum(instance_count) AS in_use,
		   coalesce(sum(instance_count) FILTER (WHERE stopping), 0) AS stopping,
		   count(*) AS jobs
	  FROM fairshare._held_jobs
	 GROUP BY 1, 2
), nominated AS (
	SELECT nominated_environment AS service_environment, nominated_instance_type AS instance_type,
		   sum(instance_count) AS nominated
	  FROM fairshare.jobs
	 WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL
	 GROUP BY 1, 2
), waiting AS MATERIALIZED (
	-- Only enabled queues place jobs.
	SELECT * FROM fairshare._waiting_groups WHERE queue_state = 'ENABLED'
), wait_by_type AS (
	-- A job that lists several instance types waits for each of them.
	SELECT w.job_queue, t.instance_type, sum(w.jobs) AS jobs, sum(w.jobs * w.instance_count) AS instances,
		   min(w.instance_count) AS smallest, min(w.since) AS since
	  FROM waiting w CROSS JOIN LATERAL unnest(w.instance_types) AS t(instance_type)
	 GROUP BY 1, 2
), wait_by_queue AS (
	SELECT job_queue, sum(jobs) AS jobs, sum(jobs * instance_count) AS instances,
		   min(instance_count) AS smallest, min(since) AS since
	  FROM waiting
	 GROUP BY 1
), units AS (
	-- Every capacity limit, and every instance type in use or wanted in an
	-- environment where only its NUM_INSTANCES limit applies to it.
	SELECT service_environment, capacity_unit, max_capacity::integer
	  FROM fairshare.capacity_limits
	UNION
	SELECT x.service_environment, x.instance_type, NULL::integer
	  FROM (SELECT service_environment, instance_type FROM held
			UNION
			SELECT qe.service_environment, wt.instance_type
			  FROM wait_by_type wt JOIN fairshare.queue_environments qe ON qe.job_queue = wt.job_queue) x
	 WHERE EXISTS (SELECT 1 FROM fairshare.capacity_limits l
					WHERE l.service_environment = x.service_environment AND l.capacity_unit = 'NUM_INSTANCES')
	   AND NOT EXISTS (SELECT 1 FROM fairshare.capacity_limits l
						WHERE l.service_environment = x.service_environment AND l.capacity_unit = x.instance_type)
), env AS (
	SELECT e.name AS service_environment, e.state,
		   (SELECT l.max_capacity::integer FROM fairshare.capacity_limits l
			 WHERE l.service_environment = e.name AND l.capacity_unit = 'NUM_INSTANCES') AS total_capacity,
		   coalesce((SELECT sum(h.in_use) FROM held h WHERE h.service_environment = e.name), 0) AS total_in_use
	  FROM fairshare.service_environments e
), rows AS (
	SELECT u.service_environment, env.state, u.capacity_unit, u.max_capacity AS capacity,
		   coalesce(h.in_use, 0) AS in_use, coalesce(h.stopping, 0) AS stopping, coalesce(h.jobs, 0) AS jobs,
		   coalesce(n.nominated, 0) AS nominated,
		   env.total_capacity, env.total_in_use,
		   coalesce(w.jobs, 0) AS waiting_jobs, coalesce(w.instances, 0) AS waiting_instances,
		   w.smallest, w.since
	  FROM units u
	  JOIN env ON env.service_environment = u.service_environment
	  LEFT JOIN LATERAL (
		SELECT sum(h.in_use) AS in_use, sum(h.stopping) AS stopping, sum(h.jobs) AS jobs
		  FROM held h
		 WHERE h.service_environment = u.service_environment
		   AND (u.capacity_unit = 'NUM_INSTANCES' OR h.instance_type = u.capacity_unit)) h ON true
	  LEFT JOIN LATERAL (
		SELECT sum(n.nominated) AS nominated
		  FROM nominated n
		 WHERE n.service_environment = u.service_environment
		   AND (u.capacity_unit = 'NUM_INSTANCES' OR n.instance_type = u.capacity_unit)) n ON true
	  LEFT JOIN LATERAL (
		SELECT sum(x.jobs) AS jobs, sum(x.instances) AS instances, min(x.smallest) AS smallest, min(x.since) AS since
		  FROM (SELECT wq.jobs, wq.instances, wq.smallest, wq.since
				  FROM wait_by_queue wq
				  JOIN fairshare.queue_environments qe ON qe.job_queue = wq.job_queue
				 WHERE u.capacity_unit = 'NUM_INSTANCES' AND qe.service_environment = u.service_environment
				UNION ALL
				SELECT wt.jobs, wt.instances, wt.smallest, wt.since
				  FROM wait_by_type wt
				  JOIN fairshare.queue_environments qe ON qe.job_queue = wt.job_queue
				 WHERE u.capacity_unit <> 'NUM_INSTANCES' AND qe.service_environment = u.service_environment
				   AND wt.instance_type = u.capacity_unit) x) w ON true
)
SELECT r.service_environment,
	   r.state,
	   r.capacity_unit,
	   r.capacity,
	   r.in_use::integer,
	   r.stopping::integer,
	   r.nominated::integer,
	   -- Room left: under this unit's limit and under the environment's
	   -- NUM_INSTANCES limit, whichever is smaller.
	   greatest(0, CASE
		   WHEN r.capacity IS NULL THEN r.total_capacity - r.total_in_use
		   WHEN r.capacity_unit = 'NUM_INSTANCES' OR r.total_capacity IS NULL THEN r.capacity - r.in_use
		   ELSE least(r.capacity - r.in_use, r.total_capacity - r.total_in_use) END)::integer AS free,
	   round(r.in_use / nullif(r.capacity, 0)::numeric, 4) AS utilization,
	   r.jobs::integer AS running_jobs,
	   r.waiting_jobs::integer,
	   r.waiting_instances::integer,
	   r.smallest::integer AS smallest_waiting_job,
	   round(extract(epoch FROM now() - r.since), 0)::bigint AS oldest_wait_seconds
  FROM rows r;

CREATE VIEW fairshare._queue_status AS
SELECT q.name AS job_queue,
	   q.state,
	   q.priority,
	   coalesce(p.kind, 'FIFO') AS kind,
	   q.scheduling_policy,
	   coalesce(c.submitted, 0) AS submitted_jobs,
	   coalesce(c.pending, 0) AS pending_jobs,
	   coalesce(w.jobs, 0) AS runnable_jobs,
	   coalesce(c.scheduled, 0) AS scheduled_jobs,
	   coalesce(c.starting, 0) AS starting_jobs,
	   coalesce(c.running, 0) AS running_jobs,
	   coalesce(c.held, 0)::integer AS instances_held,
	   coalesce(w.instances, 0)::integer AS instances_waiting,
	   round(extract(epoch FROM now() - w.since), 0)::bigint AS oldest_wait_seconds
  FROM fairshare.job_queues q
  LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
  LEFT JOIN LATERAL (
	SELECT count(*) FILTER (WHERE j.status = 'SUBMITTED') AS submitted,
		   count(*) FILTER (WHERE j.status = 'PENDING') AS pending,
		   count(*) FILTER (WHERE j.status = 'SCHEDULED') AS scheduled,
		   count(*) FILTER (WHERE j.status = 'STARTING') AS starting,
		   count(*) FILTER (WHERE j.status = 'RUNNING') AS running,
		   sum(j.instance_count) FILTER (WHERE j.status IN ('SCHEDULED', 'STARTING', 'RUNNING')) AS held
	  FROM fairshare.jobs j
	 WHERE j.job_queue = q.name
	   AND j.status IN ('SUBMITTED', 'PENDING', 'SCHEDULED', 'STARTING', 'RUNNING')) c ON true
  LEFT JOIN (
	SELECT g.job_queue, sum(g.jobs) AS jobs, sum(g.jobs * g.instance_count) AS instances, min(g.since) AS since
	  FROM fairshare._waiting_groups g
	 GROUP BY 1) w ON w.job_queue = q.name;

CREATE VIEW fairshare._quota_share_status AS
WITH shares AS (
	SELECT s.job_queue, s.name AS quota_share, s.state, s.strategy, s.borrow_limit, s.weight,
		   l.capacity_unit, l.max_capacity::integer AS share_limit
	  FROM fairshare.quota_shares s
	  LEFT JOIN fairshare.quota_share_limits l ON l.job_queue = s.job_queue AND l.quota_share = s.name
), held AS (
	SELECT job_queue, quota_share, instance_type, sum(instance_count) AS instances
	  FROM fairshare._held_jobs
	 WHERE quota_share IS NOT NULL
	 GROUP BY 1, 2, 3
), waiting AS MATERIALIZED (
	SELECT job_queue, quota_share, instance_types, instance_count, jobs, since
	  FROM fairshare._waiting_groups
	 WHERE quota_share IS NOT NULL
), with_held AS (
	-- A limit on NUM_INSTANCES counts every type; one on a type, that type.
	SELECT sh.*,
		   coalesce((SELECT sum(h.instances) FROM held h
					  WHERE h.job_queue = sh.job_queue AND h.quota_share = sh.quota_share
						AND (sh.capacity_unit IS NULL OR sh.capacity_unit = 'NUM_INSTANCES'
							 OR h.instance_type = sh.capacity_unit)), 0) AS held
	  FROM shares sh
), per_share AS (
	SELECT s.*,
		   greatest(s.held - coalesce(s.share_limit, 0), 0) AS borrowed,
		   CASE WHEN s.strategy <> 'RESERVE' THEN greatest(s.share_limit - s.held, 0) ELSE 0 END AS lendable,
		   coalesce(w.jobs, 0) AS waiting_jobs, coalesce(w.instances, 0) AS waiting_instances,
		   coalesce(w.guaranteed, 0) AS guaranteed_waiting_jobs, w.since
	  FROM with_held s
	  LEFT JOIN LATERAL (
		SELECT sum(w.jobs) AS jobs, sum(w.jobs * w.instance_count) AS instances,
			   sum(w.jobs) FILTER (WHERE w.instance_count <= s.share_limit - s.held) AS guaranteed,
			   min(w.since) AS since
		  FROM waiting w
		 WHERE w.job_queue = s.job_queue AND w.quota_share = s.quota_share
		   AND (s.capacity_unit IS NULL OR s.capacity_unit = 'NUM_INSTANCES'
				OR s.capacity_unit = ANY (w.instance_types))) w ON true
), units AS (
	-- The capacity units the queue's shares have limits of.
	SELECT DISTINCT job_queue, capacity_unit FROM shares WHERE capacity_unit IS NOT NULL
), env_capacity AS (
	-- What the queue's environments offer per capacity unit: the limit of
	-- that unit, else (for NUM_INSTANCES) the sum of the type limits, else
	-- (for a type) the NUM_INSTANCES limit.
	SELECT u.job_queue, u.capacity_unit,
		   sum(coalesce(
			   (SELECT l.max_capacity::integer FROM fairshare.capacity_limits l
				 WHERE l.service_environment = qe.service_environment AND l.capacity_unit = u.capacity_unit),
			   CASE WHEN u.capacity_unit = 'NUM_INSTANCES'
					THEN (SELECT sum(l.max_capacity::integer) FROM fairshare.capacity_limits l
						   WHERE l.service_environment = qe.service_environment)
					ELSE (SELECT l.max_capacity::integer FROM fairshare.capacity_limits l
						   WHERE l.service_environment = qe.service_environment AND l.capacity_unit = 'NUM_INSTANCES')
			   END, 0)) AS capacity
	  FROM units u
	  JOIN fairshare.queue_environments qe ON qe.job_queue = u.job_queue
	 GROUP BY 1, 2
), other_queues AS (
	-- What other queues hold on the queue's environments, per unit: that
	-- part of the capacity no share's limit covers is not there to borrow.
	SELECT u.job_queue, u.capacity_unit, sum(h.instance_count) AS held
	  FROM units u
	  JOIN fairshare.queue_environments qe ON qe.job_queue = u.job_queue
	  JOIN fairshare._held_jobs h ON h.service_environment = qe.service_environment AND h.job_queue <> u.job_queue
		   AND (u.capacity_unit = 'NUM_INSTANCES' OR h.instance_type = u.capacity_unit)
	 GROUP BY 1, 2
), per_unit AS (
	-- Borrowed instances come first from capacity no share's limit covers
	-- and no other queue holds, then from the lenders, in proportion to
	-- their unused limits.
	SELECT p.job_queue, p.capacity_unit,
		   least(greatest(sum(p.borrowed)
						  - greatest(coalesce(max(c.capacity), 0) - coalesce(max(o.held), 0) - sum(p.share_limit), 0),
						  0),
				 sum(p.lendable)) AS lent,
		   sum(p.lendable) AS lendable
	  FROM per_share p
	  LEFT JOIN env_capacity c ON c.job_queue = p.job_queue AND c.capacity_unit = p.capacity_unit
	  LEFT JOIN other_queues o ON o.job_queue = p.job_queue AND o.capacity_unit = p.capacity_unit
	 WHERE p.capacity_unit IS NOT NULL
	 GROUP BY 1, 2
)
SELECT p.job_queue,
	   p.quota_share,
	   p.state,
	   p.strategy,
	   p.capacity_unit,
	   p.share_limit,
	   CASE WHEN p.strategy <> 'LEND_AND_BORROW' THEN p.share_limit
			WHEN p.borrow_limit = -1 THEN NULL
			ELSE floor(p.share_limit * (1 + p.borrow_limit / 100.0))::integer END AS max_share,
	   p.held::integer,
	   p.borrowed::integer,
	   round(CASE WHEN u.lendable > 0 THEN p.lendable::numeric * u.lent / u.lendable ELSE 0 END, 1) AS lent,
	   p.waiting_jobs::integer,
	   p.waiting_instances::integer,
	   p.guaranteed_waiting_jobs::integer,
	   round(extract(epoch FROM now() - p.since), 0)::bigint AS oldest_wait_seconds,
	   p.weight
  FROM per_share p
  LEFT JOIN per_unit u ON u.job_queue = p.job_queue AND u.capacity_unit = p.capacity_unit;

CREATE VIEW fairshare._fair_share_status AS
WITH queues AS (
	SELECT q.name AS job_queue, q.scheduling_policy
	  FROM fairshare.job_queues q
	  JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy AND p.kind = 'FAIR_SHARE'
), held AS (
	SELECT job_queue, share_identifier, sum(instance_count) AS instances, count(*) AS jobs
	  FROM fairshare._held_jobs
	 WHERE share_identifier IS NOT NULL
	 GROUP BY 1, 2
), waiting AS (
	SELECT job_queue, share_identifier, sum(jobs * instance_count) AS instances, sum(jobs) AS jobs,
		   min(since) AS since
	  FROM fairshare._waiting_groups
	 WHERE share_identifier IS NOT NULL
	 GROUP BY 1, 2
), ids AS (
	SELECT job_queue, share_identifier FROM held
	UNION
	SELECT job_queue, share_identifier FROM waiting
	UNION
	SELECT job_queue, share_identifier FROM fairshare.share_usage
)
SELECT q.job_queue,
	   i.share_identifier,
	   -- An exact entry, else the prefix entry (ending in *) that matches,
	   -- else 1 (docs/scheduling.md, 'Fair-share queues').
	   coalesce((SELECT d.weight_factor FROM fairshare.share_distribution d
				  WHERE d.scheduling_policy = q.scheduling_policy
					AND (d.share_identifier = i.share_identifier
						 OR (right(d.share_identifier, 1) = '*'
							 AND starts_with(i.share_identifier, rtrim(d.share_identifier, '*'))))
				  ORDER BY d.share_identifier = i.share_identifier DESC
				  LIMIT 1), 1.0) AS weight_factor,
	   coalesce(u.usage, 0) AS decayed_usage,
	   u.updated_at AS usage_updated_at,
	   coalesce(h.instances, 0)::integer AS held,
	   coalesce(h.jobs, 0)::integer AS running_jobs,
	   coalesce(w.jobs, 0)::integer AS waiting_jobs,
	   coalesce(w.instances, 0)::integer AS waiting_instances,
	   round(extract(epoch FROM now() - w.since), 0)::bigint AS oldest_wait_seconds
  FROM ids i
  JOIN queues q ON q.job_queue = i.job_queue
  LEFT JOIN fairshare.share_usage u ON u.job_queue = i.job_queue AND u.share_identifier = i.share_identifier
  LEFT JOIN held h ON h.job_queue = i.job_queue AND h.share_identifier = i.share_identifier
  LEFT JOIN waiting w ON w.job_queue = i.job_queue AND w.share_identifier = i.share_identifier;

-- The public current-state views: each its internal view, run as the
-- owner without JIT (see the top of this file).
DO $wrap$
DECLARE
	v text;
BEGIN
	FOREACH v IN ARRAY ARRAY['environment_utilization', 'queue_status', 'quota_share_status', 'fair_share_status']
	LOOP
		EXECUTE format($f$
			CREATE FUNCTION fairshare.%1$I() RETURNS SETOF fairshare.%2$I
			LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp SET jit = off
			AS 'SELECT * FROM fairshare.%2$I'$f$, v, '_' || v);
		EXECUTE format('CREATE VIEW fairshare.%1$I AS SELECT * FROM fairshare.%1$I()', v);
	END LOOP;
END
$wrap$;

COMMENT ON VIEW fairshare.environment_utilization IS
	'Per service environment and capacity unit (NUM_INSTANCES or an instance type): capacity, instances in use '
	'(SCHEDULED, STARTING and RUNNING jobs, also while stopping), room left, utilisation and the jobs waiting for it.';
COMMENT ON VIEW fairshare.queue_status IS
	'Per job queue: unfinished jobs by state, instances held and wanted, and the longest current wait.';
COMMENT ON VIEW fairshare.quota_share_status IS
	'Per quota share and capacity unit: its limit, instances held, borrowed (held beyond the limit), '
	'lent (its unused limit that other shares are using), and the jobs waiting in it.';
COMMENT ON VIEW fairshare.fair_share_status IS
	'Per fair share of a FAIR_SHARE queue: its weight, decayed usage (fairshare.share_usage), '
	'instances held and jobs waiting.';

------------------------------------------------------------------------------
-- History over a window: functions taking the window, views over the last
-- 24 hours.  The functions are SECURITY DEFINER (viewers have no right on
-- the tables) and plan each call with its window's values (EXECUTE ...
-- USING), so a short window is an index range scan of job_attempts or
-- jobs_finished_queue_idx.  Parallel workers cost more to start than they
-- save on a day of history, so they are off too.
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._check_window(since timestamptz, until timestamptz)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF since IS NULL OR until IS NULL OR since > until THEN
		RAISE EXCEPTION USING ERRCODE = '22023',
			MESSAGE = format('invalid window from %s to %s', coalesce(since::text, 'NULL'), coalesce(until::text, 'NULL')),
			HINT = 'Give since <= until, for example (now() - interval ''7 days'', now()).';
	END IF;
END
$$;

CREATE FUNCTION fairshare.job_time_stats(since timestamptz, until timestamptz DEFAULT now())
RETURNS TABLE (job_queue text, share text, scheduling_priority integer,
			   jobs_placed bigint, wait_p50_seconds double precision, wait_p90_seconds double precision,
			   wait_p99_seconds double precision, wait_max_seconds double precision,
			   attempts_finished bigint, run_p50_seconds double precision, run_p90_seconds double precision,
			   run_p99_seconds double precision, run_max_seconds double precision)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp
SET jit = off SET max_parallel_workers_per_gather = 0 AS $$
BEGIN
	PERFORM fairshare._check_window(since, until);
	RETURN QUERY EXECUTE $q$
	WITH waits AS (
		-- Wait: from becoming RUNNABLE to the first placement.
		SELECT a.job_queue, a.share, a.scheduling_priority,
			   extract(epoch FROM a.created_at - a.queued_at)::float8 AS seconds
		  FROM fairshare.job_attempts a
		 WHERE a.attempt = 1 AND a.created_at >= $1 AND a.created_at < $2
	), runs AS (
		-- Run: each attempt that started, from start to stop.
		SELECT a.job_queue, a.share, a.scheduling_priority,
			   extract(epoch FROM a.stopped_at - a.started_at)::float8 AS seconds
		  FROM fairshare.job_attempts a
		 WHERE a.stopped_at >= $1 AND a.stopped_at < $2 AND a.started_at IS NOT NULL
	), both_ AS (
		SELECT w.job_queue, w.share, w.scheduling_priority,
			   count(*) AS placed, percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY w.seconds) AS wp,
			   max(w.seconds) AS wmax,
			   NULL::bigint AS finished, NULL::float8[] AS rp, NULL::float8 AS rmax
		  FROM waits w GROUP BY 1, 2, 3
		UNION ALL
		SELECT r.job_queue, r.share, r.scheduling_priority,
			   NULL, NULL, NULL,
			   count(*), percentile_cont(ARRAY[0.5, 0.9, 0.99]) WITHIN GROUP (ORDER BY r.seconds), max(r.seconds)
		  FROM runs r GROUP BY 1, 2, 3
	)
	SELECT b.job_queue, b.share, b.scheduling_priority,
		   coalesce(max(b.placed), 0), max(b.wp[1]), max(b.wp[2]), max(b.wp[3]), max(b.wmax),
		   coalesce(max(b.finished), 0), max(b.rp[1]), max(b.rp[2]), max(b.rp[3]), max(b.rmax)
	  FROM both_ b
	 GROUP BY 1, 2, 3
	 ORDER BY 1, 2, 3
	$q$ USING since, until;
END
$$;
COMMENT ON FUNCTION fairshare.job_time_stats(timestamptz, timestamptz) IS
	'Wait times (RUNNABLE to first placement, for jobs first placed in the window) and run times (start to stop, '
	'for attempts that stopped in the window) per queue, share and priority: count, p50, p90, p99, max in seconds.';

CREATE VIEW fairshare.job_time_stats AS
SELECT * FROM fairshare.job_time_stats(now() - interval '24 hours', now());
COMMENT ON VIEW fairshare.job_time_stats IS
	'fairshare.job_time_stats() over the last 24 hours.';

CREATE FUNCTION fairshare.failures_by_hour(since timestamptz, until timestamptz DEFAULT now())
RETURNS TABLE (hour timestamptz, job_queue text, failed_jobs bigint, failed_attempts bigint,
			   preemptions bigint, capacity_failures bigint, stopped_attempts bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp
SET jit = off SET max_parallel_workers_per_gather = 0 AS $$
BEGIN
	PERFORM fairshare._check_window(since, until);
	RETURN QUERY EXECUTE $q$
	SELECT date_trunc('hour', x.at), x.job_queue,
		   sum(x.failed_job), sum(x.failed), sum(x.preempted), sum(x.capacity), sum(x.stopped)
	  FROM (
		SELECT j.stopped_at AS at, j.job_queue, 1 AS failed_job, 0 AS failed, 0 AS preempted, 0 AS capacity, 0 AS stopped
		  FROM fairshare.jobs j
		 WHERE j.status = 'FAILED' AND j.stopped_at >= $1 AND j.stopped_at < $2
		UNION ALL
		SELECT a.stopped_at, a.job_queue, 0, (a.outcome = 'FAILED')::int, (a.outcome = 'PREEMPTED')::int,
			   (a.outcome = 'CAPACITY')::int, (a.outcome = 'STOPPED')::int
		  FROM fairshare.job_attempts a
		 WHERE a.stopped_at >= $1 AND a.stopped_at < $2
		   AND a.outcome IN ('FAILED', 'PREEMPTED', 'CAPACITY', 'STOPPED')
	  ) x
	 GROUP BY 1, 2
	 ORDER BY 1, 2
	$q$ USING since, until;
END
$$;
COMMENT ON FUNCTION fairshare.failures_by_hour(timestamptz, timestamptz) IS
	'Per hour and queue: jobs that failed, attempts that SageMaker failed, preemptions, capacity failures, '
	'and attempts stopped (terminated or timed out).  Hours with none of them are left out.';

CREATE VIEW fairshare.failures_by_hour AS
SELECT * FROM fairshare.failures_by_hour(now() - interval '24 hours', now());
COMMENT ON VIEW fairshare.failures_by_hour IS
	'fairshare.failures_by_hour() over the last 24 hours.';

CREATE FUNCTION fairshare.throughput_by_hour(since timestamptz, until timestamptz DEFAULT now())
RETURNS TABLE (hour timestamptz, job_queue text, succeeded_jobs bigint, failed_jobs bigint,
			   attempts_finished bigint, instance_hours numeric)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp
SET jit = off SET max_parallel_workers_per_gather = 0 AS $$
BEGIN
	PERFORM fairshare._check_window(since, until);
	RETURN QUERY EXECUTE $q$
	SELECT date_trunc('hour', x.at), x.job_queue,
		   sum(x.succeeded)::bigint, sum(x.failed)::bigint, sum(x.attempts)::bigint,
		   round(sum(x.instance_seconds) / 3600, 2)
	  FROM (
		SELECT j.stopped_at AS at, j.job_queue, (j.status = 'SUCCEEDED')::int AS succeeded,
			   (j.status = 'FAILED')::int AS failed, 0 AS attempts, 0::numeric AS instance_seconds
		  FROM fairshare.jobs j
		 WHERE j.status IN ('SUCCEEDED', 'FAILED') AND j.stopped_at >= $1 AND j.stopped_at < $2
		UNION ALL
		SELECT a.stopped_at, a.job_queue, 0, 0, 1,
			   coalesce(a.instance_count * extract(epoch FROM a.stopped_at - a.started_at), 0)
		  FROM fairshare.job_attempts a
		 WHERE a.stopped_at >= $1 AND a.stopped_at < $2
	  ) x
	 GROUP BY 1, 2
	 ORDER BY 1, 2
	$q$ USING since, until;
END
$$;
COMMENT ON FUNCTION fairshare.throughput_by_hour(timestamptz, timestamptz) IS
	'Per hour and queue: jobs finished (succeeded, failed), attempts finished, and the instance-hours of the '
	'attempts that ended in that hour (instances x time from start to stop).';

CREATE VIEW fairshare.throughput_by_hour AS
SELECT * FROM fairshare.throughput_by_hour(now() - interval '24 hours', now());
COMMENT ON VIEW fairshare.throughput_by_hour IS
	'fairshare.throughput_by_hour() over the last 24 hours.';

CREATE VIEW fairshare._recent_failures AS
SELECT j.job_id, j.job_name, j.job_queue, coalesce(j.quota_share, j.share_identifier) AS share,
	   j.submitted_by, j.stopped_at AS failed_at, j.attempts, j.preemptions, j.status_reason
  FROM fairshare.jobs j
 WHERE j.status = 'FAILED' AND j.stopped_at >= now() - interval '24 hours';
CREATE FUNCTION fairshare.recent_failures() RETURNS SETOF fairshare._recent_failures
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp SET jit = off
AS 'SELECT * FROM fairshare._recent_failures';
CREATE VIEW fairshare.recent_failures AS SELECT * FROM fairshare.recent_failures();
COMMENT ON VIEW fairshare.recent_failures IS
	'Jobs that failed in the last 24 hours, with the reason.';

------------------------------------------------------------------------------
-- Privileges: viewers and admins read the views; nobody else.
------------------------------------------------------------------------------

REVOKE ALL ON fairshare._held_jobs, fairshare._waiting_jobs, fairshare._waiting_groups,
			   fairshare._environment_utilization, fairshare._queue_status, fairshare._quota_share_status,
			   fairshare._fair_share_status, fairshare._recent_failures FROM PUBLIC;
GRANT SELECT ON fairshare.environment_utilization, fairshare.queue_status,
				fairshare.quota_share_status, fairshare.fair_share_status,
				fairshare.job_time_stats, fairshare.failures_by_hour,
				fairshare.throughput_by_hour, fairshare.recent_failures
	TO fairshare_viewer, fairshare_admin;
REVOKE ALL ON FUNCTION fairshare.job_time_stats(timestamptz, timestamptz),
				fairshare.failures_by_hour(timestamptz, timestamptz),
				fairshare.throughput_by_hour(timestamptz, timestamptz),
				fairshare.environment_utilization(), fairshare.queue_status(),
				fairshare.quota_share_status(), fairshare.fair_share_status(),
				fairshare.recent_failures() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.job_time_stats(timestamptz, timestamptz),
				fairshare.failures_by_hour(timestamptz, timestamptz),
				fairshare.throughput_by_hour(timestamptz, timestamptz),
				fairshare.environment_utilization(), fairshare.queue_status(),
				fairshare.quota_share_status(), fairshare.fair_share_status(),
				fairshare.recent_failures()
	TO fairshare_viewer, fairshare_admin;
