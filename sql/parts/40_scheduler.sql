-- 40_scheduler.sql — the scheduler's state and SQL functions (docs/scheduling.md,
-- docs/lifecycle.md, docs/dispatcher.md): decayed fair-share usage, capacity back-offs,
-- fairshare.apply_status(), and the C functions schedule(), queue_snapshot()
-- and explain() over the pure core in src/scheduler/.

-- Decayed usage U of each fair share (docs/scheduling.md, 'Fair-share queues'),
-- written by every pass.
CREATE TABLE fairshare.share_usage (
	job_queue			text NOT NULL REFERENCES fairshare.job_queues (name) ON DELETE CASCADE,
	share_identifier	text NOT NULL,
	usage				double precision NOT NULL DEFAULT 0 CHECK (usage >= 0),
	updated_at			timestamptz NOT NULL,
	PRIMARY KEY (job_queue, share_identifier)
);
COMMENT ON TABLE fairshare.share_usage IS
	'Decayed usage of each fair share, in instances, as of updated_at (half-life share_decay_seconds).';

-- (environment, instance type) pairs a job skips after a capacity failure
-- there (docs/scheduling.md, 'Instance-type fallback'), until `until`.
CREATE TABLE fairshare.capacity_backoffs (
	job_id				bigint NOT NULL REFERENCES fairshare.jobs (job_id) ON DELETE CASCADE,
	service_environment	text NOT NULL,
	instance_type		text NOT NULL,
	until				timestamptz NOT NULL,
	reason				text,
	PRIMARY KEY (job_id, service_environment, instance_type)
);
COMMENT ON TABLE fairshare.capacity_backoffs IS
	'Placements a job skips for fairshare.capacity_backoff after SageMaker had no capacity for them.';

-- SageMaker's secondary status as one of our states (docs/dispatcher.md,
-- 'Status mapping').
-- NULL: no change (Starting, Pending, or a status we do not know).
CREATE FUNCTION fairshare.running_state(secondary_status text)
RETURNS fairshare.job_status LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT CASE
		WHEN secondary_status IN ('Training', 'Uploading') THEN 'RUNNING'::fairshare.job_status
		WHEN secondary_status IN ('LaunchingMLInstances', 'PreparingTrainingStack',
								  'Downloading', 'DownloadingTrainingImage') THEN 'STARTING'
	END
$$;

-- A failure for lack of capacity: no attempt is spent, the pair backs off.
-- Known by how the reason begins -- SageMaker's CapacityError, an
-- InsufficientCapacity... error, a refused create's ResourceLimitExceeded --
-- and never by words further in: those may be the job's own (an
-- AlgorithmError carries the training script's failure text, a ClientError
-- quotes the request's S3 URIs), and a job whose own text named a capacity
-- error would be retried without end, each time a new billed training job,
-- spending no attempt.
CREATE FUNCTION fairshare.is_capacity_failure(failure_reason text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT failure_reason LIKE 'CapacityError%'
		OR failure_reason LIKE 'ResourceLimitExceeded%'
		OR failure_reason LIKE 'InsufficientCapacity%'
$$;

-- "Received status from SageMaker:" is followed by one space in the reasons
-- fairshare writes (as AWS Batch documents them), but the SageMaker SDK's
-- default rule reads "Received status from SageMaker:InternalServerError..."
-- with none: whatever white space follows that prefix counts as one space.
-- exit_action() applies it to both the rule and the reason, so either form
-- of a rule matches the same failures.
CREATE FUNCTION fairshare._normalize_status_reason(reason text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT regexp_replace(reason, '^Received status from SageMaker:\s*', 'Received status from SageMaker: ')
$$;

-- The first evaluate_on_exit action whose on_status_reason matches, or NULL.
-- A pattern ending in * matches by prefix; otherwise exactly (case matters),
-- both read through _normalize_status_reason().
CREATE FUNCTION fairshare.exit_action(evaluate_on_exit jsonb, status_reason text)
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

CREATE FUNCTION fairshare.apply_status(job_id bigint, describe_response jsonb)
RETURNS fairshare.job_status LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
	sm_status text;
	secondary text;
	failure text;
	arn text;
	next_state fairshare.job_status;
	attempt_outcome text;
	reason text;
	failed_attempts integer;
	action text;
	placed constant fairshare.job_status[] := '{SCHEDULED,STARTING,RUNNING}';
BEGIN
	IF describe_response IS NULL OR jsonb_typeof(describe_response) <> 'object' THEN
		PERFORM fairshare._reject('22023', 'describe_response must be a DescribeTrainingJob response object');
	END IF;
	sm_status := describe_response ->> 'TrainingJobStatus';
	IF sm_status IS NULL OR sm_status NOT IN ('InProgress', 'Completed', 'Failed', 'Stopping', 'Stopped') THEN
		PERFORM fairshare._reject('22023',
			format('unknown TrainingJobStatus %s in describe_response', coalesce(describe_response -> 'TrainingJobStatus', 'null')),
			'SageMaker reports InProgress, Completed, Failed, Stopping or Stopped.');
	END IF;
	secondary := describe_response ->> 'SecondaryStatus';
	failure := describe_response ->> 'FailureReason';
	arn := describe_response ->> 'TrainingJobArn';

	SELECT * INTO j FROM fairshare.jobs WHERE jobs.job_id = apply_status.job_id FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('P0002', format('job %s does not exist', apply_status.job_id));
	END IF;
	-- An answer about an attempt that is over (or about an earlier attempt)
	-- changes nothing.
	IF NOT j.status = ANY (placed)
	   OR (describe_response ? 'TrainingJobName' AND describe_response ->> 'TrainingJobName' <> j.training_job_name) THEN
		RETURN j.status;
	END IF;
	-- A training job we have no ARN for yet is ours only if SageMaker made it
	-- after the job was submitted: one of the same name from before (an
	-- earlier installation with the same fairshare.job_name_prefix, or the
	-- job of this id in a database restored from an older backup) must not
	-- be adopted, followed, or reported as this job's outcome.  The job's
	-- submission, not the attempt's placement: a placement made again after
	-- a failover lost the first one, or after a restore, comes later than
	-- the training job its first placement made, and that one is ours.
	-- Five minutes allow for clocks that disagree.  A CreationTime that is
	-- not a time (epoch seconds from 1970 to the year 5000) is no answer
	-- to this question: taken as absent, not as an error at every poll.
	IF j.training_job_arn IS NULL AND jsonb_typeof(describe_response -> 'CreationTime') = 'number'
	   AND (describe_response -> 'CreationTime')::numeric BETWEEN 1 AND 95000000000
	   AND to_timestamp((describe_response ->> 'CreationTime')::double precision)
		   < j.created_at - interval '5 minutes' THEN
		UPDATE fairshare.job_attempts SET outcome = 'FAILED'
		 WHERE job_attempts.job_id = j.job_id AND attempt = j.attempts;
		UPDATE fairshare.jobs
		   SET status = 'FAILED',
			   status_reason = format('training job name %s is taken in SageMaker by a training job made before this '
									  'job was submitted (created %s): another installation with the same '
									  'fairshare.job_name_prefix made it, or this database was restored from a backup '
									  'older than its job ids; give each installation its own prefix', j.training_job_name,
									  to_timestamp((describe_response ->> 'CreationTime')::double precision))
		 WHERE jobs.job_id = j.job_id;
		RETURN 'FAILED';
	END IF;
	IF arn IS NOT NULL AND j.training_job_arn IS DISTINCT FROM arn THEN
		UPDATE fairshare.jobs SET training_job_arn = arn WHERE jobs.job_id = j.job_id;
	END IF;

	IF sm_status IN ('InProgress', 'Stopping') THEN
		next_state := fairshare.running_state(secondary);
		-- Never backwards: SCHEDULED < STARTING < RUNNING.
		IF sm_status = 'InProgress' AND next_state IS NOT NULL
		   AND array_position(placed, next_state) > array_position(placed, j.status) THEN
			UPDATE fairshare.jobs SET status = next_state WHERE jobs.job_id = j.job_id;
			RETURN next_state;
		END IF;
		RETURN j.status;
	END IF;

	IF sm_status = 'Completed' THEN
		next_state := 'SUCCEEDED';
		attempt_outcome := 'SUCCEEDED';
	ELSIF sm_status = 'Failed' AND j.stop_kind IN ('TERMINATE', 'TIMEOUT') THEN
		-- Terminated or timed out, and the attempt failed (or its create was
		-- refused) before the stop took effect: the job still ends FAILED,
		-- with the reason it was stopped for; no retry, no capacity fallback.
		attempt_outcome := 'FAILED';
		next_state := 'FAILED';
		reason := j.stop_reason || coalesce('; the attempt ended first: ' || failure, '');
	ELSIF sm_status = 'Failed' AND fairshare.is_capacity_failure(failure) THEN
		-- Skip this (environment, type) for a while; the next pass tries the
		-- job's next pair.  No attempt is spent.
		INSERT INTO fairshare.capacity_backoffs AS b (job_id, service_environment, instance_type, until, reason)
		VALUES (j.job_id, j.service_environment, j.instance_type,
				now() + coalesce(current_setting('fairshare.capacity_backoff', true), '600s')::interval,
				failure)
		ON CONFLICT ON CONSTRAINT capacity_backoffs_pkey
		DO UPDATE SET until = excluded.until, reason = excluded.reason;
		next_state := 'RUNNABLE';
		attempt_outcome := 'CAPACITY';
		reason := format('%s (on %s, %s); trying its other placements, no attempt spent',
						 failure, j.service_environment, j.instance_type);
	ELSIF sm_status = 'Failed' THEN
		reason := 'Received status from SageMaker: ' || coalesce(failure, 'Failed');
		attempt_outcome := 'FAILED';
		SELECT count(*) + 1 INTO failed_attempts FROM fairshare.job_attempts
		 WHERE job_attempts.job_id = j.job_id AND job_attempts.outcome = 'FAILED';
		action := fairshare.exit_action(j.evaluate_on_exit, reason);
		IF action = 'EXIT' THEN
			next_state := 'FAILED';
			reason := reason || ' (evaluate_on_exit: EXIT)';
		ELSIF failed_attempts < j.retry_attempts THEN
			next_state := 'RUNNABLE';
			reason := format('%s; retrying (%s of %s attempts used)', reason, failed_attempts, j.retry_attempts);
		ELSE
			next_state := 'FAILED';
			IF j.retry_attempts > 1 THEN
				reason := format('%s (all %s attempts used)', reason, j.retry_attempts);
			END IF;
		END IF;
	ELSE	-- Stopped
		IF j.stop_kind = 'PREEMPT' THEN
			attempt_outcome := 'PREEMPTED';
			IF j.preemptions >= j.preemption_retries THEN
				next_state := 'FAILED';
				reason := format('%s; preempted %s times, more than preemption_retries (%s)',
								 j.stop_reason, j.preemptions + 1, j.preemption_retries);
			ELSE
				next_state := 'RUNNABLE';
				reason := j.stop_reason;
			END IF;
			UPDATE fairshare.jobs SET preemptions = preemptions + 1 WHERE jobs.job_id = j.job_id;
		ELSIF j.stop_kind IN ('TERMINATE', 'TIMEOUT') THEN
			attempt_outcome := 'STOPPED';
			next_state := 'FAILED';
			reason := j.stop_reason;
		ELSE
			attempt_outcome := 'STOPPED';
			next_state := 'FAILED';
			reason := 'Received status from SageMaker: Stopped'
					  || coalesce(' (' || nullif(secondary, 'Stopped') || ')', '')
					  || coalesce(': ' || failure, '') || ' (not stopped by fairshare)';
		END IF;
	END IF;

	-- The trigger keeps an outcome already set on the attempt it closes.
	UPDATE fairshare.job_attempts SET outcome = attempt_outcome
	 WHERE job_attempts.job_id = j.job_id AND attempt = j.attempts;
	UPDATE fairshare.jobs SET status = next_state, status_reason = reason WHERE jobs.job_id = j.job_id;
	RETURN next_state;
END
$$;
COMMENT ON FUNCTION fairshare.apply_status(bigint, jsonb) IS
	'Apply a SageMaker DescribeTrainingJob response to a job: the state it maps to, retries, capacity fallback, '
	'preemption and termination outcomes (docs/lifecycle.md and docs/dispatcher.md).  Returns the job''s status afterwards.';

-- The dispatcher's, a superuser's: an answer applied by anyone else could
-- end a job whose training job runs on (docs/security.md, 'A placed job
-- follows its training job, and only SageMaker ends it').
REVOKE ALL ON FUNCTION fairshare.apply_status(bigint, jsonb) FROM PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON fairshare.share_usage, fairshare.capacity_backoffs TO fairshare_admin;

-- The stop of an attempt that never reached SageMaker (the dispatcher had
-- not sent its create, or SageMaker does not know the name): it never
-- started, so nothing was lost.  A preemption of it sends the job back to
-- RUNNABLE without counting toward preemption_retries (those bound how
-- often a job loses work), the attempt's outcome is REQUEUED; a terminate
-- or timeout ends the job as apply_status would for a Stopped answer.
CREATE FUNCTION fairshare._cancel_unsent(job_id bigint, training_job_name text)
RETURNS fairshare.job_status LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
BEGIN
	SELECT * INTO j FROM fairshare.jobs WHERE jobs.job_id = _cancel_unsent.job_id FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('P0002', format('job %s does not exist', _cancel_unsent.job_id));
	END IF;
	IF j.status = 'SCHEDULED' AND j.stop_kind = 'PREEMPT' AND j.training_job_arn IS NULL
	   AND j.training_job_name = _cancel_unsent.training_job_name THEN
		UPDATE fairshare.job_attempts SET outcome = 'REQUEUED'
		 WHERE job_attempts.job_id = j.job_id AND attempt = j.attempts;
		UPDATE fairshare.jobs
		   SET status = 'RUNNABLE',
			   status_reason = j.stop_reason || '; it had not been sent to SageMaker yet, so this does not count toward preemption_retries'
		 WHERE jobs.job_id = j.job_id;
		RETURN 'RUNNABLE';
	END IF;
	RETURN fairshare.apply_status(j.job_id, jsonb_build_object(
		'TrainingJobName', _cancel_unsent.training_job_name,
		'TrainingJobStatus', 'Stopped', 'SecondaryStatus', 'Stopped'));
END
$$;
REVOKE ALL ON FUNCTION fairshare._cancel_unsent(bigint, text) FROM PUBLIC;
GRANT SELECT ON fairshare.share_usage TO fairshare_submitter;

-- The start of every pass (not of a dry run): new jobs enter their queue,
-- jobs of disabled queues or quota shares wait as PENDING (and come back
-- when re-enabled), and attempts past attempt_duration_seconds get a stop.
-- max_new bounds how many SUBMITTED jobs enter their queue, oldest first
-- (NULL: 50,000, the bound of every call); the result says whether some
-- may be left for the next pass.  The dispatcher bounds it so that the first pass of a burst
-- of thousands of jobs places, and sends, its first jobs soon.
CREATE FUNCTION fairshare._prepare_pass(max_new integer DEFAULT NULL)
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

CREATE FUNCTION fairshare.schedule(dry_run boolean DEFAULT false)
RETURNS TABLE (job_id bigint, action text, service_environment text, instance_type text, reason text)
AS 'MODULE_PATHNAME', 'fairshare_schedule'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.schedule(boolean) IS
	'One scheduling pass over every enabled queue: PLACE and PREEMPT decisions, applied unless dry_run.';
REVOKE ALL ON FUNCTION fairshare.schedule(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.schedule(boolean) TO fairshare_admin;

-- A bounded pass, as the dispatcher runs them (docs/scheduling.md, 'A pass
-- as implemented'): for a person taking in a burst by hand in short
-- transactions, and for the benchmarks.
CREATE FUNCTION fairshare.schedule(dry_run boolean, max_jobs integer)
RETURNS TABLE (job_id bigint, action text, service_environment text, instance_type text, reason text)
AS 'MODULE_PATHNAME', 'fairshare_schedule'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.schedule(boolean, integer) IS
	'One scheduling pass that places or preempts at most max_jobs jobs, counting the job each reclaim is for (a reclaim''s victims and that job together), and takes in at most max_jobs new ones, as the dispatcher''s passes do; what is left waits for the next pass.';
REVOKE ALL ON FUNCTION fairshare.schedule(boolean, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.schedule(boolean, integer) TO fairshare_admin;

CREATE FUNCTION fairshare.queue_snapshot(job_queue text, max_jobs integer DEFAULT 100)
RETURNS TABLE ("position" integer, job_id bigint, job_name text, share text, scheduling_priority integer,
			   status fairshare.job_status, earliest_time_at_position timestamptz, pending_reason text)
AS 'MODULE_PATHNAME', 'fairshare_queue_snapshot'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.queue_snapshot(text, integer) IS
	'The RUNNABLE jobs of a queue in the order the scheduler would place them, with why each waits.  '
	'earliest_time_at_position is the time the job entered the queue (runnable_at).';

CREATE FUNCTION fairshare._explain_pass(job_id bigint, job_queue text, share text, depth integer,
	OUT "position" integer, OUT ahead bigint[], OUT reason text, OUT wait_kind text,
	OUT service_environment text, OUT instance_type text, OUT needed integer, OUT capacity_limit bigint,
	OUT in_use bigint, OUT held bigint, OUT reserved bigint, OUT free bigint, OUT held_for_job bigint,
	OUT share_weight double precision, OUT share_usage double precision, OUT share_held bigint,
	OUT share_limit bigint)
AS 'MODULE_PATHNAME', 'fairshare_explain_pass'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;

-- The number of RUNNABLE jobs ahead of a job in its own share, in the
-- share's order (FIFO: runnable_at, job_id; otherwise priority first).
CREATE FUNCTION fairshare._jobs_ahead_in_share(j fairshare.jobs, cap integer)
RETURNS bigint LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT count(*) FROM (
		SELECT 1 FROM fairshare.jobs o
		 WHERE o.status = 'RUNNABLE' AND o.job_queue = j.job_queue
		   AND o.share_identifier IS NOT DISTINCT FROM j.share_identifier
		   AND o.quota_share IS NOT DISTINCT FROM j.quota_share
		   AND CASE WHEN j.share_identifier IS NULL AND j.quota_share IS NULL
					THEN (o.runnable_at, o.job_id) < (j.runnable_at, j.job_id)
					ELSE (-o.scheduling_priority, o.runnable_at, o.job_id) < (-j.scheduling_priority, j.runnable_at, j.job_id)
			   END
		 LIMIT cap) ahead
$$;

-- The body of fairshare.explain(), which checks that the caller may see
-- the job and runs this as the catalog owner (src/sql_api/snapshot.c).
CREATE FUNCTION fairshare._explain(job_id bigint)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
	share text;
	ahead bigint;
	p record;
	summary text;
	info jsonb;
	depth_cap constant integer := 10000;
BEGIN
	SELECT * INTO j FROM fairshare.jobs WHERE jobs.job_id = _explain.job_id;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('P0002', format('job %s does not exist', _explain.job_id),
								  'A submitter sees only the jobs it submitted.');
	END IF;
	share := coalesce(j.share_identifier, j.quota_share);
	info := jsonb_build_object(
		'job_id', j.job_id, 'job_name', j.job_name, 'job_queue', j.job_queue, 'share', share,
		'status', j.status, 'status_reason', j.status_reason,
		'scheduling_priority', j.scheduling_priority, 'instance_count', j.instance_count,
		'instance_types', to_jsonb(j.instance_types), 'attempts', j.attempts,
		'retry_attempts', j.retry_attempts, 'preemptions', j.preemptions);

	IF j.status = 'SUBMITTED' THEN
		summary := 'Submitted; the next scheduling pass puts it in its queue.';
	ELSIF j.status = 'PENDING' THEN
		summary := 'Pending: ' || coalesce(j.status_reason, 'waiting for something other than capacity') || '.';
	ELSIF j.status = 'RUNNABLE' THEN
		ahead := fairshare._jobs_ahead_in_share(j, depth_cap);
		IF ahead < depth_cap THEN
			p := fairshare._explain_pass(j.job_id, j.job_queue, share, (ahead + 1)::integer);
		END IF;
		summary := coalesce(p.reason,
			format('%s%s jobs are ahead of it in %s; the scheduler looks at the first %s of a share when it explains',
				   CASE WHEN ahead >= depth_cap THEN 'At least ' ELSE '' END, ahead,
				   coalesce(share, 'queue ' || j.job_queue), depth_cap));
		info := info || jsonb_build_object(
			'position', p.position,
			'jobs_ahead_in_share', ahead,
			'ahead', to_jsonb(p.ahead),
			'blocked_by', jsonb_strip_nulls(jsonb_build_object(
				'kind', p.wait_kind, 'service_environment', p.service_environment,
				'instance_type', p.instance_type, 'needed', p.needed, 'limit', p.capacity_limit,
				'in_use', p.in_use, 'held_for_others', p.held, 'reserved', p.reserved, 'free', p.free,
				'held_for_job', p.held_for_job)),
			'share_state', jsonb_strip_nulls(jsonb_build_object(
				'weight', p.share_weight, 'usage', round(p.share_usage::numeric, 2), 'held', p.share_held,
				'limit', p.share_limit)),
			'nomination', CASE WHEN j.nomination_kind IS NOT NULL THEN jsonb_build_object(
				'kind', j.nomination_kind, 'service_environment', j.nominated_environment,
				'instance_type', j.nominated_instance_type, 'since', j.nominated_at) END,
			'capacity_backoffs', (SELECT jsonb_agg(jsonb_build_object(
					'service_environment', b.service_environment, 'instance_type', b.instance_type,
					'until', b.until, 'reason', b.reason) ORDER BY b.until)
				  FROM fairshare.capacity_backoffs b WHERE b.job_id = j.job_id AND b.until > now()));
	ELSIF j.status IN ('SCHEDULED', 'STARTING', 'RUNNING') THEN
		summary := format('%s on %s: %s x %s, training job %s', j.status, j.service_environment,
						  j.instance_count, j.instance_type, j.training_job_name)
				   || CASE WHEN j.stop_kind IS NOT NULL
						   THEN format('; stopping (%s): %s', j.stop_kind, j.stop_reason) ELSE '' END || '.';
		info := info || jsonb_build_object(
			'placement', jsonb_strip_nulls(jsonb_build_object(
				'service_environment', j.service_environment, 'instance_type', j.instance_type,
				'training_job_name', j.training_job_name, 'training_job_arn', j.training_job_arn,
				'scheduled_at', j.scheduled_at, 'started_at', j.started_at)),
			'stop_request', CASE WHEN j.stop_kind IS NOT NULL THEN jsonb_strip_nulls(jsonb_build_object(
				'kind', j.stop_kind, 'reason', j.stop_reason, 'requested_at', j.stop_requested_at,
				'sent_at', j.stop_sent_at, 'for_job', j.preempted_for)) END);
	ELSE
		summary := format('%s after %s attempt(s)%s', j.status, j.attempts,
						  coalesce(': ' || j.status_reason, '')) || '.';
	END IF;

	info := info || jsonb_build_object('summary', summary,
		'recent_events', (SELECT jsonb_agg(jsonb_build_object('at', e.at, 'from', e.old_status,
										   'to', e.new_status, 'reason', e.reason) ORDER BY e.event_id)
							FROM (SELECT * FROM fairshare.job_events ev WHERE ev.job_id = j.job_id
								   ORDER BY ev.event_id DESC LIMIT 5) e));
	RETURN jsonb_strip_nulls(info);
END
$$;
CREATE FUNCTION fairshare.explain(job_id bigint)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'fairshare_explain'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.explain(bigint) IS
	'Where a job stands and why: its position, what is ahead of it, which limit blocks it, its share''s usage and weight.';

REVOKE ALL ON FUNCTION fairshare.queue_snapshot(text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare.explain(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare._explain(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare._explain_pass(bigint, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.queue_snapshot(text, integer)
	TO fairshare_admin, fairshare_submitter, fairshare_viewer;
GRANT EXECUTE ON FUNCTION fairshare.explain(bigint) TO fairshare_admin, fairshare_submitter, fairshare_viewer;
