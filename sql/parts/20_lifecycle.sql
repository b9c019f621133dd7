-- 20_lifecycle.sql — submission and the job state machine (design section 3).
--
-- A job is submitted with a plain INSERT.  The BEFORE INSERT trigger fills
-- instance_types and instance_count from the request and rejects every bad
-- input with its own message, so nothing is written.  Configuration changes
-- reach its per-backend cache through the _config_changed statement
-- triggers.  The BEFORE UPDATE
-- trigger is the state machine: it allows only the transitions of design
-- section 3, keeps the timestamps and the attempt rows right, and writes one
-- fairshare.job_events row per transition in the same transaction.

-- The submission check itself is C (src/catalog/submission.c): it runs for
-- every job, with the queue configuration cached per backend.
CREATE FUNCTION fairshare._validate_job_submission()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_validate_job_submission'
LANGUAGE C;

-- The optional, rarely given fields, checked only when present.
CREATE FUNCTION fairshare._check_job_options(evaluate_on_exit jsonb, tags jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	rule jsonb;
	tag record;
BEGIN
	IF evaluate_on_exit IS NOT NULL THEN
		IF jsonb_typeof(evaluate_on_exit) <> 'array' OR jsonb_array_length(evaluate_on_exit) > 5 THEN
			PERFORM fairshare._reject('22023', 'evaluate_on_exit must be a JSON array of at most 5 rules',
				'Example: [{"action": "EXIT", "on_status_reason": "AlgorithmError*"}]');
		END IF;
		FOR rule IN SELECT * FROM jsonb_array_elements(evaluate_on_exit) LOOP
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
	IF tags IS NOT NULL THEN
		IF jsonb_typeof(tags) <> 'object' THEN
			PERFORM fairshare._reject('22023', 'tags must be a JSON object of string values');
		END IF;
		IF (SELECT count(*) FROM jsonb_object_keys(tags)) > 50 THEN
			PERFORM fairshare._reject('22023', 'a job has at most 50 tags');
		END IF;
		FOR tag IN SELECT key, value FROM jsonb_each(tags) LOOP
			IF jsonb_typeof(tag.value) <> 'string' OR length(tag.key) NOT BETWEEN 1 AND 128
			   OR length(tag.value #>> '{}') > 256 THEN
				PERFORM fairshare._reject('22023',
					format('invalid tag "%s"', tag.key),
					'Tag keys are 1 to 128 characters and values are strings of at most 256.');
			END IF;
		END LOOP;
	END IF;
END
$$;

CREATE TRIGGER validate_submission BEFORE INSERT ON fairshare.jobs
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_job_submission();

CREATE FUNCTION fairshare._config_changed()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_config_changed'
LANGUAGE C;

DO $config$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['service_environments', 'capacity_limits', 'scheduling_policies',
							 'share_distribution', 'job_queues', 'queue_environments',
							 'quota_shares', 'quota_share_limits']
	LOOP
		EXECUTE format('CREATE TRIGGER config_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE '
					   'ON fairshare.%I FOR EACH STATEMENT EXECUTE FUNCTION fairshare._config_changed()', t);
	END LOOP;
END
$config$;

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
