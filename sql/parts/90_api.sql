-- 90_api.sql — the AWS Batch API: its keys, and the service-job operations
-- (SubmitServiceJob, DescribeServiceJob, ListServiceJobs, UpdateServiceJob,
-- TerminateServiceJob, GetJobQueueSnapshot) as the functions the API
-- server (src/api/) calls, as the key's role, with the request's JSON.
-- docs/api.md describes the mapping between AWS's fields and fairshare's.

------------------------------------------------------------------------------
-- API keys
------------------------------------------------------------------------------

-- SigV4 needs the secret itself to recompute a signature, so the secret is
-- stored as is -- in a column only the catalog's owner (and superusers) can
-- read; admins may list the other columns.  A request signed with a key
-- runs as the key's role.  The role is kept by OID and by name, and a key
-- works only while they still go together: a regrole records no
-- dependency, so a dropped role leaves its keys behind, and its OID may
-- later be another role's (OIDs wrap around; a restore reads a dropped
-- role's key as a bare number).
CREATE TABLE fairshare.api_keys (
	access_key_id		text PRIMARY KEY CHECK (access_key_id ~ '^[A-Z0-9]{16,128}$'),
	role				regrole NOT NULL,
	role_name			name NOT NULL,
	secret_access_key	text NOT NULL,
	created_at			timestamptz NOT NULL DEFAULT now(),
	disabled_at			timestamptz
);
COMMENT ON TABLE fairshare.api_keys IS
	'Keys of the AWS Batch API: a request signed with one runs as its role.  '
	'Made by fairshare.create_api_key(), turned off by fairshare.disable_api_key(); '
	'secret_access_key is readable by the catalog owner only.';
REVOKE ALL ON fairshare.api_keys FROM PUBLIC;
GRANT SELECT (access_key_id, role, role_name, created_at, disabled_at) ON fairshare.api_keys TO fairshare_admin;
-- pg_read_all_data (often given to backup and analytics logins) reads
-- every table as if granted SELECT, and row-level security is what still
-- applies to it: with no policy of its own it reads no key, and no secret.
-- The catalog owner (the API server's session) is not subject to it.
ALTER TABLE fairshare.api_keys ENABLE ROW LEVEL SECURITY;
-- Nor may ANALYZE copy secrets into pg_statistic, which pg_read_all_data
-- reads past row-level security.
ALTER TABLE fairshare.api_keys ALTER COLUMN secret_access_key SET STATISTICS 0;
CREATE POLICY admin_list ON fairshare.api_keys FOR SELECT TO fairshare_admin USING (true);
SELECT pg_catalog.pg_extension_config_dump('fairshare.api_keys'::regclass, '');

-- A new key for a role; the secret is shown this once.  The role must be
-- a member of fairshare_admin, fairshare_submitter or fairshare_viewer, and
-- neither a superuser nor exempt from row-level security: the API acts
-- with exactly the role's rights, and never with those.
CREATE FUNCTION fairshare.create_api_key(role name)
RETURNS TABLE (access_key_id text, secret_access_key text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r pg_catalog.pg_roles;
	key_id text;
	secret text;
BEGIN
	IF create_api_key.role IS NULL THEN
		PERFORM fairshare._reject('22023', 'role is required', 'fairshare.create_api_key(''alice'')');
	END IF;
	SELECT * INTO r FROM pg_catalog.pg_roles WHERE rolname = create_api_key.role;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('22023', format('role "%s" does not exist', create_api_key.role));
	END IF;
	IF r.rolsuper OR r.rolbypassrls THEN
		PERFORM fairshare._reject('42501',
			format('role "%s" is a superuser or bypasses row-level security: the API does not act as such roles', r.rolname),
			'Make a key for a role with only fairshare''s grants.');
	END IF;
	IF NOT (pg_has_role(r.oid, 'fairshare_admin', 'MEMBER') OR pg_has_role(r.oid, 'fairshare_submitter', 'MEMBER')
			OR pg_has_role(r.oid, 'fairshare_viewer', 'MEMBER')) THEN
		PERFORM fairshare._reject('22023',
			format('role "%s" is not a member of fairshare_admin, fairshare_submitter or fairshare_viewer', r.rolname),
			format('GRANT fairshare_submitter TO %I, then make its key.', r.rolname));
	END IF;
	-- 20 upper-case characters and 40 of base64, from gen_random_uuid()'s
	-- strong randomness (122 bits each).
	key_id := 'FSAK' || upper(substr(encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'), 1, 16));
	secret := substr(encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'))
							|| sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'base64'), 1, 40);
	INSERT INTO fairshare.api_keys (access_key_id, role, role_name, secret_access_key)
	VALUES (key_id, r.oid::regrole, r.rolname, secret);
	access_key_id := key_id;
	secret_access_key := secret;
	RETURN NEXT;
END
$$;
COMMENT ON FUNCTION fairshare.create_api_key(name) IS
	'A new AWS Batch API key acting as the role; returns the access key id and the secret, shown only this once.';

CREATE FUNCTION fairshare.disable_api_key(access_key_id text)
RETURNS boolean LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.api_keys k WHERE k.access_key_id = disable_api_key.access_key_id) THEN
		PERFORM fairshare._reject('P0002', format('API key "%s" does not exist', disable_api_key.access_key_id));
	END IF;
	UPDATE fairshare.api_keys k SET disabled_at = now()
	 WHERE k.access_key_id = disable_api_key.access_key_id AND k.disabled_at IS NULL;
	RETURN FOUND;
END
$$;
COMMENT ON FUNCTION fairshare.disable_api_key(text) IS
	'Turn an AWS Batch API key off for good; returns false when it already was.';

REVOKE ALL ON FUNCTION fairshare.create_api_key(name), fairshare.disable_api_key(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.create_api_key(name), fairshare.disable_api_key(text) TO fairshare_admin;

------------------------------------------------------------------------------
-- What the API adds to a job
------------------------------------------------------------------------------

-- One row per job submitted through the API: its clientToken and the hash
-- of its request (idempotency: the same role, token and request within 8
-- hours return the same job), and the TrainingJobName of its payload
-- (fairshare names every attempt itself; DescribeServiceJob gives the
-- payload back as it was sent).
CREATE TABLE fairshare.api_submissions (
	job_id				bigint PRIMARY KEY REFERENCES fairshare.jobs (job_id) ON DELETE CASCADE,
	submitter_oid		oid NOT NULL,
	client_token		text CHECK (length(client_token) BETWEEN 1 AND 64),
	request_hash		text NOT NULL,
	training_job_name	text,
	created_at			timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE fairshare.api_submissions IS
	'Jobs submitted through the AWS Batch API: clientToken and request hash (idempotency for 8 hours), '
	'and the TrainingJobName the payload carried.';
CREATE INDEX api_submissions_token_idx ON fairshare.api_submissions (submitter_oid, client_token, created_at)
	WHERE client_token IS NOT NULL;
ALTER TABLE fairshare.api_submissions ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.api_submissions TO fairshare_admin USING (true) WITH CHECK (true);
-- A submitter sees the records of the jobs it sees: a job is its role's by
-- name and OID, and a role that only has the OID (a restore into another
-- cluster, before rebind_submitters()) sees neither.
CREATE POLICY submitter_own ON fairshare.api_submissions FOR SELECT TO fairshare_submitter
	USING (submitter_oid = fairshare._current_role_oid()
		   AND EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = api_submissions.job_id));
-- A submitter records only its own jobs (the subquery sees them through
-- the jobs' row-level security).
CREATE POLICY submitter_insert_own ON fairshare.api_submissions FOR INSERT TO fairshare_submitter
	WITH CHECK (submitter_oid = fairshare._current_role_oid()
				AND EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = api_submissions.job_id));
GRANT SELECT, INSERT, DELETE ON fairshare.api_submissions TO fairshare_admin;
GRANT SELECT, INSERT ON fairshare.api_submissions TO fairshare_submitter;
SELECT pg_catalog.pg_extension_config_dump('fairshare.api_submissions'::regclass, '');

-- ListServiceJobs lists newest first within a queue: by status (no filter,
-- or a share filter), by creation time (the time filters), by name (the
-- JOB_NAME filter).  jobs_queue_status_idx (10_catalog.sql) carries
-- created_at and job_id for the first.
CREATE INDEX jobs_queue_created_idx ON fairshare.jobs (job_queue, created_at, job_id);
CREATE INDEX jobs_queue_name_idx ON fairshare.jobs (job_queue, lower(job_name) text_pattern_ops);
-- ... but the API's keys are not superusers, so row-level security applies,
-- and the enum's equality (enum_eq) is not leakproof: PostgreSQL will not
-- use "status = X" as an index condition under row-level security, and
-- jobs_queue_status_idx then reads a queue's whole history to find its
-- RUNNING jobs.  A partial index is chosen by proof from its predicate,
-- which needs no leakproof operator: one for the finished history, one for
-- the waiting jobs, one for the few submitted, pending and placed ones.
-- Each job is in exactly one of them.
CREATE INDEX jobs_queue_finished_created_idx ON fairshare.jobs (job_queue, created_at, job_id)
	WHERE status IN ('SUCCEEDED', 'FAILED');
CREATE INDEX jobs_queue_runnable_created_idx ON fairshare.jobs (job_queue, created_at, job_id)
	WHERE status = 'RUNNABLE';
CREATE INDEX jobs_queue_active_created_idx ON fairshare.jobs (job_queue, created_at, job_id)
	WHERE status NOT IN ('SUCCEEDED', 'FAILED', 'RUNNABLE');
-- The share filters combine with a status.  Waiting and active jobs are
-- few enough to filter on the way (the two indexes above); a queue's
-- history is not: a share with no FAILED job among a million finished ones
-- would be read to its end.  So the finished jobs are indexed by share and
-- by each finished status apart (proved from the predicate, as above).
CREATE INDEX jobs_queue_quota_succeeded_idx ON fairshare.jobs (job_queue, quota_share, created_at, job_id)
	WHERE status = 'SUCCEEDED' AND quota_share IS NOT NULL;
CREATE INDEX jobs_queue_quota_failed_idx ON fairshare.jobs (job_queue, quota_share, created_at, job_id)
	WHERE status = 'FAILED' AND quota_share IS NOT NULL;
CREATE INDEX jobs_queue_share_succeeded_idx ON fairshare.jobs (job_queue, share_identifier, created_at, job_id)
	WHERE status = 'SUCCEEDED' AND share_identifier IS NOT NULL;
CREATE INDEX jobs_queue_share_failed_idx ON fairshare.jobs (job_queue, share_identifier, created_at, job_id)
	WHERE status = 'FAILED' AND share_identifier IS NOT NULL;

------------------------------------------------------------------------------
-- Reading requests
------------------------------------------------------------------------------

-- Refuse members the operation does not have (a misspelt field would
-- otherwise be silently ignored).  Returns true, so that a caller can
-- check with an assignment (`checked := ...`), which PL/pgSQL evaluates as
-- a simple expression, where a PERFORM runs a whole query.
CREATE FUNCTION fairshare._api_job_members(request jsonb, allowed text[], what text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	k text;
BEGIN
	IF request IS NULL OR jsonb_typeof(request) <> 'object' THEN
		PERFORM fairshare._reject('22023', format('%s must be a JSON object', what));
	END IF;
	-- Every member known (the usual case): answered without a query.
	IF (request - allowed) = '{}'::jsonb THEN
		RETURN true;
	END IF;
	SELECT m INTO k FROM jsonb_object_keys(request) m WHERE m <> ALL (allowed) ORDER BY m LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('22023', format('unknown member "%s" in %s', k, what),
			format('%s takes %s.', what, array_to_string(allowed, ', ')));
	END IF;
	RETURN true;
END
$$;

-- A request member of JSON type string (NULL when absent or null).
CREATE FUNCTION fairshare._api_string(request jsonb, member text, required boolean DEFAULT false)
RETURNS text LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	v jsonb := request -> member;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		IF required THEN
			PERFORM fairshare._reject('22023', format('%s is required', member));
		END IF;
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'string' THEN
		PERFORM fairshare._reject('22023', format('%s must be a string, not %s', member, jsonb_typeof(v)));
	END IF;
	RETURN v #>> '{}';
END
$$;

-- A request member of JSON type number holding a 32-bit integer.
CREATE FUNCTION fairshare._api_integer(request jsonb, member text, required boolean DEFAULT false)
RETURNS integer LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	v jsonb := request -> member;
	n numeric;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		IF required THEN
			PERFORM fairshare._reject('22023', format('%s is required', member));
		END IF;
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'number' THEN
		PERFORM fairshare._reject('22023', format('%s must be an integer, not %s', member, jsonb_typeof(v)));
	END IF;
	n := v::text::numeric;
	IF n <> trunc(n) OR n NOT BETWEEN -2147483648 AND 2147483647 THEN
		PERFORM fairshare._reject('22023', format('%s must be an integer, not %s', member, v));
	END IF;
	RETURN n::integer;
END
$$;

-- A request member that must be a JSON array or object (NULL when absent).
CREATE FUNCTION fairshare._api_json(request jsonb, member text, json_type text, required boolean DEFAULT false)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	v jsonb := request -> member;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		IF required THEN
			PERFORM fairshare._reject('22023', format('%s is required', member));
		END IF;
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> json_type THEN
		PERFORM fairshare._reject('22023', format('%s must be a JSON %s, not %s', member, json_type, jsonb_typeof(v)));
	END IF;
	RETURN v;
END
$$;

-- The job a jobId (decimal id or service-job ARN) names, as the caller
-- sees it; P0002 when it sees none.
CREATE FUNCTION fairshare._api_job(request jsonb)
RETURNS fairshare.jobs LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	id text := fairshare._api_resource_name('service-job', fairshare._api_string(request, 'jobId', true), 'jobId');
	j fairshare.jobs;
BEGIN
	IF id ~ '^[0-9]{1,19}$' AND id::numeric <= 9223372036854775807 THEN
		SELECT * INTO j FROM fairshare.jobs WHERE job_id = id::bigint;
	END IF;
	IF j.job_id IS NULL THEN
		PERFORM fairshare._reject('P0002', format('service job %s does not exist', id),
			'A submitter''s key sees only the jobs its role submitted.');
	END IF;
	RETURN j;
END
$$;

------------------------------------------------------------------------------
-- SubmitServiceJob
------------------------------------------------------------------------------

-- AWS documents retry rules against "Received status from SageMaker: <reason>"
-- while the SageMaker SDK's default rule reads "...SageMaker:<reason>" (no
-- space); fairshare.exit_action() (40_scheduler.sql) treats both the same.
-- Written in C (src/sql_api/api_submit.c) for speed: it reads the request
-- as _api_job_members, _api_string, _api_integer and _api_json do, with
-- their messages.  Not STRICT: a NULL request is refused like any other
-- non-object.
CREATE FUNCTION fairshare._api_submit_service_job(request jsonb)
RETURNS jsonb LANGUAGE C VOLATILE SET search_path = pg_catalog, fairshare, pg_temp
AS 'MODULE_PATHNAME', 'fairshare_api_submit_service_job';

------------------------------------------------------------------------------
-- DescribeServiceJob, ListServiceJobs
------------------------------------------------------------------------------

-- The helpers a job's summary and description call for every job are
-- PL/pgSQL, not SQL: a SQL function with a SET clause is not inlined and is
-- parsed and planned again in every call from another function, where
-- PL/pgSQL keeps its plans (a page of ListServiceJobs calls them 100 times).
CREATE FUNCTION fairshare._api_resource_id(arn text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN CASE WHEN arn IS NOT NULL THEN jsonb_build_object('name', 'TrainingJobArn', 'value', arn) END;
END
$$;

-- A job's status as the API shows it.  AWS Batch's SCHEDULED means that
-- SageMaker has the training job, and the SageMaker SDK reads a training
-- job from latestAttempt for every status past RUNNABLE; fairshare's
-- SCHEDULED starts at the placement, before CreateTrainingJob is answered.
-- So a placed job whose training job is not confirmed yet (no ARN) shows
-- RUNNABLE, as it would on AWS Batch until the submission succeeds.
CREATE FUNCTION fairshare._api_job_status(j fairshare.jobs)
RETURNS text LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN CASE WHEN j.status = 'SCHEDULED' AND j.training_job_arn IS NULL THEN 'RUNNABLE' ELSE j.status::text END;
END
$$;

-- When the job was scheduled, as the API shows it: AWS's scheduledAt is
-- when the job went to SageMaker, so a job still shown RUNNABLE has none.
CREATE FUNCTION fairshare._api_scheduled_at(j fairshare.jobs)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN CASE WHEN fairshare._api_job_status(j) <> 'RUNNABLE' THEN fairshare._api_epoch_ms(j.scheduled_at) END;
END
$$;

-- The ARN of the job's latest training job, if SageMaker has made one.
-- While the job is placed, only the current attempt's: an earlier
-- attempt's training job (failed, retried) is not the one that will run.
CREATE FUNCTION fairshare._api_latest_attempt(j fairshare.jobs)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	arn text := j.training_job_arn;
BEGIN
	IF arn IS NULL AND j.status NOT IN ('SCHEDULED', 'STARTING', 'RUNNING') THEN
		SELECT a.training_job_arn INTO arn FROM fairshare.job_attempts a
		 WHERE a.job_id = j.job_id AND a.training_job_arn IS NOT NULL
		 ORDER BY a.attempt DESC LIMIT 1;
	END IF;
	RETURN CASE WHEN arn IS NOT NULL THEN jsonb_build_object('serviceResourceId', fairshare._api_resource_id(arn)) END;
END
$$;

CREATE FUNCTION fairshare._api_capacity_usage(j fairshare.jobs)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN jsonb_build_array(jsonb_build_object('capacityUnit', coalesce(j.instance_type, j.instance_types[1]),
												'quantity', j.instance_count));
END
$$;

-- The summary ListServiceJobs gives of a job.
CREATE FUNCTION fairshare._api_job_summary(j fairshare.jobs)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN jsonb_strip_nulls(jsonb_build_object(
		'latestAttempt', fairshare._api_latest_attempt(j),
		'capacityUsage', fairshare._api_capacity_usage(j),
		'createdAt', fairshare._api_epoch_ms(j.created_at),
		'jobArn', fairshare._api_arn('service-job', j.job_id::text),
		'jobId', j.job_id::text,
		'jobName', j.job_name,
		'scheduledAt', fairshare._api_scheduled_at(j),
		'serviceJobType', 'SAGEMAKER_TRAINING',
		'shareIdentifier', j.share_identifier,
		'quotaShareName', j.quota_share,
		'status', fairshare._api_job_status(j),
		'statusReason', j.status_reason,
		'startedAt', fairshare._api_epoch_ms(j.started_at),
		'stoppedAt', fairshare._api_epoch_ms(j.stopped_at)));
END
$$;

CREATE FUNCTION fairshare._api_describe_service_job(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
	payload_name text;
	attempts jsonb;
	preempted jsonb;
	checked boolean;
BEGIN
	checked := fairshare._api_job_members(request, ARRAY['jobId'], 'DescribeServiceJob');
	j := fairshare._api_job(request);
	SELECT s.training_job_name INTO payload_name FROM fairshare.api_submissions s WHERE s.job_id = j.job_id;
	-- An open attempt without an ARN is a create SageMaker has not answered
	-- yet: the job is shown RUNNABLE, and has no attempt to show for it.
	SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
			'serviceResourceId', fairshare._api_resource_id(a.training_job_arn),
			'startedAt', fairshare._api_epoch_ms(coalesce(a.started_at, a.created_at)),
			'stoppedAt', fairshare._api_epoch_ms(a.stopped_at),
			'statusReason', a.status_reason)) ORDER BY a.attempt)
	  INTO attempts FROM fairshare.job_attempts a
	 WHERE a.job_id = j.job_id AND (a.training_job_arn IS NOT NULL OR a.outcome IS NOT NULL);
	-- newest first: SDK code reads the first as the most recent
	SELECT jsonb_agg(x.o ORDER BY x.attempt DESC) INTO preempted
	  FROM (SELECT a.attempt, jsonb_strip_nulls(jsonb_build_object(
					'serviceResourceId', fairshare._api_resource_id(a.training_job_arn),
					'startedAt', fairshare._api_epoch_ms(coalesce(a.started_at, a.created_at)),
					'stoppedAt', fairshare._api_epoch_ms(a.stopped_at),
					'statusReason', a.status_reason)) AS o
			  FROM fairshare.job_attempts a
			 WHERE a.job_id = j.job_id AND a.outcome = 'PREEMPTED'
			 ORDER BY a.attempt DESC LIMIT 5) x;
	RETURN jsonb_strip_nulls(jsonb_build_object(
		'attempts', coalesce(attempts, '[]'),
		'capacityUsage', fairshare._api_capacity_usage(j),
		'createdAt', fairshare._api_epoch_ms(j.created_at),
		'isTerminated', coalesce(j.stop_kind = 'TERMINATE', false)
						OR (j.status = 'FAILED' AND coalesce(starts_with(j.status_reason, 'Terminated by '), false)),
		'jobArn', fairshare._api_arn('service-job', j.job_id::text),
		'jobId', j.job_id::text,
		'jobName', j.job_name,
		'jobQueue', fairshare._api_arn('job-queue', j.job_queue),
		'latestAttempt', fairshare._api_latest_attempt(j),
		'retryStrategy', jsonb_build_object('attempts', j.retry_attempts,
			'evaluateOnExit', (SELECT jsonb_agg(jsonb_build_object('action', upper(r ->> 'action'), 'onStatusReason', r ->> 'on_status_reason') ORDER BY n)
								 FROM jsonb_array_elements(j.evaluate_on_exit) WITH ORDINALITY AS e(r, n))),
		'scheduledAt', fairshare._api_scheduled_at(j),
		'schedulingPriority', j.scheduling_priority,
		'serviceRequestPayload', (CASE WHEN payload_name IS NOT NULL
									   THEN j.request || jsonb_build_object('TrainingJobName', payload_name)
									   ELSE j.request END)::text,
		'serviceJobType', 'SAGEMAKER_TRAINING',
		'shareIdentifier', j.share_identifier,
		'quotaShareName', j.quota_share,
		'preemptionConfiguration', CASE WHEN j.preemption_retries IS NOT NULL
			THEN jsonb_build_object('preemptionRetriesBeforeTermination', j.preemption_retries) END,
		'preemptionSummary', CASE WHEN j.preemptions > 0
			THEN jsonb_build_object('preemptedAttemptCount', j.preemptions, 'recentPreemptedAttempts', coalesce(preempted, '[]')) END,
		'startedAt', fairshare._api_epoch_ms(j.started_at),
		'status', fairshare._api_job_status(j),
		'statusReason', j.status_reason,
		'stoppedAt', fairshare._api_epoch_ms(j.stopped_at),
		'tags', j.tags,
		'timeoutConfig', CASE WHEN j.attempt_duration_seconds IS NOT NULL
			THEN jsonb_build_object('attemptDurationSeconds', j.attempt_duration_seconds) END));
END
$$;

-- AWS's rules: no status lists RUNNING jobs; a JOB_NAME or time filter
-- lists every status (jobStatus is ignored); SHARE_IDENTIFIER and
-- QUOTA_SHARE_NAME combine with jobStatus (RUNNING when none).  One filter
-- at a time, one value.  Newest first; the nextToken is the last job's
-- (created_at, job_id) with a digest of the query, so that a token is
-- refused with another query.
CREATE FUNCTION fairshare._api_list_service_jobs(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	queue text;
	status text := fairshare._api_string(request, 'jobStatus');
	max_results integer := coalesce(fairshare._api_integer(request, 'maxResults'), 100);
	token text := fairshare._api_string(request, 'nextToken');
	filters jsonb := fairshare._api_json(request, 'filters', 'array');
	filter_name text;
	filter_value text;
	after_created timestamptz;
	after_id bigint;
	digest text;
	decoded text[];
	cond text := 'true';
	rows jsonb;
	n integer;
	page fairshare.jobs[];
	branches text;
BEGIN
	PERFORM fairshare._api_job_members(request, ARRAY['jobQueue', 'jobStatus', 'maxResults', 'nextToken', 'filters'],
		'ListServiceJobs');
	IF request ? 'jobQueue' AND jsonb_typeof(request -> 'jobQueue') <> 'null' THEN
		queue := fairshare._api_resource_name('job-queue', fairshare._api_string(request, 'jobQueue'), 'jobQueue');
		IF NOT EXISTS (SELECT 1 FROM fairshare.job_queues q WHERE q.name = queue) THEN
			PERFORM fairshare._reject('P0002', format('job queue %s does not exist', queue));
		END IF;
	END IF;
	IF status IS NOT NULL AND status NOT IN ('SUBMITTED', 'PENDING', 'RUNNABLE', 'SCHEDULED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED') THEN
		PERFORM fairshare._reject('22023', format('jobStatus "%s" is not a service job status', status),
			'SUBMITTED, PENDING, RUNNABLE, SCHEDULED, STARTING, RUNNING, SUCCEEDED or FAILED.');
	END IF;
	IF max_results NOT BETWEEN 1 AND 100 THEN
		PERFORM fairshare._reject('22023', format('maxResults %s is out of range', max_results), 'maxResults is from 1 to 100.');
	END IF;
	IF filters IS NOT NULL AND jsonb_array_length(filters) > 1 THEN
		PERFORM fairshare._reject('22023', 'only one filter can be used at a time');
	END IF;
	IF filters IS NOT NULL AND jsonb_array_length(filters) = 1 THEN
		PERFORM fairshare._api_job_members(filters -> 0, ARRAY['name', 'values'], 'a filter');
		filter_name := fairshare._api_string(filters -> 0, 'name', true);
		IF jsonb_typeof(filters -> 0 -> 'values') IS DISTINCT FROM 'array' OR jsonb_array_length(filters -> 0 -> 'values') <> 1
		   OR jsonb_typeof(filters -> 0 -> 'values' -> 0) <> 'string' THEN
			PERFORM fairshare._reject('22023', format('filter %s takes exactly one string value', filter_name));
		END IF;
		filter_value := filters -> 0 -> 'values' ->> 0;
		IF filter_name = 'JOB_NAME' THEN
			cond := CASE WHEN right(filter_value, 1) = '*'
						 THEN format('lower(j.job_name) LIKE %L', replace(replace(replace(lower(left(filter_value, -1)), '\', '\\'), '%', '\%'), '_', '\_') || '%')
						 ELSE format('lower(j.job_name) = %L', lower(filter_value)) END;
			status := NULL;
		ELSIF filter_name IN ('BEFORE_CREATED_AT', 'AFTER_CREATED_AT') THEN
			IF filter_value !~ '^[0-9]{1,15}$' THEN
				PERFORM fairshare._reject('22023', format('filter %s takes milliseconds since 1970 as a decimal string', filter_name));
			END IF;
			-- createdAt is rounded to the millisecond: compare as it is shown
			cond := CASE filter_name
						WHEN 'BEFORE_CREATED_AT' THEN format('j.created_at < to_timestamp((%s - 0.5) / 1000)', filter_value)
						ELSE format('j.created_at >= to_timestamp((%s + 0.5) / 1000)', filter_value) END;
			status := NULL;
		ELSIF filter_name = 'SHARE_IDENTIFIER' THEN
			cond := format('j.share_identifier = %L', filter_value);
			status := coalesce(status, 'RUNNING');
		ELSIF filter_name = 'QUOTA_SHARE_NAME' THEN
			cond := format('j.quota_share = %L', filter_value);
			status := coalesce(status, 'RUNNING');
		ELSE
			PERFORM fairshare._reject('22023', format('unknown filter name "%s"', filter_name),
				'Filters are JOB_NAME, BEFORE_CREATED_AT, AFTER_CREATED_AT, SHARE_IDENTIFIER and QUOTA_SHARE_NAME.');
		END IF;
	ELSE
		status := coalesce(status, 'RUNNING');
	END IF;
	digest := left(md5(concat_ws('|', queue, status, cond)), 12);
	IF token IS NOT NULL THEN
		BEGIN
			decoded := string_to_array(convert_from(decode(token, 'base64'), 'UTF8'), ':');
			after_created := to_timestamp(decoded[2]::numeric / 1000000);
			after_id := decoded[3]::bigint;
		EXCEPTION WHEN OTHERS THEN
			decoded := NULL;
		END;
		-- IS DISTINCT FROM: an empty token decodes to no parts at all.
		IF decoded IS NULL OR array_length(decoded, 1) IS DISTINCT FROM 4 OR decoded[1] IS DISTINCT FROM 'fsj1'
		   OR decoded[4] IS DISTINCT FROM digest THEN
			PERFORM fairshare._reject('22023', 'invalid nextToken',
				'Pass back the nextToken of the previous answer, with the same jobQueue, jobStatus and filters.');
		END IF;
	END IF;

	-- The status as a literal (one of the list above), so that the planner
	-- can prove the partial indexes' predicates from it.  The API's RUNNABLE
	-- also holds fairshare's SCHEDULED jobs without an ARN (_api_job_status):
	-- a branch of its own for each, each read in order from its index and
	-- merged, so that a page never sorts a queue's whole backlog.
	SELECT string_agg(format(
			'(SELECT * FROM fairshare.jobs j WHERE %s %s %s %s '
			' ORDER BY j.created_at DESC, j.job_id DESC LIMIT $5 + 1)',
			CASE WHEN queue IS NOT NULL THEN 'j.job_queue = $1 AND' ELSE '' END,
			b.status_condition,
			CASE WHEN token IS NOT NULL THEN '(j.created_at, j.job_id) < ($3, $4) AND' ELSE '' END,
			cond), ' UNION ALL ')
	  INTO branches
	  FROM unnest(CASE
			WHEN status = 'RUNNABLE' THEN ARRAY['j.status = ''RUNNABLE''::fairshare.job_status AND',
												'j.status = ''SCHEDULED''::fairshare.job_status AND j.training_job_arn IS NULL AND']
			WHEN status = 'SCHEDULED' THEN ARRAY['j.status = ''SCHEDULED''::fairshare.job_status AND j.training_job_arn IS NOT NULL AND']
			WHEN status IS NOT NULL THEN ARRAY[format('j.status = %L::fairshare.job_status AND', status)]
			ELSE ARRAY[''] END) AS b(status_condition);
	EXECUTE format(
		'SELECT array_agg(j ORDER BY j.created_at DESC, j.job_id DESC) FROM ('
		'  SELECT * FROM (%s) u ORDER BY u.created_at DESC, u.job_id DESC LIMIT $5 + 1) j',
		branches)
	INTO page
	USING queue, status, after_created, after_id, max_results;
	n := coalesce(array_length(page, 1), 0);
	SELECT coalesce(jsonb_agg(fairshare._api_job_summary(page[i]) ORDER BY i), '[]') INTO rows
	  FROM generate_series(1, least(n, max_results)) i;
	RETURN jsonb_strip_nulls(jsonb_build_object('jobSummaryList', rows,
		'nextToken', CASE WHEN n > max_results THEN
			translate(encode(convert_to(format('fsj1:%s:%s:%s',
				(extract(epoch FROM page[max_results].created_at) * 1000000)::bigint, page[max_results].job_id, digest),
				'UTF8'), 'base64'), E'\n', '') END));
END
$$;

------------------------------------------------------------------------------
-- UpdateServiceJob, TerminateServiceJob
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._api_update_service_job(request jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
BEGIN
	PERFORM fairshare._api_job_members(request, ARRAY['jobId', 'schedulingPriority'], 'UpdateServiceJob');
	j := fairshare._api_job(request);
	PERFORM fairshare.update_job_priority(j.job_id, fairshare._api_integer(request, 'schedulingPriority', true));
	RETURN jsonb_build_object('jobArn', fairshare._api_arn('service-job', j.job_id::text),
							  'jobName', j.job_name, 'jobId', j.job_id::text);
END
$$;

CREATE FUNCTION fairshare._api_terminate_service_job(request jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	j fairshare.jobs;
BEGIN
	PERFORM fairshare._api_job_members(request, ARRAY['jobId', 'reason'], 'TerminateServiceJob');
	j := fairshare._api_job(request);
	PERFORM fairshare.terminate_job(j.job_id, fairshare._api_string(request, 'reason', true));
	RETURN '{}'::jsonb;
END
$$;

------------------------------------------------------------------------------
-- GetJobQueueSnapshot
------------------------------------------------------------------------------

-- The instances a queue's jobs hold, per share and instance type, and the
-- queue's kind: aggregates only, readable by every fairshare role (viewers
-- read the same figures in the dashboard views).  NULL kind: no such queue.
CREATE FUNCTION fairshare._api_queue_usage(queue text, OUT kind text, OUT usage jsonb)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	SELECT coalesce(p.kind, 'FIFO') INTO kind
	  FROM fairshare.job_queues q LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
	 WHERE q.name = queue;
	IF kind IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(jsonb_agg(jsonb_build_object('share', s, 'unit', t, 'quantity', n)), '[]') INTO usage
	  FROM (SELECT coalesce(j.quota_share, j.share_identifier) AS s, j.instance_type AS t, sum(j.instance_count) AS n
			  FROM fairshare.jobs j
			 WHERE j.job_queue = queue AND j.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
			 GROUP BY 1, 2) x;
END
$$;
REVOKE ALL ON FUNCTION fairshare._api_queue_usage(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._api_queue_usage(text) TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- frontOfQuotaShares: each quota share's first RUNNABLE jobs (at most 100
-- a share, as the model's list allows), in the order the share serves them
-- -- priority, then the time it entered the queue, then id, the scheduler's
-- share order, read through jobs_runnable_quota_idx one share at a time.
-- Shares without a waiting job are left out.  Job ARNs and times only,
-- readable by every fairshare role as fairshare.queue_snapshot() is.
CREATE FUNCTION fairshare._api_quota_share_fronts(queue text)
RETURNS jsonb LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT coalesce(jsonb_object_agg(s.name, f.jobs), '{}')
	  FROM fairshare.quota_shares s
	 CROSS JOIN LATERAL (
			SELECT jsonb_agg(jsonb_build_object('jobArn', arn.prefix || h.job_id,
												'earliestTimeAtPosition', fairshare._api_epoch_ms(h.runnable_at))
							 ORDER BY h.scheduling_priority DESC, h.runnable_at, h.job_id) AS jobs
			  FROM (SELECT j.job_id, j.scheduling_priority, j.runnable_at
					  FROM fairshare.jobs j
					 WHERE j.job_queue = queue AND j.quota_share = s.name AND j.status = 'RUNNABLE'
					 ORDER BY j.scheduling_priority DESC, j.runnable_at, j.job_id
					 LIMIT 100) h,
				   (SELECT fairshare._api_arn('service-job', '') AS prefix) arn) f
	 WHERE s.job_queue = queue AND f.jobs IS NOT NULL
$$;
REVOKE ALL ON FUNCTION fairshare._api_quota_share_fronts(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._api_quota_share_fronts(text) TO fairshare_admin, fairshare_submitter, fairshare_viewer;

CREATE FUNCTION fairshare._api_get_job_queue_snapshot(request jsonb)
RETURNS jsonb LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	queue text;
	u record;
	now_ms bigint := fairshare._api_epoch_ms(now());
	snap jsonb;
	front jsonb;
	front_shares jsonb;
	util jsonb;
BEGIN
	PERFORM fairshare._api_job_members(request, ARRAY['jobQueue'], 'GetJobQueueSnapshot');
	queue := fairshare._api_resource_name('job-queue', fairshare._api_string(request, 'jobQueue', true), 'jobQueue');
	SELECT * INTO u FROM fairshare._api_queue_usage(queue);
	IF u.kind IS NULL THEN
		PERFORM fairshare._reject('P0002', format('job queue %s does not exist', queue));
	END IF;
	-- (as jsonb: a temporary table is not allowed in the API's restricted session)
	SELECT coalesce(jsonb_agg(jsonb_build_object('pos', f.position, 'job_id', f.job_id, 'share', f.share,
												 'at', fairshare._api_epoch_ms(f.earliest_time_at_position))), '[]')
	  INTO snap FROM fairshare.queue_snapshot(queue, 100) f;
	SELECT coalesce(jsonb_agg(jsonb_build_object('jobArn', fairshare._api_arn('service-job', f ->> 'job_id'),
												 'earliestTimeAtPosition', (f ->> 'at')::bigint) ORDER BY (f ->> 'pos')::integer), '[]')
	  INTO front FROM jsonb_array_elements(snap) f;
	IF u.kind = 'QUOTA_SHARE' THEN
		front_shares := fairshare._api_quota_share_fronts(queue);
	END IF;

	util := jsonb_build_object('totalCapacityUsage',
		(SELECT coalesce(jsonb_agg(jsonb_build_object('capacityUnit', t, 'quantity', n) ORDER BY t), '[]')
		   FROM (SELECT e ->> 'unit' AS t, sum((e ->> 'quantity')::numeric) AS n
				   FROM jsonb_array_elements(u.usage) e GROUP BY 1) x),
		'lastUpdatedAt', now_ms);
	IF u.kind IN ('FAIR_SHARE', 'QUOTA_SHARE') THEN
		util := util || jsonb_build_object(
			CASE u.kind WHEN 'FAIR_SHARE' THEN 'fairshareUtilization' ELSE 'quotaShareUtilization' END,
			jsonb_strip_nulls(jsonb_build_object(
				'activeShareCount', CASE WHEN u.kind = 'FAIR_SHARE'
					THEN (SELECT count(DISTINCT e ->> 'share') FROM jsonb_array_elements(u.usage) e) END,
				'topCapacityUtilization',
				(SELECT coalesce(jsonb_agg(jsonb_build_object(
							CASE u.kind WHEN 'FAIR_SHARE' THEN 'shareIdentifier' ELSE 'quotaShareName' END, s,
							'capacityUsage', cap) ORDER BY total DESC, s), '[]')
				   FROM (SELECT e ->> 'share' AS s, sum((e ->> 'quantity')::numeric) AS total,
								jsonb_agg(jsonb_build_object('capacityUnit', e ->> 'unit', 'quantity', (e ->> 'quantity')::numeric)
										  ORDER BY e ->> 'unit') AS cap
						   FROM jsonb_array_elements(u.usage) e GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20) y))));
	END IF;
	RETURN jsonb_strip_nulls(jsonb_build_object(
		'frontOfQueue', jsonb_build_object('jobs', front, 'lastUpdatedAt', now_ms),
		'frontOfQuotaShares', CASE WHEN front_shares IS NOT NULL
			THEN jsonb_build_object('quotaShares', front_shares, 'lastUpdatedAt', now_ms) END,
		'queueUtilization', util));
END
$$;

-- The job operations are the admins' and the submitters': a viewer reads no
-- job rows, so its key is told the operation and the roles it needs rather
-- than which table refused it.  The queue snapshot is every fairshare
-- role's.  What an operation may do is then decided by the grants and
-- row-level security on what it touches.
DO $grants$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
			  WHERE p.pronamespace = 'fairshare'::regnamespace
				AND p.proname IN ('_api_submit_service_job', '_api_describe_service_job', '_api_list_service_jobs',
								  '_api_update_service_job', '_api_terminate_service_job', '_api_get_job_queue_snapshot')
	LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO fairshare_admin, fairshare_submitter', f);
	END LOOP;
END
$grants$;
GRANT EXECUTE ON FUNCTION fairshare._api_get_job_queue_snapshot(jsonb) TO fairshare_viewer;
