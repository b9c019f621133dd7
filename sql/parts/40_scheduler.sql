-- 40_scheduler.sql — the scheduler's state and SQL functions (design
-- sections 2, 3 and 5): decayed fair-share usage, capacity back-offs,
-- fairshare.apply_status(), and the C functions schedule(), queue_snapshot()
-- and explain() over the pure core in src/scheduler/.

-- Decayed usage U of each fair share (design 2.5), written by every pass.
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
-- there (design 2.2), until `until`.
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

-- SageMaker's secondary status as one of our states (design section 5).
-- NULL: no change (Starting, Pending, or a status we do not know).
CREATE FUNCTION fairshare.running_state(secondary_status text)
RETURNS fairshare.job_status LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE
		WHEN secondary_status IN ('Training', 'Uploading') THEN 'RUNNING'::fairshare.job_status
		WHEN secondary_status IN ('LaunchingMLInstances', 'PreparingTrainingStack',
								  'Downloading', 'DownloadingTrainingImage') THEN 'STARTING'
	END
$$;

-- A failure for lack of capacity: no attempt is spent, the pair backs off.
CREATE FUNCTION fairshare.is_capacity_failure(failure_reason text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT failure_reason LIKE 'CapacityError%'
		OR failure_reason LIKE 'ResourceLimitExceeded%'
		OR failure_reason ILIKE '%InsufficientCapacity%'
$$;

-- The first evaluate_on_exit action whose on_status_reason matches, or NULL.
-- A pattern ending in * matches by prefix; otherwise exactly (case matters).
CREATE FUNCTION fairshare.exit_action(evaluate_on_exit jsonb, status_reason text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT upper(r ->> 'action')
	  FROM jsonb_array_elements(coalesce(evaluate_on_exit, '[]')) WITH ORDINALITY AS e(r, n)
	 WHERE CASE WHEN right(r ->> 'on_status_reason', 1) = '*'
				THEN starts_with(status_reason, left(r ->> 'on_status_reason', -1))
				ELSE status_reason = r ->> 'on_status_reason' END
	 ORDER BY n LIMIT 1
$$;

CREATE FUNCTION fairshare.apply_status(job_id bigint, describe_response jsonb)
RETURNS fairshare.job_status LANGUAGE plpgsql AS $$
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
	'preemption and termination outcomes (design sections 3 and 5).  Returns the job''s status afterwards.';

REVOKE ALL ON FUNCTION fairshare.apply_status(bigint, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.apply_status(bigint, jsonb) TO fairshare_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON fairshare.share_usage, fairshare.capacity_backoffs TO fairshare_admin;
GRANT SELECT ON fairshare.share_usage TO fairshare_submitter;
