-- 20_lifecycle.sql — submission and the job state machine (design section 3).
--
-- A job is submitted with a plain INSERT.  The BEFORE INSERT trigger fills
-- instance_types and instance_count from the request and rejects every bad
-- input with its own message, so nothing is written.  The BEFORE UPDATE
-- trigger is the state machine: it allows only the transitions of design
-- section 3, keeps the timestamps and the attempt rows right, and writes one
-- fairshare.job_events row per transition in the same transaction.

CREATE FUNCTION fairshare._validate_job_submission()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	set_by_fairshare text[];
	queue_state text;
	policy_kind text;
	share_state text;
	resource_config jsonb;
	request_count jsonb;
	request_type jsonb;
	request_bytes integer;
	bad_type text;
	rule jsonb;
	tag record;
BEGIN
	-- Status, placement and attempt columns belong to fairshare.
	set_by_fairshare := array_remove(ARRAY[
		CASE WHEN NEW.status <> 'SUBMITTED' THEN 'status' END,
		CASE WHEN NEW.status_reason IS NOT NULL THEN 'status_reason' END,
		CASE WHEN NEW.created_at <> now() THEN 'created_at' END,
		CASE WHEN NEW.runnable_at IS NOT NULL THEN 'runnable_at' END,
		CASE WHEN NEW.scheduled_at IS NOT NULL THEN 'scheduled_at' END,
		CASE WHEN NEW.started_at IS NOT NULL THEN 'started_at' END,
		CASE WHEN NEW.stopped_at IS NOT NULL THEN 'stopped_at' END,
		CASE WHEN NEW.service_environment IS NOT NULL THEN 'service_environment' END,
		CASE WHEN NEW.instance_type IS NOT NULL THEN 'instance_type' END,
		CASE WHEN NEW.training_job_name IS NOT NULL THEN 'training_job_name' END,
		CASE WHEN NEW.training_job_arn IS NOT NULL THEN 'training_job_arn' END,
		CASE WHEN NEW.attempts <> 0 THEN 'attempts' END,
		CASE WHEN NEW.preemptions <> 0 THEN 'preemptions' END,
		CASE WHEN NEW.submitted_by <> current_user THEN 'submitted_by' END,
		CASE WHEN NEW.stop_kind IS NOT NULL THEN 'stop_kind' END,
		CASE WHEN NEW.stop_reason IS NOT NULL THEN 'stop_reason' END,
		CASE WHEN NEW.stop_requested_at IS NOT NULL THEN 'stop_requested_at' END,
		CASE WHEN NEW.stop_sent_at IS NOT NULL THEN 'stop_sent_at' END,
		CASE WHEN NEW.preempted_for IS NOT NULL THEN 'preempted_for' END], NULL);
	IF cardinality(set_by_fairshare) > 0 THEN
		PERFORM fairshare._reject('428C9',
			format('column "%s" is set by fairshare and cannot be given when submitting a job', set_by_fairshare[1]),
			'Leave it out of the INSERT: a new job starts as SUBMITTED and fairshare fills in its placement.');
	END IF;

	IF NEW.job_name IS NULL THEN
		PERFORM fairshare._reject('23502', 'job_name is required');
	ELSIF NEW.job_name !~ '^[A-Za-z0-9_-]{1,128}$' THEN
		PERFORM fairshare._reject('22023',
			format('invalid job name "%s"', NEW.job_name),
			'A job name is 1 to 128 letters, digits, hyphens and underscores.');
	END IF;

	-- The queue decides which of share_identifier / quota_share a job carries.
	IF NEW.job_queue IS NULL THEN
		PERFORM fairshare._reject('23502', 'job_queue is required',
			'SELECT name FROM fairshare.job_queues lists the queues.');
	END IF;
	SELECT q.state, p.kind INTO queue_state, policy_kind
	  FROM fairshare.job_queues q LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
	 WHERE q.name = NEW.job_queue;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('23503',
			format('job queue "%s" does not exist', NEW.job_queue),
			'SELECT name FROM fairshare.job_queues lists the queues.');
	END IF;
	IF policy_kind = 'FAIR_SHARE' THEN
		IF NEW.share_identifier IS NULL THEN
			PERFORM fairshare._reject('23514',
				format('job queue "%s" is a fair-share queue: share_identifier is required', NEW.job_queue));
		ELSIF NEW.share_identifier !~ '^[A-Za-z0-9_-]{1,255}$' THEN
			PERFORM fairshare._reject('22023',
				format('invalid share identifier "%s"', NEW.share_identifier),
				'A share identifier is 1 to 255 letters, digits, hyphens and underscores.');
		END IF;
	ELSIF NEW.share_identifier IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('job queue "%s" is not a fair-share queue: share_identifier must not be set', NEW.job_queue));
	END IF;
	IF policy_kind = 'QUOTA_SHARE' THEN
		IF NEW.quota_share IS NULL THEN
			PERFORM fairshare._reject('23514',
				format('job queue "%s" is a quota-share queue: quota_share is required', NEW.job_queue));
		END IF;
		SELECT state INTO share_state FROM fairshare.quota_shares
		 WHERE job_queue = NEW.job_queue AND name = NEW.quota_share;
		IF NOT FOUND THEN
			PERFORM fairshare._reject('23503',
				format('quota share "%s" does not exist in job queue "%s"', NEW.quota_share, NEW.job_queue));
		END IF;
	ELSIF NEW.quota_share IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('job queue "%s" is not a quota-share queue: quota_share must not be set', NEW.job_queue));
	END IF;

	IF NEW.scheduling_priority IS NULL OR NEW.scheduling_priority NOT BETWEEN 0 AND 9999 THEN
		PERFORM fairshare._reject('22023',
			format('scheduling_priority %s is out of range', coalesce(NEW.scheduling_priority::text, 'NULL')),
			'scheduling_priority is from 0 to 9999; higher runs first.');
	END IF;

	-- The request is the body of CreateTrainingJob.
	IF NEW.request IS NULL OR jsonb_typeof(NEW.request) <> 'object' THEN
		PERFORM fairshare._reject('22023',
			'request must be a JSON object: the body of a SageMaker CreateTrainingJob call',
			format('Got %s.', coalesce(jsonb_typeof(NEW.request), 'NULL')));
	END IF;
	request_bytes := octet_length(NEW.request::text);
	IF request_bytes > 10240 THEN
		PERFORM fairshare._reject('54000',
			format('request is %s bytes; at most 10240 are allowed', request_bytes),
			'Keep large hyperparameters and configuration in S3 and pass their location.');
	END IF;
	IF jsonb_typeof(NEW.request -> 'RoleArn') IS DISTINCT FROM 'string' OR NEW.request ->> 'RoleArn' = '' THEN
		PERFORM fairshare._reject('22023', 'request lacks RoleArn',
			'SageMaker needs the ARN of the IAM role the training job runs as.');
	END IF;
	IF jsonb_typeof(NEW.request -> 'OutputDataConfig') IS DISTINCT FROM 'object' THEN
		PERFORM fairshare._reject('22023', 'request lacks OutputDataConfig',
			'SageMaker needs OutputDataConfig with an S3OutputPath for the model artifacts.');
	END IF;
	IF NEW.request ? 'TrainingJobName' THEN
		PERFORM fairshare._reject('22023', 'request must not set TrainingJobName',
			'fairshare names each attempt''s training job: fairshare.job_name_prefix, the job id and the attempt number.');
	END IF;
	resource_config := NEW.request -> 'ResourceConfig';
	IF resource_config IS NOT NULL AND jsonb_typeof(resource_config) <> 'object' THEN
		PERFORM fairshare._reject('22023', 'request ResourceConfig must be a JSON object');
	END IF;
	IF resource_config ? 'InstanceGroups' THEN
		PERFORM fairshare._reject('0A000',
			'heterogeneous clusters (ResourceConfig.InstanceGroups) are not supported',
			'A job runs instance_count instances of one instance type: use ResourceConfig.InstanceType and InstanceCount, and list fallback types in instance_types.');
	END IF;

	request_count := resource_config -> 'InstanceCount';
	IF request_count IS NOT NULL AND (jsonb_typeof(request_count) <> 'number'
									  OR request_count::numeric <> trunc(request_count::numeric)
									  OR request_count::numeric < 1) THEN
		PERFORM fairshare._reject('22023',
			format('request ResourceConfig.InstanceCount %s is not a positive whole number', request_count));
	END IF;
	IF NEW.instance_count IS NULL THEN
		IF request_count IS NULL THEN
			PERFORM fairshare._reject('22023', 'instance count is missing',
				'Set ResourceConfig.InstanceCount in the request, or the instance_count column.');
		END IF;
		IF request_count::numeric > 1000000 THEN
			PERFORM fairshare._reject('22023',
				format('request ResourceConfig.InstanceCount %s is out of range', request_count));
		END IF;
		NEW.instance_count := request_count::integer;
	END IF;
	IF NEW.instance_count < 1 OR NEW.instance_count > 1000000 THEN
		PERFORM fairshare._reject('22023',
			format('instance_count %s is out of range', NEW.instance_count),
			'A job needs from 1 to 1000000 instances.');
	END IF;

	request_type := resource_config -> 'InstanceType';
	IF request_type IS NOT NULL AND (jsonb_typeof(request_type) <> 'string'
									 OR NOT fairshare._is_instance_type(request_type #>> '{}')) THEN
		PERFORM fairshare._reject('22023',
			format('request ResourceConfig.InstanceType %s is not an instance type', request_type),
			'Instance types look like ml.p4d.24xlarge.');
	END IF;
	IF NEW.instance_types IS NULL THEN
		IF request_type IS NULL THEN
			PERFORM fairshare._reject('22023', 'instance type is missing',
				'Set ResourceConfig.InstanceType in the request, or list types in instance_types.');
		END IF;
		NEW.instance_types := ARRAY[request_type #>> '{}'];
	END IF;
	IF cardinality(NEW.instance_types) NOT BETWEEN 1 AND 10 THEN
		PERFORM fairshare._reject('22023',
			format('instance_types lists %s types; from 1 to 10 are allowed', cardinality(NEW.instance_types)));
	END IF;
	IF array_position(NEW.instance_types, NULL) IS NOT NULL THEN
		PERFORM fairshare._reject('22023', 'instance_types must not contain NULL');
	END IF;
	SELECT t INTO bad_type FROM unnest(NEW.instance_types) t WHERE NOT fairshare._is_instance_type(t) LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('22023',
			format('"%s" in instance_types is not an instance type', bad_type),
			'Instance types look like ml.p4d.24xlarge.');
	END IF;
	SELECT t INTO bad_type FROM unnest(NEW.instance_types) t GROUP BY t HAVING count(*) > 1 LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('22023', format('instance_types lists "%s" twice', bad_type));
	END IF;
	-- A type can run in an environment that limits it by type or in total.
	SELECT t INTO bad_type FROM unnest(NEW.instance_types) t
	 WHERE NOT EXISTS (SELECT 1 FROM fairshare.queue_environments qe
						 JOIN fairshare.capacity_limits cl ON cl.service_environment = qe.service_environment
						WHERE qe.job_queue = NEW.job_queue
						  AND cl.capacity_unit IN ('NUM_INSTANCES', t))
	 LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('23514',
			format('instance type %s cannot run in any service environment of job queue "%s"', bad_type, NEW.job_queue),
			format('Give one of the queue''s environments a capacity limit for %s or NUM_INSTANCES, or leave the type out.', bad_type));
	END IF;

	IF NEW.retry_attempts IS NULL OR NEW.retry_attempts NOT BETWEEN 1 AND 10 THEN
		PERFORM fairshare._reject('22023',
			format('retry_attempts %s is out of range', coalesce(NEW.retry_attempts::text, 'NULL')),
			'retry_attempts counts attempts in total, from 1 (no retry) to 10.');
	END IF;
	IF NEW.evaluate_on_exit IS NOT NULL THEN
		IF jsonb_typeof(NEW.evaluate_on_exit) <> 'array' OR jsonb_array_length(NEW.evaluate_on_exit) > 5 THEN
			PERFORM fairshare._reject('22023', 'evaluate_on_exit must be a JSON array of at most 5 rules',
				'Example: [{"action": "EXIT", "on_status_reason": "AlgorithmError*"}]');
		END IF;
		FOR rule IN SELECT * FROM jsonb_array_elements(NEW.evaluate_on_exit) LOOP
			IF jsonb_typeof(rule) <> 'object'
			   OR upper(rule ->> 'action') IS DISTINCT FROM 'RETRY' AND upper(rule ->> 'action') IS DISTINCT FROM 'EXIT'
			   OR jsonb_typeof(rule -> 'on_status_reason') IS DISTINCT FROM 'string'
			   OR EXISTS (SELECT 1 FROM jsonb_object_keys(rule) k WHERE k NOT IN ('action', 'on_status_reason')) THEN
				PERFORM fairshare._reject('22023',
					format('invalid evaluate_on_exit rule %s', rule),
					'Each rule is {"action": "RETRY" or "EXIT", "on_status_reason": "<text, may end in *>"}.');
			END IF;
			IF length(rule ->> 'on_status_reason') NOT BETWEEN 1 AND 512
			   OR strpos(left(rule ->> 'on_status_reason', -1), '*') > 0 THEN
				PERFORM fairshare._reject('22023',
					format('invalid on_status_reason %s in evaluate_on_exit', rule -> 'on_status_reason'),
					'It is 1 to 512 characters and may contain * only as its last character.');
			END IF;
		END LOOP;
	END IF;
	IF NEW.preemption_retries < 0 THEN
		PERFORM fairshare._reject('22023',
			format('preemption_retries %s is out of range', NEW.preemption_retries),
			'preemption_retries is 0 or more, or NULL for no limit.');
	END IF;
	IF NEW.attempt_duration_seconds < 1 THEN
		PERFORM fairshare._reject('22023',
			format('attempt_duration_seconds %s is out of range', NEW.attempt_duration_seconds),
			'attempt_duration_seconds is at least 1, or NULL for no timeout.');
	END IF;
	IF NEW.tags IS NOT NULL THEN
		IF jsonb_typeof(NEW.tags) <> 'object' THEN
			PERFORM fairshare._reject('22023', 'tags must be a JSON object of string values');
		END IF;
		IF (SELECT count(*) FROM jsonb_object_keys(NEW.tags)) > 50 THEN
			PERFORM fairshare._reject('22023', 'a job has at most 50 tags');
		END IF;
		FOR tag IN SELECT key, value FROM jsonb_each(NEW.tags) LOOP
			IF jsonb_typeof(tag.value) <> 'string' OR length(tag.key) NOT BETWEEN 1 AND 128
			   OR length(tag.value #>> '{}') > 256 THEN
				PERFORM fairshare._reject('22023',
					format('invalid tag "%s"', tag.key),
					'Tag keys are 1 to 128 characters and values are strings of at most 256.');
			END IF;
		END LOOP;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate_submission BEFORE INSERT ON fairshare.jobs
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_job_submission();

-- The allowed transitions of design section 3.
CREATE FUNCTION fairshare.valid_transition(old_status fairshare.job_status, new_status fairshare.job_status)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT CASE old_status
		WHEN 'SUBMITTED' THEN new_status IN ('RUNNABLE', 'PENDING', 'FAILED')
		WHEN 'PENDING'   THEN new_status IN ('RUNNABLE', 'FAILED')
		WHEN 'RUNNABLE'  THEN new_status IN ('SCHEDULED', 'PENDING', 'FAILED')
		WHEN 'SCHEDULED' THEN new_status IN ('STARTING', 'RUNNING', 'RUNNABLE', 'SUCCEEDED', 'FAILED')
		WHEN 'STARTING'  THEN new_status IN ('RUNNING', 'RUNNABLE', 'SUCCEEDED', 'FAILED')
		WHEN 'RUNNING'   THEN new_status IN ('RUNNABLE', 'SUCCEEDED', 'FAILED')
		ELSE false
	END
$$;
COMMENT ON FUNCTION fairshare.valid_transition(fairshare.job_status, fairshare.job_status) IS
	'true when a job may go from old_status to new_status (design section 3)';

-- The training job name of an attempt: prefix, job id, attempt number.
CREATE FUNCTION fairshare.training_job_name(job_id bigint, attempt integer)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT coalesce(nullif(current_setting('fairshare.job_name_prefix', true), ''), 'fairshare-')
		   || job_id || '-' || attempt
$$;

CREATE FUNCTION fairshare._job_transition()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	was_placed boolean := OLD.status IN ('SCHEDULED', 'STARTING', 'RUNNING');
	changed text;
BEGIN
	-- What was submitted stays as submitted; only scheduling_priority may change.
	changed := CASE
		WHEN NEW.job_name IS DISTINCT FROM OLD.job_name THEN 'job_name'
		WHEN NEW.job_queue IS DISTINCT FROM OLD.job_queue THEN 'job_queue'
		WHEN NEW.share_identifier IS DISTINCT FROM OLD.share_identifier THEN 'share_identifier'
		WHEN NEW.quota_share IS DISTINCT FROM OLD.quota_share THEN 'quota_share'
		WHEN NEW.request IS DISTINCT FROM OLD.request THEN 'request'
		WHEN NEW.instance_types IS DISTINCT FROM OLD.instance_types THEN 'instance_types'
		WHEN NEW.instance_count IS DISTINCT FROM OLD.instance_count THEN 'instance_count'
		WHEN NEW.retry_attempts IS DISTINCT FROM OLD.retry_attempts THEN 'retry_attempts'
		WHEN NEW.evaluate_on_exit IS DISTINCT FROM OLD.evaluate_on_exit THEN 'evaluate_on_exit'
		WHEN NEW.preemption_retries IS DISTINCT FROM OLD.preemption_retries THEN 'preemption_retries'
		WHEN NEW.attempt_duration_seconds IS DISTINCT FROM OLD.attempt_duration_seconds THEN 'attempt_duration_seconds'
		WHEN NEW.tags IS DISTINCT FROM OLD.tags THEN 'tags'
		WHEN NEW.submitted_by IS DISTINCT FROM OLD.submitted_by THEN 'submitted_by'
		WHEN NEW.created_at IS DISTINCT FROM OLD.created_at THEN 'created_at'
	END;
	IF changed IS NOT NULL THEN
		PERFORM fairshare._reject('55000',
			format('column "%s" of job %s cannot change after submission', changed, OLD.job_id),
			'Terminate the job and submit a new one.');
	END IF;
	IF NEW.scheduling_priority NOT BETWEEN 0 AND 9999 THEN
		PERFORM fairshare._reject('22023',
			format('scheduling_priority %s is out of range', NEW.scheduling_priority),
			'scheduling_priority is from 0 to 9999; higher runs first.');
	END IF;

	IF NEW.training_job_arn IS DISTINCT FROM OLD.training_job_arn AND was_placed
	   AND NEW.status = OLD.status THEN
		UPDATE fairshare.job_attempts SET training_job_arn = NEW.training_job_arn
		 WHERE job_id = OLD.job_id AND attempt = OLD.attempts;
	END IF;

	IF NEW.status = OLD.status THEN
		RETURN NEW;
	END IF;

	IF NOT fairshare.valid_transition(OLD.status, NEW.status) THEN
		PERFORM fairshare._reject('55000',
			format('job %s cannot go from %s to %s', OLD.job_id, OLD.status, NEW.status),
			CASE WHEN OLD.status IN ('SUCCEEDED', 'FAILED') THEN format('%s is a final state.', OLD.status)
				 ELSE format('From %s a job may go to %s.', OLD.status,
							 (SELECT string_agg(s::text, ', ' ORDER BY s)
								FROM unnest(enum_range(NULL::fairshare.job_status)) s
							   WHERE fairshare.valid_transition(OLD.status, s))) END);
	END IF;

	-- status_reason explains the state the job is in: a transition that
	-- gives no reason of its own clears the previous state's.
	IF NEW.status_reason IS NOT DISTINCT FROM OLD.status_reason THEN
		NEW.status_reason := NULL;
	END IF;

	CASE NEW.status
	WHEN 'RUNNABLE' THEN
		-- A job keeps its place in line across retries, preemptions and
		-- capacity fallbacks: runnable_at is set the first time only.
		NEW.runnable_at := coalesce(OLD.runnable_at, now());
	WHEN 'SCHEDULED' THEN
		IF NEW.service_environment IS NULL OR NEW.instance_type IS NULL THEN
			PERFORM fairshare._reject('23514',
				format('job %s is placed without a service environment and instance type', OLD.job_id));
		END IF;
		NEW.attempts := OLD.attempts + 1;
		NEW.training_job_name := coalesce(NEW.training_job_name, fairshare.training_job_name(OLD.job_id, NEW.attempts));
		NEW.training_job_arn := NULL;
		NEW.scheduled_at := now();
		NEW.started_at := NULL;
		NEW.stopped_at := NULL;
		NEW.stop_kind := NULL;
		NEW.stop_reason := NULL;
		NEW.stop_requested_at := NULL;
		NEW.stop_sent_at := NULL;
		NEW.preempted_for := NULL;
		INSERT INTO fairshare.job_attempts
			(job_id, attempt, training_job_name, service_environment, instance_type, instance_count)
		VALUES (OLD.job_id, NEW.attempts, NEW.training_job_name, NEW.service_environment,
				NEW.instance_type, NEW.instance_count);
	WHEN 'STARTING', 'RUNNING' THEN
		IF NEW.started_at IS NULL THEN
			NEW.started_at := now();
			UPDATE fairshare.job_attempts SET started_at = NEW.started_at,
					training_job_arn = coalesce(NEW.training_job_arn, training_job_arn)
			 WHERE job_id = OLD.job_id AND attempt = OLD.attempts;
		END IF;
	WHEN 'SUCCEEDED', 'FAILED' THEN
		NEW.stopped_at := now();
	ELSE
		NULL;
	END CASE;

	-- Leaving the placed states ends the attempt.  Whoever makes the
	-- transition may refine the outcome (PREEMPTED, CAPACITY, STOPPED) in the
	-- same transaction; the default follows from the new status.
	IF was_placed AND NEW.status IN ('RUNNABLE', 'SUCCEEDED', 'FAILED') THEN
		UPDATE fairshare.job_attempts
		   SET stopped_at = now(),
			   status_reason = NEW.status_reason,
			   training_job_arn = coalesce(NEW.training_job_arn, training_job_arn),
			   outcome = coalesce(outcome, CASE NEW.status WHEN 'RUNNABLE' THEN 'REQUEUED' ELSE NEW.status::text END)
		 WHERE job_id = OLD.job_id AND attempt = OLD.attempts;
		IF NEW.status = 'RUNNABLE' THEN
			NEW.service_environment := NULL;
			NEW.instance_type := NULL;
			NEW.training_job_name := NULL;
			NEW.training_job_arn := NULL;
			NEW.scheduled_at := NULL;
			NEW.started_at := NULL;
			NEW.stop_kind := NULL;
			NEW.stop_reason := NULL;
			NEW.stop_requested_at := NULL;
			NEW.stop_sent_at := NULL;
			NEW.preempted_for := NULL;
		END IF;
	END IF;

	INSERT INTO fairshare.job_events (job_id, old_status, new_status, reason)
	VALUES (OLD.job_id, OLD.status, NEW.status, NEW.status_reason);
	RETURN NEW;
END
$$;

CREATE TRIGGER transition BEFORE UPDATE ON fairshare.jobs
	FOR EACH ROW EXECUTE FUNCTION fairshare._job_transition();

CREATE FUNCTION fairshare.terminate_job(job_id bigint, reason text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_terminate_job'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION fairshare.terminate_job(bigint, text) IS
	'Fail a job that is not placed yet; for a placed one, request the stop (it fails once SageMaker reports it stopped).  '
	'Returns false when there is nothing left to do (already finished, or its termination already requested).';

CREATE FUNCTION fairshare.update_job_priority(job_id bigint, scheduling_priority integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'fairshare_update_job_priority'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION fairshare.update_job_priority(bigint, integer) IS
	'Change the scheduling_priority of an unfinished job; returns the previous priority.  The next pass honours it.';
