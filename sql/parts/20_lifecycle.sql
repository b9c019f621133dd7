-- 20_lifecycle.sql — submission and the job state machine (docs/lifecycle.md).
--
-- A job is submitted with a plain INSERT.  The BEFORE INSERT trigger fills
-- instance_types and instance_count from the request and rejects every bad
-- input with its own message, so nothing is written; configuration changes
-- reach its per-backend cache through the _config_changed statement
-- triggers.  The BEFORE UPDATE trigger is the state machine: it allows only
-- the transitions of docs/lifecycle.md and keeps the row's timestamps and
-- placement right; a statement trigger then writes, in the same
-- transaction, one fairshare.job_events row per transition and the
-- fairshare.job_attempts rows.

-- The submission check itself is C (src/tables/submission.c): it runs for
-- every job, with the queue configuration cached per backend.
CREATE FUNCTION fairshare._validate_job_submission()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_validate_job_submission'
LANGUAGE C;

-- The optional, rarely given fields, checked only when present.
CREATE FUNCTION fairshare._check_job_options(evaluate_on_exit jsonb, tags jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
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
			-- As AWS Batch's: any printable characters; only a last * is a
			-- wildcard (exit_action() matches any other * as itself).
			IF length(rule ->> 'on_status_reason') NOT BETWEEN 1 AND 512
			   OR rule ->> 'on_status_reason' ~ '[[:cntrl:]]' THEN
				PERFORM fairshare._reject('22023',
					format('invalid on_status_reason %s in evaluate_on_exit', rule -> 'on_status_reason'),
					'It is 1 to 512 printable characters; a * at its end matches any rest.');
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
			IF lower(tag.key) LIKE 'fairshare:%' OR lower(tag.key) LIKE 'aws:%' THEN
				PERFORM fairshare._reject('22023',
					format('tag key "%s" is reserved', tag.key),
					'fairshare sets the fairshare: tags of every training job itself, and AWS the aws: ones.');
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
LANGUAGE C
SET search_path = pg_catalog, fairshare, pg_temp;

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

-- The allowed transitions of docs/lifecycle.md, 'Transitions'.
CREATE FUNCTION fairshare.valid_transition(old_status fairshare.job_status, new_status fairshare.job_status)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
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
	'true when a job may go from old_status to new_status (docs/lifecycle.md)';

-- The training job name of an attempt: fairshare.job_name_prefix, the
-- installation's first 8 hex digits, the job id and the attempt number
-- (src/tables/installation.c, the one definition).
CREATE FUNCTION fairshare.training_job_name(job_id bigint, attempt integer)
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_training_job_name_sql'
LANGUAGE C STABLE STRICT
SET search_path = pg_catalog, fairshare, pg_temp;

-- The state machine itself is C (src/tables/transition.c): it runs for
-- every placement and every status change.  It changes only the row.
CREATE FUNCTION fairshare._job_transition()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_job_transition'
LANGUAGE C;

-- The rows that belong to transitions, written once per statement from its
-- transition tables: one job_events row per status change, the attempt a
-- placement starts, and its start, ARN and end.
--
-- Each statement is EXECUTEd, so it is planned for the transition tables it
-- gets.  A plan cached by PL/pgSQL would keep the row counts of the first
-- statement it saw: made for a one-job update, its nested loops over
-- new_jobs x old_jobs turn a pass that places 5,000 jobs quadratic (seconds
-- of CPU instead of milliseconds).  Planning costs a fraction of a
-- millisecond per statement, once per UPDATE statement, not per row.
--
-- SECURITY DEFINER, so that the history is written only here: an admin
-- who may update jobs needs no INSERT on job_events or job_attempts, and
-- so cannot write events or attempts that never happened.
CREATE FUNCTION fairshare._record_transitions()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp SET jit = off AS $$
DECLARE
	k record;
BEGIN
	-- It runs as the owner, on the rows of the table that fired it: only
	-- fairshare.jobs' own statement trigger may (96_trigger_functions.sql).
	IF TG_RELID <> 'fairshare.jobs'::regclass OR TG_LEVEL <> 'STATEMENT' OR TG_OP <> 'UPDATE' THEN
		RAISE EXCEPTION 'fairshare._record_transitions() is the AFTER UPDATE statement trigger of fairshare.jobs only'
			USING ERRCODE = '39P01';
	END IF;
	-- Which kinds of rows this statement must write, in one scan of the two
	-- transition tables joined once.  Every statement below is run only for
	-- a kind that occurred, so an UPDATE of priorities writes nothing after
	-- this scan, a move of new jobs into their queues (schedule() taking in
	-- a sweep) only events, and only placements and status answers touch
	-- job_attempts.  An aggregate, not EXISTS: EXISTS over a join of the
	-- transition tables is planned as a nested loop (it expects to stop at
	-- the first row), which is quadratic when no row qualifies -- minutes
	-- for an UPDATE of 50,000 jobs' priorities.  job_id never changes.
	-- (JIT off: the transition tables have no statistics, so a large
	-- statement's estimates pass the JIT thresholds and compiling would
	-- cost more than the statements, which are hash joins and index look-ups.)
	EXECUTE $q$
	SELECT count(*) FILTER (WHERE n.status <> o.status) AS events,
		   count(*) FILTER (WHERE o.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
							  AND n.status IN ('RUNNABLE', 'SUCCEEDED', 'FAILED')) AS ends,
		   count(*) FILTER (WHERE o.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
							  AND n.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
							  AND (n.started_at IS DISTINCT FROM o.started_at
								   OR n.training_job_arn IS DISTINCT FROM o.training_job_arn)) AS starts,
		   count(*) FILTER (WHERE n.status = 'SCHEDULED' AND o.status <> 'SCHEDULED') AS placements
	  FROM new_jobs n JOIN old_jobs o USING (job_id)$q$
		INTO k;
	IF k.events > 0 THEN
		EXECUTE $q$
		INSERT INTO fairshare.job_events (job_id, old_status, new_status, reason)
		SELECT n.job_id, o.status, n.status, n.status_reason
		  FROM new_jobs n JOIN old_jobs o USING (job_id)
		 WHERE n.status <> o.status
		 ORDER BY n.job_id$q$;
	END IF;
	-- Attempts that end: the outcome whoever made the transition set, or
	-- what the new status says.
	IF k.ends > 0 THEN
		EXECUTE $q$
		UPDATE fairshare.job_attempts a
		   SET stopped_at = now(), status_reason = n.status_reason,
			   training_job_arn = coalesce(o.training_job_arn, a.training_job_arn),
			   outcome = coalesce(a.outcome, CASE n.status WHEN 'RUNNABLE' THEN 'REQUEUED' ELSE n.status::text END)
		  FROM new_jobs n JOIN old_jobs o USING (job_id)
		 WHERE a.job_id = n.job_id AND a.attempt = o.attempts
		   AND o.status IN ('SCHEDULED', 'STARTING', 'RUNNING') AND n.status IN ('RUNNABLE', 'SUCCEEDED', 'FAILED')$q$;
	END IF;
	-- Attempts that start, or whose ARN we learn.
	IF k.starts > 0 THEN
		EXECUTE $q$
		UPDATE fairshare.job_attempts a
		   SET started_at = coalesce(a.started_at, n.started_at),
			   training_job_arn = coalesce(n.training_job_arn, a.training_job_arn)
		  FROM new_jobs n JOIN old_jobs o USING (job_id)
		 WHERE a.job_id = n.job_id AND a.attempt = n.attempts
		   AND o.status IN ('SCHEDULED', 'STARTING', 'RUNNING') AND n.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
		   AND (n.started_at IS DISTINCT FROM o.started_at OR n.training_job_arn IS DISTINCT FROM o.training_job_arn)$q$;
	END IF;
	-- Attempts that a placement begins, with the job as it was placed and
	-- since when it waited: runnable_at, or the end of its previous attempt.
	IF k.placements > 0 THEN
		EXECUTE $q$
		INSERT INTO fairshare.job_attempts
			(job_id, attempt, training_job_name, service_environment, instance_type, instance_count,
			 job_queue, share, scheduling_priority, queued_at)
		SELECT n.job_id, n.attempts, n.training_job_name, n.service_environment, n.instance_type, n.instance_count,
			   n.job_queue, coalesce(n.quota_share, n.share_identifier), n.scheduling_priority,
			   coalesce(previous.stopped_at, n.runnable_at)
		  FROM new_jobs n JOIN old_jobs o USING (job_id)
		  LEFT JOIN fairshare.job_attempts previous ON previous.job_id = n.job_id AND previous.attempt = n.attempts - 1
		 WHERE n.status = 'SCHEDULED' AND o.status <> 'SCHEDULED'$q$;
	END IF;
	RETURN NULL;
END
$$;

CREATE TRIGGER transition BEFORE UPDATE ON fairshare.jobs
	FOR EACH ROW EXECUTE FUNCTION fairshare._job_transition();
CREATE TRIGGER record_transitions AFTER UPDATE ON fairshare.jobs
	REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._record_transitions();

-- A placed job has a training job in SageMaker: deleting its row would
-- leave that running (and billed) with nobody to follow or stop it.
-- Statement-level, so retention's batch deletes of finished jobs pay one
-- scan of the deleted rows, not a trigger call per row.
CREATE FUNCTION fairshare._refuse_placed_delete()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	placed record;
BEGIN
	SELECT o.job_id, o.status INTO placed FROM old_jobs o
	 WHERE o.status IN ('SCHEDULED', 'STARTING', 'RUNNING') LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'job % is % and cannot be deleted', placed.job_id, placed.status
			USING ERRCODE = 'object_in_use',
				  DETAIL = 'Its training job in SageMaker would go on without fairshare following or stopping it.',
				  HINT = format('Terminate it (SELECT fairshare.terminate_job(%s, ''why'')) and delete it once it has '
								'finished, or leave it to retention.', placed.job_id);
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER refuse_placed_delete AFTER DELETE ON fairshare.jobs
	REFERENCING OLD TABLE AS old_jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._refuse_placed_delete();

-- TRUNCATE deletes every row without a DELETE trigger: refused the same
-- way while any job is placed (also when it comes as a CASCADE from a
-- table jobs refers to).
CREATE FUNCTION fairshare._refuse_placed_truncate()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	placed record;
	n bigint;
BEGIN
	SELECT j.job_id, j.status INTO placed FROM fairshare.jobs j
	 WHERE j.status IN ('SCHEDULED', 'STARTING', 'RUNNING') ORDER BY j.job_id LIMIT 1;
	IF FOUND THEN
		SELECT count(*) INTO n FROM fairshare.jobs WHERE status IN ('SCHEDULED', 'STARTING', 'RUNNING');
		RAISE EXCEPTION 'fairshare.jobs cannot be truncated: % jobs are placed (job % is %)', n, placed.job_id, placed.status
			USING ERRCODE = 'object_in_use',
				  DETAIL = 'Their training jobs in SageMaker would go on without fairshare following or stopping them.',
				  HINT = 'Terminate the placed jobs (fairshare.terminate_job) and truncate once they have finished.';
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER refuse_placed_truncate BEFORE TRUNCATE ON fairshare.jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._refuse_placed_truncate();

-- An attempt that has ended is history too: only a superuser may change
-- it.  Of the current attempt an admin may set the outcome and reason
-- only: not the training job it names or where, which the orphan sweep
-- counts a training job as known by (as the job's,
-- src/tables/transition.c), nor its times and what it was placed for.
CREATE FUNCTION fairshare._guard_closed_attempt()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	-- (the lifecycle trigger writes started_at and stopped_at as the
	-- catalog owner, a superuser)
	IF NEW IS DISTINCT FROM OLD
	   AND (OLD.stopped_at IS NOT NULL
			OR (pg_catalog.to_jsonb(NEW) - 'outcome' - 'status_reason')
			   IS DISTINCT FROM (pg_catalog.to_jsonb(OLD) - 'outcome' - 'status_reason'))
	   AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) THEN
		IF OLD.stopped_at IS NOT NULL THEN
			RAISE EXCEPTION 'attempt % of job % has ended: it cannot change', OLD.attempt, OLD.job_id
				USING ERRCODE = 'object_not_in_prerequisite_state',
					  HINT = 'The history of an attempt is kept as it happened; only a superuser may correct it.';
		END IF;
		RAISE EXCEPTION 'attempt % of job %: only its outcome and status_reason may change', OLD.attempt, OLD.job_id
			USING ERRCODE = 'generated_always',
				  DETAIL = 'The rest is set by fairshare: the training job it names and where, which the orphan sweep counts as known, and its history.',
				  HINT = 'Only a superuser may correct the rest.';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_closed_attempt BEFORE UPDATE ON fairshare.job_attempts
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_closed_attempt();

-- After a restore into another cluster, roles have new OIDs and
-- submitters no longer see their jobs (a job belongs to its role's name and
-- OID).  This hands each job to the role that now has its submitter's
-- name; run it only when those roles are the same people.  Superusers.
CREATE FUNCTION fairshare.rebind_submitters()
RETURNS bigint LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	-- submitter_oid is fixed at submission; only this function moves it
	SET LOCAL session_replication_role = replica;
	UPDATE fairshare.jobs j SET submitter_oid = r.oid
	  FROM pg_catalog.pg_roles r
	 WHERE r.rolname = j.submitted_by AND j.submitter_oid <> r.oid;
	GET DIAGNOSTICS n = ROW_COUNT;
	-- and the API's record of who submitted, which clientToken and
	-- row-level security read by OID
	UPDATE fairshare.api_submissions s SET submitter_oid = j.submitter_oid
	  FROM fairshare.jobs j
	 WHERE j.job_id = s.job_id AND s.submitter_oid <> j.submitter_oid;
	RETURN n;
END
$$;
REVOKE ALL ON FUNCTION fairshare.rebind_submitters() FROM PUBLIC;
COMMENT ON FUNCTION fairshare.rebind_submitters() IS
	'After a restore into another cluster: give each job to the role that now has its submitter''s name.  '
	'Returns the jobs rebound.  Superusers only.';

CREATE FUNCTION fairshare.terminate_job(job_id bigint, reason text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_terminate_job'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.terminate_job(bigint, text) IS
	'Fail a job that is not placed yet; for a placed one, request the stop (it fails once SageMaker reports it stopped).  '
	'Returns false when there is nothing left to do (already finished, or its termination already requested).';

CREATE FUNCTION fairshare.update_job_priority(job_id bigint, scheduling_priority integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'fairshare_update_job_priority'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.update_job_priority(bigint, integer) IS
	'Change the scheduling_priority of an unfinished job; returns the previous priority.  The next pass honours it.';
