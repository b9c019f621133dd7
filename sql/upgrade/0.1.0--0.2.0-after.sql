-- sql/upgrade/0.1.0--0.2.0-after.sql — the end of ALTER EXTENSION fairshare
-- UPDATE to 0.2.0: changes to 0.1.0's objects that use objects the new
-- parts (sql/parts/75_orphans.sql, 90_api.sql, 91_api_admin.sql,
-- 92_grants.sql) have just
-- made, in sql/parts order.  make appends it to sql/upgrade/0.1.0--0.2.0.sql
-- and those parts to form sql/fairshare--0.1.0--0.2.0.sql.

------------------------------------------------------------------------------
-- 10_catalog.sql: ListServiceJobs lists a queue's jobs of one status newest first
------------------------------------------------------------------------------

DROP INDEX fairshare.jobs_queue_status_idx;
CREATE INDEX jobs_queue_status_idx ON fairshare.jobs (job_queue, status, created_at, job_id);

------------------------------------------------------------------------------
-- 10_catalog.sql: each pass's check of attempts past attempt_duration_seconds
-- reads only the attempts that have one
------------------------------------------------------------------------------

CREATE INDEX jobs_time_limited_idx ON fairshare.jobs (job_id)
	WHERE status IN ('STARTING', 'RUNNING') AND attempt_duration_seconds IS NOT NULL;

------------------------------------------------------------------------------
-- 40_scheduler.sql: retry rules read "Received status from SageMaker:" with or
-- without a space; each pass finds the jobs of disabled queues and shares
-- from the disabled side, applies queue time limits and finishes deletions
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._normalize_status_reason(reason text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT regexp_replace(reason, '^Received status from SageMaker:\s*', 'Received status from SageMaker: ')
$$;

CREATE OR REPLACE FUNCTION fairshare.exit_action(evaluate_on_exit jsonb, status_reason text)
RETURNS text LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT upper(r ->> 'action')
	  FROM jsonb_array_elements(coalesce(evaluate_on_exit, '[]')) WITH ORDINALITY AS e(r, n),
		   LATERAL (SELECT fairshare._normalize_status_reason(r ->> 'on_status_reason') AS pattern,
						   fairshare._normalize_status_reason(status_reason) AS reason) x
	 WHERE CASE WHEN right(x.pattern, 1) = '*'
				THEN starts_with(x.reason, left(x.pattern, -1))
				ELSE x.reason = x.pattern END
	 ORDER BY n LIMIT 1
$$;

CREATE OR REPLACE FUNCTION fairshare._prepare_pass(max_new integer DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	-- A call moves at most this many jobs in each step, whoever calls it: a
	-- schedule() by hand after a sweep of a million submissions takes them
	-- in over several passes of bounded work (a few seconds each), as the
	-- dispatcher does with its smaller max_new.  max_new bounds only the
	-- new jobs: jobs a disabled queue holds move all at once up to cap.
	cap constant integer := 50000;
	lim constant integer := least(coalesce(max_new, cap), cap);
	left_work boolean := false;
	ids bigint[];
	queues text[];
	shares text[];
	share_ids text[];
	held_queues text[];
	held_shares text[];
	n bigint;
	taken bigint := 0;
	examine constant integer := least(greatest(16 * lim, 10000), 200000);
	last_id bigint;
	window_end bigint;
	passed_queues text[] := '{}';
	passed_shares text[] := '{}';
	dq record;
	ds record;
BEGIN
	IF max_new IS NOT NULL AND max_new < 1 THEN
		RAISE EXCEPTION 'max_new must be at least 1, not %', max_new
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- Rows another transaction holds locked (a user's open terminate_job or
	-- update_job_priority) are skipped, never waited for: the next pass
	-- takes them.  A pass must not stall on a session left idle in its
	-- transaction.
	--
	-- Each step first locks the jobs it moves and collects their ids (read
	-- once), then updates exactly those through the primary key
	-- (job_id = ANY or a join with unnest).  Linear in the jobs moved
	-- whatever the planner believes: the update used to join a locking CTE
	-- with jobs filtered on status, and with statistics that said no job
	-- was SUBMITTED the planner rescanned the CTE once per new job -- a
	-- schedule() after an INSERT of 100,000 jobs had not returned after
	-- 5 minutes (bench/update prints the intake's cost at 10k and 1M).
	--
	-- New jobs: RUNNABLE, or PENDING while their queue or quota share is
	-- disabled.  (jobs_new_idx: only SUBMITTED and PENDING rows, by job_id.)
	--
	-- Or FAILED, saying why, when their queue no longer fits them: the
	-- submission trigger checked the queue's policy and quota share
	-- without locking them (the queue row is only KEY SHARE locked, by the
	-- foreign key), so an admin could change the policy or delete the
	-- share while the INSERT was not yet committed.  Such a job would wait
	-- for good: no pass loads a share-less job of a fair-share queue, or
	-- one of a share that is gone.
	--
	-- And only against configuration no uncommitted change holds: the
	-- jobs' queues and quota shares are share-locked first, so that an
	-- admin's change to them waits for this pass (its guard then sees the
	-- jobs), and the jobs of one a change in flight holds stay SUBMITTED
	-- for a later pass.  (A share whose deletion has committed is absent,
	-- not held: its jobs are refused.)
	--
	-- So are the jobs of a queue or share that DeleteJobQueue or
	-- DeleteQuotaShare has begun to delete: the deletion terminated the
	-- jobs it saw, and one whose INSERT was still open would otherwise run
	-- in a queue on its way out, the deletion waiting for its training.
	--
	-- The jobs of a queue or share a change holds are passed over, not
	-- waited for: a round that meets them takes the next jobs without
	-- them, so one admin's transaction left open delays its queue's jobs,
	-- not every queue's behind them (up to three more rounds a pass, each
	-- passing over what the rounds before found held, through a bounded
	-- number of new jobs: behind a held backlog longer than that, other
	-- queues' jobs wait for the change to commit).
	FOR intake_round IN 1..4 LOOP
		IF intake_round = 1 THEN
			SELECT array_agg(w.job_id ORDER BY w.job_id), array_agg(w.job_queue ORDER BY w.job_id),
				   array_agg(w.quota_share ORDER BY w.job_id), array_agg(w.share_identifier ORDER BY w.job_id)
			  INTO ids, queues, shares, share_ids
			  FROM (SELECT j.job_id, j.job_queue, j.quota_share, j.share_identifier FROM fairshare.jobs j
					 WHERE j.status = 'SUBMITTED'
					 ORDER BY j.job_id LIMIT lim FOR NO KEY UPDATE SKIP LOCKED) w;
			EXIT WHEN ids IS NULL;
			last_id := ids[cardinality(ids)];
		ELSE
			-- The next rounds go on after the jobs seen, through at most
			-- `examine' more new jobs each, so that a long backlog of a held
			-- queue costs a bounded read, not a read of all of it.
			window_end := (SELECT max(c.job_id)
							 FROM (SELECT c.job_id FROM fairshare.jobs c
									WHERE c.status = 'SUBMITTED' AND c.job_id > last_id
									ORDER BY c.job_id LIMIT examine) c);
			EXIT WHEN window_end IS NULL;
			SELECT array_agg(w.job_id ORDER BY w.job_id), array_agg(w.job_queue ORDER BY w.job_id),
				   array_agg(w.quota_share ORDER BY w.job_id), array_agg(w.share_identifier ORDER BY w.job_id)
			  INTO ids, queues, shares, share_ids
			  FROM (SELECT j.job_id, j.job_queue, j.quota_share, j.share_identifier FROM fairshare.jobs j
					 WHERE j.status = 'SUBMITTED' AND j.job_id > last_id AND j.job_id <= window_end
					   AND j.job_queue <> ALL (passed_queues)
					   AND (j.quota_share IS NULL OR j.job_queue || '/' || j.quota_share <> ALL (passed_shares))
					 ORDER BY j.job_id LIMIT lim - taken FOR NO KEY UPDATE SKIP LOCKED) w;
			-- a round that took fewer than it asked for read its whole window
			last_id := CASE WHEN ids IS NULL OR cardinality(ids) < lim - taken THEN window_end
							ELSE ids[cardinality(ids)] END;
			CONTINUE WHEN ids IS NULL;
		END IF;
		held_queues := ARRAY(SELECT q.name FROM fairshare.job_queues q
							  WHERE q.name = ANY (ARRAY(SELECT DISTINCT u FROM unnest(queues) u))
							  FOR SHARE SKIP LOCKED);
		held_shares := ARRAY(SELECT qs.job_queue || '/' || qs.name FROM fairshare.quota_shares qs
							  WHERE qs.job_queue || '/' || qs.name
									= ANY (ARRAY(SELECT DISTINCT u.q || '/' || u.s FROM unnest(queues, shares) AS u(q, s)
												  WHERE u.s IS NOT NULL))
							  FOR SHARE SKIP LOCKED);
		-- EXECUTE: planned for the number of jobs it gets, not generically.
		EXECUTE $q$
		UPDATE fairshare.jobs j
		   SET status = CASE WHEN b.refused IS NOT NULL THEN 'FAILED'
							 WHEN b.blocked IS NULL THEN 'RUNNABLE'
							 ELSE 'PENDING' END::fairshare.job_status,
			   status_reason = coalesce(b.refused, b.blocked)
		  FROM (SELECT w.job_id,
					   CASE WHEN (p.kind IS NOT DISTINCT FROM 'FAIR_SHARE') <> (w.share_identifier IS NOT NULL)
								 OR (p.kind IS NOT DISTINCT FROM 'QUOTA_SHARE') <> (w.quota_share IS NOT NULL)
							THEN format('job queue "%s" changed its scheduling policy to %s while this job was being '
										'submitted; submit it again (through the API, with a new clientToken)',
										q.name, coalesce(p.kind, 'FIFO'))
							WHEN w.quota_share IS NOT NULL AND qs.name IS NULL
							THEN format('quota share "%s" of job queue "%s" was deleted while this job was being '
										'submitted', w.quota_share, q.name)
							WHEN q.deleting_since IS NOT NULL
							THEN format('job queue "%s" began to be deleted while this job was being submitted',
										q.name)
							WHEN qs.deleting_since IS NOT NULL
							THEN format('quota share "%s" of job queue "%s" began to be deleted while this job '
										'was being submitted', qs.name, q.name)
					   END AS refused,
					   CASE WHEN q.state <> 'ENABLED' THEN format('job queue "%s" is DISABLED', q.name)
							WHEN qs.state <> 'ENABLED' THEN format('quota share "%s" is DISABLED', qs.name)
					   END AS blocked
				  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[])
						 AS w(job_id, job_queue, quota_share, share_identifier)
				  JOIN fairshare.job_queues q ON q.name = w.job_queue
				  LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
				  LEFT JOIN fairshare.quota_shares qs ON qs.job_queue = w.job_queue AND qs.name = w.quota_share
				 WHERE w.job_queue = ANY ($5)
				   AND (qs.name IS NULL OR w.job_queue || '/' || w.quota_share = ANY ($6))) b
		 WHERE j.job_id = b.job_id
		$q$ USING ids, queues, shares, share_ids, held_queues, held_shares;
		GET DIAGNOSTICS n = ROW_COUNT;
		taken := taken + n;
		-- a full batch, or every job of the first round taken in (nothing
		-- held was met)
		EXIT WHEN taken >= lim OR (intake_round = 1 AND n = cardinality(ids));
		passed_queues := passed_queues || ARRAY(SELECT DISTINCT u FROM unnest(queues) u
												  WHERE u <> ALL (held_queues));
		passed_shares := passed_shares || ARRAY(SELECT DISTINCT u.q || '/' || u.s
												  FROM unnest(queues, shares) AS u(q, s)
												 WHERE u.s IS NOT NULL AND u.q || '/' || u.s <> ALL (held_shares)
												   AND EXISTS (SELECT 1 FROM fairshare.quota_shares qs
																WHERE qs.job_queue = u.q AND qs.name = u.s));
	END LOOP;
	left_work := taken >= lim AND EXISTS (SELECT 1 FROM fairshare.jobs WHERE status = 'SUBMITTED');

	-- Pending jobs whose queue and quota share are enabled again.
	ids := ARRAY(SELECT p.job_id FROM fairshare.jobs p
				   JOIN fairshare.job_queues q ON q.name = p.job_queue
				   LEFT JOIN fairshare.quota_shares qs ON qs.job_queue = p.job_queue AND qs.name = p.quota_share
				  WHERE p.status = 'PENDING' AND q.state = 'ENABLED' AND coalesce(qs.state, 'ENABLED') = 'ENABLED'
				  ORDER BY p.job_id LIMIT cap
				    FOR NO KEY UPDATE OF p SKIP LOCKED);
	IF cardinality(ids) > 0 THEN
		UPDATE fairshare.jobs j SET status = 'RUNNABLE', status_reason = NULL WHERE j.job_id = ANY (ids);
		left_work := left_work OR cardinality(ids) >= cap;
	END IF;

	-- Waiting jobs of a queue, then of a quota share, that was disabled
	-- since (a job whose queue and share are both disabled names its queue,
	-- as for new jobs).  One statement per disabled queue or share --
	-- usually none -- each reaching that queue's or share's RUNNABLE jobs
	-- with a plan made for it (an index scan of a share's jobs).  A join
	-- from all jobs (or one statement with "queue disabled OR share
	-- disabled", 7ab66e6) reads every RUNNABLE job on every pass
	-- (bench/schedule: 6x slower at a million waiting jobs); a join from
	-- the disabled side is costed on the small tables' guessed sizes, which
	-- can pick the same scan, or JIT-compile it on every pass.
	FOR dq IN SELECT q.name FROM fairshare.job_queues q WHERE q.state <> 'ENABLED' LOOP
		ids := ARRAY(SELECT r.job_id FROM fairshare.jobs r
					  WHERE r.job_queue = dq.name AND r.status = 'RUNNABLE'
					  LIMIT cap FOR NO KEY UPDATE SKIP LOCKED);
		IF cardinality(ids) > 0 THEN
			UPDATE fairshare.jobs j
			   SET status = 'PENDING', status_reason = format('job queue "%s" is DISABLED', dq.name)
			 WHERE j.job_id = ANY (ids);
			left_work := left_work OR cardinality(ids) >= cap;
		END IF;
	END LOOP;
	FOR ds IN SELECT qs.job_queue, qs.name FROM fairshare.quota_shares qs WHERE qs.state <> 'ENABLED' LOOP
		ids := ARRAY(SELECT r.job_id FROM fairshare.jobs r
					  WHERE r.job_queue = ds.job_queue AND r.quota_share = ds.name AND r.status = 'RUNNABLE'
					  LIMIT cap FOR NO KEY UPDATE SKIP LOCKED);
		IF cardinality(ids) > 0 THEN
			UPDATE fairshare.jobs j
			   SET status = 'PENDING', status_reason = format('quota share "%s" is DISABLED', ds.name)
			 WHERE j.job_id = ANY (ids);
			left_work := left_work OR cardinality(ids) >= cap;
		END IF;
	END LOOP;

	-- Attempts past their attempt_duration_seconds: ask for the stop.
	WITH w AS MATERIALIZED (
		SELECT job_id FROM fairshare.jobs
		 WHERE status IN ('STARTING', 'RUNNING') AND attempt_duration_seconds IS NOT NULL
		   AND started_at + make_interval(secs => attempt_duration_seconds) <= now()
		   AND stop_kind IS DISTINCT FROM 'TERMINATE' AND stop_kind IS DISTINCT FROM 'TIMEOUT'
		   FOR NO KEY UPDATE SKIP LOCKED)
	UPDATE fairshare.jobs j
	   SET stop_kind = 'TIMEOUT', stop_requested_at = now(), preempted_for = NULL,
		   stop_reason = format('Attempt %s timed out after %s seconds (attempt_duration_seconds)',
								j.attempts, j.attempt_duration_seconds)
	  FROM w
	 WHERE j.job_id = w.job_id;

	-- Queue time limits (jobStateTimeLimitActions, 91_api_admin.sql): only
	-- when some queue has one.  Then deletions of queues and quota shares
	-- whose last jobs have stopped.
	IF EXISTS (SELECT 1 FROM fairshare.job_state_time_limit_actions) THEN
		PERFORM fairshare._apply_time_limit_actions();
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.job_queues WHERE deleting_since IS NOT NULL)
	   OR EXISTS (SELECT 1 FROM fairshare.quota_shares WHERE deleting_since IS NOT NULL) THEN
		PERFORM fairshare._finish_deletions();
	END IF;

	RETURN left_work;
END
$$;

------------------------------------------------------------------------------
-- 80_housekeeping.sql: the ORPHANED_TRAINING_JOBS alert rule
------------------------------------------------------------------------------

-- 0.1.0 let a rule of any kind take a shipped rule's name (after that rule
-- was deleted); pg_dump leaves rules of those names out, so a restore
-- would lose it, and one named orphaned_training_jobs would leave the
-- installation without the new rule.  Stop, and say how to rename it.
DO $names$
DECLARE
	r record;
BEGIN
	SELECT a.name, a.kind INTO r FROM fairshare.alert_rules a
	 WHERE a.name IN ('job_waiting', 'failure_burst', 'idle_capacity', 'share_starved', 'orphaned_training_jobs')
	   AND a.name <> pg_catalog.lower(a.kind)
	 ORDER BY a.name LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'alert rule "%" is a % rule under the name fairshare keeps for its shipped % rule',
			r.name, r.kind, pg_catalog.upper(r.name)
			USING ERRCODE = '23514',
				  HINT = pg_catalog.format('Rename it, then update again: UPDATE fairshare.alert_rules SET name = %L WHERE name = %L;',
										   r.name || '_' || pg_catalog.lower(r.kind), r.name);
	END IF;
END
$names$;

ALTER TABLE fairshare.alert_rules DROP CONSTRAINT alert_rules_kind_check;
ALTER TABLE fairshare.alert_rules ADD CONSTRAINT alert_rules_kind_check
	CHECK (kind IN ('JOB_WAITING', 'FAILURE_BURST', 'IDLE_CAPACITY', 'SHARE_STARVED', 'ORPHANED_TRAINING_JOBS'));
COMMENT ON TABLE fairshare.alert_rules IS
	'What fairshare.evaluate_alerts() checks.  threshold: JOB_WAITING how long a job may stay RUNNABLE; '
	'FAILURE_BURST the window in which min_count failed attempts raise it; IDLE_CAPACITY and SHARE_STARVED '
	'how long the condition must last; ORPHANED_TRAINING_JOBS how long an orphaned training job must have been '
	'seen.  job_queue / service_environment narrow a rule (NULL = all).';

CREATE OR REPLACE FUNCTION fairshare._validate_alert_rule()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	PERFORM fairshare._check_name('alert rule', NEW.name);
	IF NEW.kind IS NULL OR NEW.kind NOT IN ('JOB_WAITING', 'FAILURE_BURST', 'IDLE_CAPACITY', 'SHARE_STARVED',
											'ORPHANED_TRAINING_JOBS') THEN
		PERFORM fairshare._reject('22023',
			format('invalid alert rule kind "%s"', coalesce(NEW.kind, 'NULL')),
			'The kind is JOB_WAITING, FAILURE_BURST, IDLE_CAPACITY, SHARE_STARVED or ORPHANED_TRAINING_JOBS.');
	END IF;
	-- The shipped rules' names are their kinds': pg_dump leaves the rules of
	-- those names out (CREATE EXTENSION makes them again), so another kind
	-- under one of them would be lost by a restore.
	IF NEW.name IN ('job_waiting', 'failure_burst', 'idle_capacity', 'share_starved', 'orphaned_training_jobs')
	   AND NEW.name <> lower(NEW.kind) THEN
		PERFORM fairshare._reject('23514',
			format('alert rule name "%s" is kept for the shipped %s rule; this rule is %s', NEW.name, upper(NEW.name), NEW.kind),
			'Give the rule another name: pg_dump leaves the shipped rules out, and a restore makes them as shipped.');
	END IF;
	IF NEW.kind = 'ORPHANED_TRAINING_JOBS' AND (NEW.job_queue IS NOT NULL OR NEW.service_environment IS NOT NULL) THEN
		PERFORM fairshare._reject('23514',
			format('alert rule "%s" is ORPHANED_TRAINING_JOBS: it cannot be narrowed (an orphan has no job, so no queue)', NEW.name));
	END IF;
	IF NEW.threshold IS NULL OR NEW.threshold < interval '0' OR NEW.threshold > interval '30 days' THEN
		PERFORM fairshare._reject('22023',
			format('threshold %s of alert rule "%s" is out of range', coalesce(NEW.threshold::text, 'NULL'), NEW.name),
			'threshold is an interval from 0 to 30 days.');
	END IF;
	IF NEW.kind = 'FAILURE_BURST' THEN
		NEW.min_count := coalesce(NEW.min_count, 5);
		IF NEW.threshold = interval '0' THEN
			PERFORM fairshare._reject('22023',
				format('alert rule "%s" is a FAILURE_BURST with an empty window', NEW.name),
				'threshold is the window in which min_count failed attempts raise the alert, for example 15 minutes.');
		END IF;
	ELSIF NEW.min_count IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('min_count applies only to FAILURE_BURST rules; alert rule "%s" is %s', NEW.name, NEW.kind));
	END IF;
	IF NEW.job_queue IS NOT NULL AND NOT EXISTS (SELECT 1 FROM fairshare.job_queues WHERE name = NEW.job_queue) THEN
		PERFORM fairshare._reject('23503', format('job queue "%s" does not exist', NEW.job_queue));
	END IF;
	IF NEW.service_environment IS NOT NULL
	   AND NOT EXISTS (SELECT 1 FROM fairshare.service_environments WHERE name = NEW.service_environment) THEN
		PERFORM fairshare._reject('23503', format('service environment "%s" does not exist', NEW.service_environment));
	END IF;
	IF NEW.kind = 'IDLE_CAPACITY' AND NEW.job_queue IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('alert rule "%s" is IDLE_CAPACITY: narrow it by service_environment, not job_queue', NEW.name));
	END IF;
	IF NEW.kind <> 'IDLE_CAPACITY' AND NEW.service_environment IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('alert rule "%s" is %s: narrow it by job_queue, not service_environment', NEW.name, NEW.kind));
	END IF;
	IF NEW.kind = 'SHARE_STARVED' AND NEW.job_queue IS NOT NULL
	   AND NOT EXISTS (SELECT 1 FROM fairshare.job_queues q JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
					    WHERE q.name = NEW.job_queue AND p.kind = 'QUOTA_SHARE') THEN
		PERFORM fairshare._reject('23514',
			format('alert rule "%s" is SHARE_STARVED but job queue "%s" has no quota shares', NEW.name, NEW.job_queue),
			'SHARE_STARVED watches the quota shares of QUOTA_SHARE queues.');
	END IF;
	IF NEW.enabled IS NULL THEN
		NEW.enabled := true;
	END IF;
	RETURN NEW;
END
$$;

INSERT INTO fairshare.alert_rules (name, kind, threshold, min_count, severity, description) VALUES
	('orphaned_training_jobs', 'ORPHANED_TRAINING_JOBS', '0', NULL, 'CRITICAL',
	 'A training job at SageMaker carries this installation''s tag but no job knows it (a failover lost the end of the WAL).')
ON CONFLICT (name) DO NOTHING;

CREATE OR REPLACE FUNCTION fairshare._alert_candidates()
RETURNS SETOF fairshare.alert_candidate LANGUAGE sql VOLATILE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	-- What a scheduling pass would place now (a dry run: it writes nothing
	-- and takes no pass lock), only when an IDLE_CAPACITY rule asks.  The
	-- scheduler's own answer to "could a waiting job use this room?" knows
	-- every rule a query here would have to repeat: each capacity limit of
	-- the pair, quota limits and reserves, the compute reservation, room
	-- held for nominees, capacity back-offs.
	WITH placeable AS MATERIALIZED (
		SELECT d.job_id, d.service_environment, d.instance_type, j.instance_count
		  FROM fairshare.schedule(true) d
		  JOIN fairshare.jobs j ON j.job_id = d.job_id
		 WHERE d.action = 'PLACE'
		   AND EXISTS (SELECT 1 FROM fairshare.alert_rules r WHERE r.enabled AND r.kind = 'IDLE_CAPACITY'))
	-- JOB_WAITING: per queue and share, the jobs RUNNABLE longer than the
	-- threshold (since they last became RUNNABLE).
	SELECT r.name, w.job_queue || coalesce(':' || w.share, ''), w.job_queue, w.share, NULL, NULL,
		   format('%s %s in queue %s%s %s been RUNNABLE for more than %s; the longest waiting, job %s, for %s',
				  w.jobs, CASE WHEN w.jobs = 1 THEN 'job' ELSE 'jobs' END, w.job_queue,
				  coalesce(' (share ' || w.share || ')', ''), CASE WHEN w.jobs = 1 THEN 'has' ELSE 'have' END,
				  fairshare._human_duration(r.threshold), w.oldest_job, fairshare._human_duration(now() - w.since)),
		   jsonb_build_object('jobs', w.jobs, 'oldest_job_id', w.oldest_job,
							  'threshold_seconds', extract(epoch FROM r.threshold)::bigint)
	  FROM fairshare.alert_rules r
	 CROSS JOIN LATERAL (
		SELECT j.job_queue, coalesce(j.quota_share, j.share_identifier) AS share, count(*) AS jobs,
			   min(j.waiting_since) AS since,
			   (array_agg(j.job_id ORDER BY j.waiting_since, j.job_id))[1] AS oldest_job
		  FROM fairshare._waiting_jobs j
		 WHERE j.waiting_since < now() - r.threshold
		   AND (r.job_queue IS NULL OR j.job_queue = r.job_queue)
		 GROUP BY 1, 2) w
	 WHERE r.enabled AND r.kind = 'JOB_WAITING'
	UNION ALL
	-- FAILURE_BURST: per queue, attempts SageMaker failed within the window.
	SELECT r.name, f.job_queue, f.job_queue, NULL, NULL, NULL,
		   format('%s attempts in queue %s failed within %s (the rule raises at %s); most common reason: %s',
				  f.failures, f.job_queue, fairshare._human_duration(r.threshold), r.min_count,
				  coalesce(f.reason, 'none given')),
		   jsonb_build_object('failed_attempts', f.failures, 'window_seconds', extract(epoch FROM r.threshold)::bigint,
							  'min_count', r.min_count, 'top_reason', f.reason, 'last_job_id', f.last_job)
	  FROM fairshare.alert_rules r
	 CROSS JOIN LATERAL (
		SELECT a.job_queue, count(*) AS failures,
			   left(mode() WITHIN GROUP (ORDER BY a.status_reason), 200) AS reason,
			   max(a.job_id) AS last_job
		  FROM fairshare.job_attempts a
		 WHERE a.stopped_at >= now() - r.threshold AND a.outcome = 'FAILED'
		   AND (r.job_queue IS NULL OR a.job_queue = r.job_queue)
		 GROUP BY 1
		HAVING count(*) >= r.min_count) f
	 WHERE r.enabled AND r.kind = 'FAILURE_BURST'
	UNION ALL
	-- IDLE_CAPACITY: free room of an environment unit (not held for a
	-- nominated job) in which the scheduler would place waiting jobs now.
	-- Lasting the threshold, that means passes are not running (the
	-- dispatcher is down, or not in this database).
	SELECT r.name, u.service_environment || ':' || u.capacity_unit, NULL, NULL,
		   u.service_environment, u.capacity_unit,
		   format('%s of %s instances (%s) of environment %s are free while %s %s that a scheduling pass would place there now; the smallest needs %s',
				  u.free - u.nominated, u.capacity, u.capacity_unit, u.service_environment, p.jobs,
				  CASE WHEN p.jobs = 1 THEN 'job waits' ELSE 'jobs wait' END, p.smallest),
		   jsonb_build_object('free', u.free - u.nominated, 'capacity', u.capacity, 'in_use', u.in_use,
							  'waiting_jobs', p.jobs, 'smallest_waiting_job', p.smallest,
							  'threshold_seconds', extract(epoch FROM r.threshold)::bigint)
	  FROM fairshare.alert_rules r
	  JOIN fairshare._environment_utilization u
		ON r.service_environment IS NULL OR u.service_environment = r.service_environment
	 CROSS JOIN LATERAL (
		SELECT count(*) AS jobs, min(pl.instance_count) AS smallest
		  FROM placeable pl
		 WHERE pl.service_environment = u.service_environment
		   AND (u.capacity_unit = 'NUM_INSTANCES' OR pl.instance_type = u.capacity_unit)) p
	 WHERE r.enabled AND r.kind = 'IDLE_CAPACITY'
	   AND u.state = 'ENABLED' AND u.capacity IS NOT NULL AND p.jobs > 0
	UNION ALL
	-- SHARE_STARVED: a quota share below its limit with waiting jobs that
	-- fit in the rest of its guarantee.
	SELECT r.name, s.job_queue || ':' || s.quota_share || ':' || s.capacity_unit,
		   s.job_queue, s.quota_share, NULL, s.capacity_unit,
		   format('quota share %s of queue %s holds %s of its %s guaranteed instances (%s) while %s waiting %s in the rest',
				  s.quota_share, s.job_queue, s.held, s.share_limit, s.capacity_unit, s.guaranteed_waiting_jobs,
				  CASE WHEN s.guaranteed_waiting_jobs = 1 THEN 'job fits' ELSE 'jobs fit' END),
		   jsonb_build_object('held', s.held, 'share_limit', s.share_limit, 'borrowed_by_others', s.lent,
							  'guaranteed_waiting_jobs', s.guaranteed_waiting_jobs, 'waiting_jobs', s.waiting_jobs,
							  'threshold_seconds', extract(epoch FROM r.threshold)::bigint)
	  FROM fairshare.alert_rules r
	  JOIN fairshare._quota_share_status s ON r.job_queue IS NULL OR s.job_queue = r.job_queue
	  JOIN fairshare.job_queues q ON q.name = s.job_queue
	 WHERE r.enabled AND r.kind = 'SHARE_STARVED'
	   AND s.state = 'ENABLED' AND q.state = 'ENABLED'
	   AND s.share_limit IS NOT NULL AND s.held < s.share_limit AND s.guaranteed_waiting_jobs > 0
	UNION ALL
	-- ORPHANED_TRAINING_JOBS: each training job the last sweep found with
	-- this installation's tag that no job knows.
	SELECT r.name, o.training_job_name, NULL, NULL, NULL, NULL,
		   format('training job %s (%s) at SageMaker carries this installation''s tag but no job knows it%s; '
				  'fairshare will not follow or stop it',
				  o.training_job_name, coalesce(o.training_job_status, 'status unknown'),
				  coalesce(' (its fairshare:job-id tag says job ' || o.job_id_tag || ', which this database does not have, or has given to a later job)', '')),
		   jsonb_build_object('training_job_name', o.training_job_name, 'training_job_arn', o.training_job_arn,
							  'training_job_status', o.training_job_status, 'job_id_tag', o.job_id_tag,
							  'first_seen', o.first_seen)
	  FROM fairshare.alert_rules r
	  JOIN fairshare.orphaned_training_jobs o ON now() - o.first_seen >= r.threshold
	 WHERE r.enabled AND r.kind = 'ORPHANED_TRAINING_JOBS'
$$;

CREATE OR REPLACE FUNCTION fairshare.evaluate_alerts()
RETURNS SETOF fairshare.alert_events
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp SET jit = off AS $$
DECLARE
	cands fairshare.alert_candidate[];
	a fairshare.alert_events;
BEGIN
	-- One evaluation at a time: pg_cron's and one made by hand may overlap.
	PERFORM fairshare._lock('alert evaluation');

	SELECT coalesce(array_agg(c), '{}') INTO cands FROM fairshare._alert_candidates() c;

	-- Conditions that no longer hold end their episode: the alert, if one
	-- was raised, is resolved.
	WITH ended AS (
		DELETE FROM fairshare.alert_conditions ac
		 WHERE NOT EXISTS (SELECT 1 FROM unnest(cands) n
							WHERE n.rule_name = ac.rule_name AND n.subject = ac.subject)
		RETURNING ac.alert_id)
	UPDATE fairshare.alert_events e SET resolved_at = now()
	  FROM ended WHERE e.alert_id = ended.alert_id AND e.resolved_at IS NULL;

	INSERT INTO fairshare.alert_conditions AS ac (rule_name, subject, since, last_seen)
	SELECT n.rule_name, n.subject, now(), now() FROM unnest(cands) n
	ON CONFLICT (rule_name, subject) DO UPDATE SET last_seen = excluded.last_seen;

	-- Raise an alert for each episode that has none yet and has lasted long
	-- enough: at once for JOB_WAITING and FAILURE_BURST (their threshold is
	-- in the condition itself), after threshold for the others.
	FOR a IN
		WITH due AS (
			SELECT n.*, r.kind, r.severity, r.threshold, ac.since
			  FROM fairshare.alert_conditions ac
			  JOIN unnest(cands) n ON n.rule_name = ac.rule_name AND n.subject = ac.subject
			  JOIN fairshare.alert_rules r ON r.name = ac.rule_name
			 WHERE ac.alert_id IS NULL
			   AND (r.kind IN ('JOB_WAITING', 'FAILURE_BURST', 'ORPHANED_TRAINING_JOBS') OR now() - ac.since >= r.threshold)
			 ORDER BY ac.rule_name, ac.subject)
		INSERT INTO fairshare.alert_events
			(rule_name, kind, severity, subject, job_queue, share, service_environment, capacity_unit,
			 message, details, condition_since)
		SELECT d.rule_name, d.kind, d.severity, d.subject, d.job_queue, d.share, d.service_environment,
			   d.capacity_unit,
			   d.message || CASE WHEN d.kind IN ('IDLE_CAPACITY', 'SHARE_STARVED')
								 THEN ', for more than ' || fairshare._human_duration(d.threshold) ELSE '' END,
			   d.details, d.since
		  FROM due d
		RETURNING *
	LOOP
		UPDATE fairshare.alert_conditions SET alert_id = a.alert_id
		 WHERE rule_name = a.rule_name AND subject = a.subject;
		PERFORM pg_notify('fairshare_alerts', fairshare.alert_payload(a)::text);
		RETURN NEXT a;
	END LOOP;
END
$$;

------------------------------------------------------------------------------
-- 95_dump.sql: pg_dump keeps the installation id and the orphans found; the
-- default alert rules it leaves out gain the new one
------------------------------------------------------------------------------

SELECT pg_catalog.pg_extension_config_dump('fairshare.installation', '');
SELECT pg_catalog.pg_extension_config_dump('fairshare.orphan_sweep', '');
SELECT pg_catalog.pg_extension_config_dump('fairshare.alert_rules',
	$$WHERE name NOT IN ('job_waiting', 'failure_burst', 'idle_capacity', 'share_starved',
							'orphaned_training_jobs')$$);

------------------------------------------------------------------------------
-- cron_jobs.c: every name in pg_cron's commands is schema-qualified; the jobs
-- 0.1.0 scheduled get the new command when this transaction commits.  Only
-- the jobs that are there: one the operator removed stays removed.  The
-- function exists for this call only.
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._housekeeping_update()
RETURNS void
AS 'MODULE_PATHNAME', 'fairshare_housekeeping_update'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
REVOKE ALL ON FUNCTION fairshare._housekeeping_update() FROM PUBLIC;
SELECT fairshare._housekeeping_update();
DROP FUNCTION fairshare._housekeeping_update();
