-- sql/upgrade/0.1.0--0.2.0.sql — ALTER EXTENSION fairshare UPDATE from
-- 0.1.0 (the first release) to 0.2.0: the changes to objects 0.1.0 has.
--
-- make assembles sql/fairshare--0.1.0--0.2.0.sql from this file, the parts
-- that are wholly new in 0.2.0 (sql/parts/75_orphans.sql, 90_api.sql,
-- 91_api_admin.sql: new objects and ADD COLUMNs, the same statements as a
-- fresh install runs) and sql/upgrade/0.1.0--0.2.0-after.sql (the changes
-- to 0.1.0's objects that need those new objects first).  Every change
-- to the catalog between the two releases is in one of them, in the order
-- the install script (sql/parts/*.sql) has them.  After it, the catalog is the
-- one CREATE EXTENSION fairshare makes for 0.2.0: test/upgrade/catalog.test
-- compares the two, object by object.  The data stays: rows are only added
-- (the installation id) or filled in (jobs.submitter_oid).
--
-- It runs while the dispatcher runs: the 0.2.0 library's dispatcher waits
-- while the catalog is older than the library and starts its turns once
-- this script has committed; users' sessions wait for the locks it takes
-- (docs/upgrading.md, 'It is online': setting jobs.submitter_oid writes
-- every job row, so the time grows with fairshare.jobs).
--
-- The check that the schema belongs to the installing role and that no
-- other role may create objects in it (sql/parts/05_schema.sql) runs
-- before this file, as it does before a new installation.

\echo Use "ALTER EXTENSION fairshare UPDATE TO '0.2.0'" to load this file. \quit

------------------------------------------------------------------------------
-- Every function pins its search_path (the body is unchanged)
------------------------------------------------------------------------------

ALTER FUNCTION fairshare._alert_candidates() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._cancel_unsent(bigint, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._check_batch_size(integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._check_name(text, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._check_state(text, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._check_window(timestamptz, timestamptz) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._config_changed() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._explain(bigint) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._explain_pass(bigint, text, text, integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._guard_job_queue_delete() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._guard_quota_share_delete() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._guard_service_environment_delete() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._housekeeping_on_drop() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._housekeeping_sync() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._human_duration(interval) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._is_instance_type(text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._jobs_ahead_in_share(fairshare.jobs, integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._prepare_pass(integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._record_transitions() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._refuse_placed_delete() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._reject(text, text, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._retention_delete(text, timestamptz, integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_alert_rule() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_capacity_limit() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_job_queue() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_queue_environment() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_quota_share() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_quota_share_limit() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_scheduling_policy() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._validate_share_distribution() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare._wake_dispatcher() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.alert_payload(fairshare.alert_events) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.apply_retention_batch(integer, timestamptz) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.apply_status(bigint, jsonb) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.dispatcher_state() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.evaluate_alerts() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.exit_action(jsonb, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.explain(bigint) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.failures_by_hour(timestamptz, timestamptz) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.fair_share_status() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.job_time_stats(timestamptz, timestamptz) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.queue_snapshot(text, integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.queue_status() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.recent_failures() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.record_utilization() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.retention_cutoff() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.running_state(text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.schedule(boolean) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.schedule_housekeeping() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.terminate_job(bigint, text) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.throughput_by_hour(timestamptz, timestamptz) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.unschedule_housekeeping() SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.update_job_priority(bigint, integer) SET search_path = pg_catalog, fairshare, pg_temp;
ALTER FUNCTION fairshare.valid_transition(fairshare.job_status, fairshare.job_status) SET search_path = pg_catalog, fairshare, pg_temp;

------------------------------------------------------------------------------
-- 10_catalog.sql: capacity counts are numeric, whole numbers only
------------------------------------------------------------------------------

-- The views over capacity_limits and quota_share_limits depend on the
-- column's type: drop them with their wrapper functions and public views,
-- and make them again below (with their comments and privileges) as the
-- install script does.
--
-- Privileges granted on them since they were installed (a dashboard's
-- role, say) go with them.  A GRANT in this script would be recorded as the
-- extension's own (pg_init_privs), and pg_dump would then leave it out, so
-- the update names them instead: a WARNING whose hint has the statements
-- to run once it has committed.
DO $privileges$
DECLARE
	views pg_catalog.regclass[] := ARRAY['fairshare.environment_utilization', 'fairshare._environment_utilization',
										 'fairshare.quota_share_status', 'fairshare._quota_share_status'];
	statements text;
	column_grants boolean;
BEGIN
	WITH objects (kind, name, acl, initial) AS (
		SELECT 'TABLE', 'fairshare.' || pg_catalog.quote_ident(c.relname),
			   coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner)),
			   coalesce(i.initprivs, pg_catalog.acldefault('r', c.relowner))
		  FROM pg_catalog.pg_class c
		  LEFT JOIN pg_catalog.pg_init_privs i
			ON i.classoid = 'pg_catalog.pg_class'::pg_catalog.regclass AND i.objoid = c.oid AND i.objsubid = 0
		 WHERE c.oid = ANY (views)
		UNION ALL
		SELECT 'FUNCTION', 'fairshare.' || pg_catalog.quote_ident(p.proname) || '('
			   || pg_catalog.pg_get_function_identity_arguments(p.oid) || ')',
			   coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner)),
			   coalesce(i.initprivs, pg_catalog.acldefault('f', p.proowner))
		  FROM pg_catalog.pg_proc p
		  LEFT JOIN pg_catalog.pg_init_privs i
			ON i.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND i.objoid = p.oid AND i.objsubid = 0
		 WHERE p.oid IN ('fairshare.environment_utilization()'::pg_catalog.regprocedure,
						 'fairshare.quota_share_status()'::pg_catalog.regprocedure)),
	changed (verb, kind, name, privilege, grantee, grantable) AS (
		SELECT 'GRANT', o.kind, o.name, a.privilege_type, a.grantee, a.is_grantable
		  FROM objects o, LATERAL (SELECT * FROM pg_catalog.aclexplode(o.acl)
								   EXCEPT SELECT * FROM pg_catalog.aclexplode(o.initial)) a
		UNION ALL
		SELECT 'REVOKE', o.kind, o.name, a.privilege_type, a.grantee, false
		  FROM objects o, LATERAL (SELECT * FROM pg_catalog.aclexplode(o.initial)
								   EXCEPT SELECT * FROM pg_catalog.aclexplode(o.acl)) a)
	SELECT pg_catalog.string_agg(pg_catalog.format('%s %s ON %s %s %s %s%s;', verb, privilege, kind, name,
						CASE verb WHEN 'GRANT' THEN 'TO' ELSE 'FROM' END,
						CASE grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(grantee)) END,
						CASE WHEN grantable THEN ' WITH GRANT OPTION' ELSE '' END),
						' ' ORDER BY name, verb DESC, grantee, privilege)
	  INTO statements FROM changed;
	-- privileges on single columns of the views are not spelt out, only said
	SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
					WHERE a.attacl IS NOT NULL AND a.attnum > 0
					  AND a.attrelid = ANY (views))
	  INTO column_grants;
	IF statements IS NOT NULL OR column_grants THEN
		RAISE WARNING 'this update makes fairshare''s utilisation views and their functions again, without the privileges changed on them since they were installed'
			USING HINT = 'Once the update has committed, run: ' || coalesce(statements, '')
						 || CASE WHEN column_grants THEN ' (and grant again the privileges you gave on single columns of these views)' ELSE '' END;
	END IF;
END
$privileges$;

DROP VIEW fairshare.environment_utilization;
DROP FUNCTION fairshare.environment_utilization();
DROP VIEW fairshare._environment_utilization;
DROP VIEW fairshare.quota_share_status;
DROP FUNCTION fairshare.quota_share_status();
DROP VIEW fairshare._quota_share_status;

-- numeric, so that 2.5 is refused rather than rounded on the way in
ALTER TABLE fairshare.capacity_limits
	DROP CONSTRAINT capacity_limits_max_capacity_check,
	ALTER COLUMN max_capacity TYPE numeric,
	ADD CONSTRAINT capacity_limits_max_capacity_check
		CHECK (max_capacity BETWEEN 0 AND 1000000 AND max_capacity = trunc(max_capacity));
ALTER TABLE fairshare.quota_share_limits
	DROP CONSTRAINT quota_share_limits_max_capacity_check,
	ALTER COLUMN max_capacity TYPE numeric,
	ADD CONSTRAINT quota_share_limits_max_capacity_check
		CHECK (max_capacity BETWEEN 0 AND 1000000 AND max_capacity = trunc(max_capacity));

-- the region an attempt's create went to, where its environment names none
ALTER TABLE fairshare.job_attempts ADD COLUMN region text;
COMMENT ON COLUMN fairshare.job_attempts.region IS
	'The AWS region its CreateTrainingJob was sent to, where its environment names none (set by the dispatcher before sending): '
	'the attempt is looked up, described and stopped there whatever the server''s region is since.';

-- a queue's own checkpoint interval, for the work a preemption would lose
ALTER TABLE fairshare.job_queues
	ADD COLUMN checkpoint_interval interval CHECK (checkpoint_interval BETWEEN '0' AND '7 days');
COMMENT ON COLUMN fairshare.job_queues.checkpoint_interval IS
	'How often a job of this queue whose request has CheckpointConfig is taken to save a checkpoint, '
	'for the work a preemption would lose; NULL = fairshare.checkpoint_interval, 0 = none counted.';
-- and the queue's trigger, which names an out-of-range one and its range
-- (10_catalog.sql's, kept equal by test/upgrade/catalog.test)
CREATE OR REPLACE FUNCTION fairshare._validate_job_queue()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	IF TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name THEN
		PERFORM fairshare._reject('22023', format('job queue "%s" cannot be renamed', OLD.name));
	END IF;
	PERFORM fairshare._check_name('job queue', NEW.name);
	PERFORM fairshare._check_state('job queue', NEW.state);
	IF NEW.priority IS NULL OR NEW.priority NOT BETWEEN 0 AND 1000 THEN
		PERFORM fairshare._reject('22023',
			format('priority %s of job queue "%s" is out of range', coalesce(NEW.priority::text, 'NULL'), NEW.name),
			'Queue priority is from 0 to 1000; higher is served first.');
	END IF;
	IF NEW.scheduling_policy IS NOT NULL
	   AND NOT EXISTS (SELECT 1 FROM fairshare.scheduling_policies WHERE name = NEW.scheduling_policy) THEN
		PERFORM fairshare._reject('23503',
			format('scheduling policy "%s" does not exist', NEW.scheduling_policy));
	END IF;
	IF NEW.checkpoint_interval NOT BETWEEN '0' AND '7 days' THEN
		PERFORM fairshare._reject('22023',
			format('checkpoint_interval %s of job queue "%s" is out of range', NEW.checkpoint_interval, NEW.name),
			'It is from 0 (no checkpoints counted for this queue''s jobs) to 7 days; '
			'NULL takes the setting fairshare.checkpoint_interval.');
	END IF;
	IF NEW.strict_fifo IS NULL THEN
		NEW.strict_fifo := false;
	END IF;
	IF NEW.strict_fifo AND NEW.scheduling_policy IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('strict_fifo applies only to FIFO queues; job queue "%s" has scheduling policy "%s"', NEW.name, NEW.scheduling_policy));
	END IF;
	IF TG_OP = 'UPDATE' AND NEW.scheduling_policy IS DISTINCT FROM OLD.scheduling_policy THEN
		SELECT count(*) INTO n FROM fairshare.jobs
		 WHERE job_queue = OLD.name AND status NOT IN ('SUCCEEDED', 'FAILED');
		IF n > 0 THEN
			PERFORM fairshare._reject('2BP01',
				format('cannot change the scheduling policy of job queue "%s": it has %s unfinished jobs', OLD.name, n),
				'Disable the queue and let its jobs finish, or terminate them.');
		END IF;
		IF EXISTS (SELECT 1 FROM fairshare.quota_shares WHERE job_queue = OLD.name) THEN
			PERFORM fairshare._reject('2BP01',
				format('cannot change the scheduling policy of job queue "%s": it has quota shares', OLD.name),
				'Delete its quota shares first.');
		END IF;
	END IF;
	RETURN NEW;
END
$$;

DROP FUNCTION fairshare._check_capacity(text, text, integer);
CREATE FUNCTION fairshare._check_capacity(kind text, unit text, max_capacity numeric)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF unit IS NULL OR (unit <> 'NUM_INSTANCES' AND NOT fairshare._is_instance_type(unit)) THEN
		PERFORM fairshare._reject('22023',
			format('invalid capacity unit "%s" in %s', coalesce(unit, 'NULL'), kind),
			'A capacity unit is NUM_INSTANCES or an instance type such as ml.p4d.24xlarge.');
	END IF;
	IF max_capacity IS NULL OR max_capacity < 0 OR max_capacity > 1000000 THEN
		PERFORM fairshare._reject('22023',
			format('max_capacity %s for %s in %s is out of range', coalesce(max_capacity::text, 'NULL'), unit, kind),
			'max_capacity is a number of instances from 0 to 1000000.');
	END IF;
	IF max_capacity <> trunc(max_capacity) THEN
		PERFORM fairshare._reject('22023',
			format('max_capacity %s for %s in %s is not a whole number of instances', max_capacity, unit, kind),
			'max_capacity counts instances: 0, 1, 2, ... up to 1000000.');
	END IF;
END
$$;

------------------------------------------------------------------------------
-- 10_catalog.sql: endpoints are checked by the sender's own rule
------------------------------------------------------------------------------

-- What the sender (src/aws/endpoint.c) would refuse in an endpoint_url or
-- region, so that the table never holds what cannot be used; NULL if none.
CREATE FUNCTION fairshare._endpoint_problem(endpoint_url text, region text)
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_endpoint_problem'
LANGUAGE C STABLE;

-- Take, for the transaction, one of the locks fairshare serialises its own
-- work on ('scheduling pass', 'alert evaluation'; src/locks.c).  They are
-- in a lock space SQL's pg_advisory_lock() cannot name, so no other
-- session can hold a pass or alerting back by taking them.
CREATE FUNCTION fairshare._lock(what text)
RETURNS void
AS 'MODULE_PATHNAME', 'fairshare_lock_sql'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
REVOKE ALL ON FUNCTION fairshare._lock(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._lock(text) TO fairshare_admin;

-- The jobs placed on a service environment, counted once any pass that
-- may be placing one there has committed: a pass holds the pass lock
-- until it commits, and the count, taken with a new snapshot once the
-- lock is ours, sees its job.  A pass after this one reads the
-- environments once the caller's transaction has ended.  Only at READ
-- COMMITTED: a transaction that keeps its first snapshot would count
-- without the jobs placed since it began.
CREATE FUNCTION fairshare._jobs_placed_on(environment text)
RETURNS bigint LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	IF current_setting('transaction_isolation') IN ('repeatable read', 'serializable') THEN
		PERFORM fairshare._reject('25001',
			format('the jobs placed on service environment "%s" can be counted only at READ COMMITTED, not at %s',
				   environment, upper(current_setting('transaction_isolation'))),
			'Change or delete a service environment''s endpoint or region in a READ COMMITTED transaction (the default): '
			'a transaction that keeps its first snapshot does not see the jobs placed since it began.');
	END IF;
	PERFORM fairshare._lock('scheduling pass');
	SELECT count(*) INTO n FROM fairshare.jobs
	 WHERE service_environment = environment AND status IN ('SCHEDULED', 'STARTING', 'RUNNING');
	RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION fairshare._validate_service_environment()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	problem text;
	n bigint;
BEGIN
	IF TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name THEN
		PERFORM fairshare._reject('22023',
			format('service environment "%s" cannot be renamed', OLD.name),
			'Create a new environment and move the queues to it.');
	END IF;
	-- A placed job's training job is described and stopped where it was
	-- created: at another endpoint or region it is not found, and the job
	-- would fail while its training job ran on unwatched.
	IF TG_OP = 'UPDATE' AND (NEW.endpoint_url IS DISTINCT FROM OLD.endpoint_url
							 OR NEW.region IS DISTINCT FROM OLD.region) THEN
		n := fairshare._jobs_placed_on(OLD.name);
		IF n > 0 THEN
			PERFORM fairshare._reject('55000',
				format('service environment "%s" has %s jobs placed on it; its endpoint_url and region cannot change now',
					   OLD.name, n),
				'Disable the environment and wait for its jobs to finish, or create a new environment with the new endpoint and move the queues to it.');
		END IF;
	END IF;
	PERFORM fairshare._check_name('service environment', NEW.name);
	PERFORM fairshare._check_state('service environment', NEW.state);
	-- The endpoint is checked when it is written (an allow-list changed
	-- since does not stop an environment from being disabled).
	problem := fairshare._endpoint_problem(
		CASE WHEN TG_OP = 'INSERT' OR NEW.endpoint_url IS DISTINCT FROM OLD.endpoint_url THEN NEW.endpoint_url END,
		NEW.region);
	IF problem IS NOT NULL THEN
		PERFORM fairshare._reject('22023',
			format('service environment "%s": %s', NEW.name, problem),
			'Use AWS''s https://api.sagemaker.<region>.amazonaws.com, or an endpoint a superuser lists in '
			'fairshare.endpoint_allowlist (plain http only to 127.0.0.1, localhost or [::1]), with no user name, '
			'password, query or fragment, and a region such as us-east-1; NULL means the default.');
	END IF;
	RETURN NEW;
END
$$;

-- An environment's delete waits for a pass that may be placing a job on it.
CREATE OR REPLACE FUNCTION fairshare._guard_service_environment_delete()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	q text;
	n bigint;
BEGIN
	SELECT job_queue INTO q FROM fairshare.queue_environments
	 WHERE service_environment = OLD.name ORDER BY job_queue LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('2BP01',
			format('service environment "%s" is still used by job queue "%s"', OLD.name, q),
			'Remove it from the queue''s queue_environments first.');
	END IF;
	n := fairshare._jobs_placed_on(OLD.name);
	IF n > 0 THEN
		PERFORM fairshare._reject('2BP01',
			format('service environment "%s" still has %s jobs placed on it', OLD.name, n),
			'Disable the environment and wait for its jobs to finish.');
	END IF;
	RETURN OLD;
END
$$;

------------------------------------------------------------------------------
-- 10_catalog.sql: a job belongs to its submitter's role OID too
------------------------------------------------------------------------------

-- Who submitted it, as a role OID beside the name: a role that is
-- renamed, and another created with the old name, must not see or act
-- on the first one's jobs.  Set by the submission trigger.  The last
-- column, as in a new installation.
ALTER TABLE fairshare.jobs ADD COLUMN submitter_oid oid NOT NULL DEFAULT 0;

-- The jobs there are belong to the roles that have their submitters' names
-- now (a job whose role is gone keeps 0 and is seen by admins only).  No
-- trigger runs: this changes no job's state, and submitter_oid is otherwise
-- fixed at submission.
DO $backfill$
DECLARE
	before pg_catalog.text := pg_catalog.current_setting('session_replication_role');
BEGIN
	PERFORM pg_catalog.set_config('session_replication_role', 'replica', true);
	UPDATE fairshare.jobs j SET submitter_oid = r.oid
	  FROM pg_catalog.pg_roles r
	 WHERE r.rolname = j.submitted_by AND j.submitter_oid <> r.oid;
	PERFORM pg_catalog.set_config('session_replication_role', before, true);
END
$backfill$;

------------------------------------------------------------------------------
-- 10_catalog.sql: the installation
------------------------------------------------------------------------------

-- Who "we" are at SageMaker.  Another installation (a second database, or
-- this one dropped and created again) hands out the same job ids, and so
-- could hand out the same training job names; the dispatcher adopts an
-- existing training job only when its tags carry this id and its job's id.
-- Drawn when the extension is created; pg_dump keeps it, so a restored copy
-- (or a standby, which replicates it) is the same installation.  A restore
-- runs CREATE EXTENSION, which draws a new row, and then copies the
-- original's beside it: the oldest row is the installation, so the
-- original's wins.  Its tag_key signs the fairshare:job-submitted tag of
-- every training job the dispatcher creates (src/tables/installation.c),
-- so that nobody who may create training jobs in the account can make one
-- that is adopted: the installation id, job ids, names and submission
-- times are all known to someone.  Only the owner reads the table
-- (row-level security keeps pg_read_all_data out, as for API keys).
CREATE TABLE fairshare.installation (
	installation_id	uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	created_at		timestamptz NOT NULL DEFAULT now(),
	tag_key			text NOT NULL DEFAULT pg_catalog.replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
					CHECK (tag_key ~ '^[0-9a-f]{64}$')
);
COMMENT ON TABLE fairshare.installation IS
	'This installation''s id (the oldest row): in every training job name (its first 8 hex digits) '
	'and in the fairshare:installation tag, checked before an existing training job is adopted; '
	'its tag_key signs the fairshare:job-submitted tag.';
ALTER TABLE fairshare.installation ENABLE ROW LEVEL SECURITY;
-- ANALYZE would copy the keys (a restore leaves two rows) into
-- pg_statistic, which pg_read_all_data reads past row-level security.
ALTER TABLE fairshare.installation ALTER COLUMN tag_key SET STATISTICS 0;

INSERT INTO fairshare.installation DEFAULT VALUES;

-- The installation id, for tags, names and people who compare installations.
CREATE FUNCTION fairshare.installation_id()
RETURNS uuid LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT installation_id FROM fairshare.installation ORDER BY created_at, installation_id LIMIT 1
$$;
COMMENT ON FUNCTION fairshare.installation_id() IS
	'This installation''s id (drawn by CREATE EXTENSION, kept by pg_dump and on standbys).';

------------------------------------------------------------------------------
-- 20_lifecycle.sql
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION fairshare._check_job_options(evaluate_on_exit jsonb, tags jsonb)
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

-- The training job name of an attempt: fairshare.job_name_prefix, the
-- installation's first 8 hex digits, the job id and the attempt number
-- (src/tables/installation.c, the one definition).
CREATE OR REPLACE FUNCTION fairshare.training_job_name(job_id bigint, attempt integer)
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_training_job_name_sql'
LANGUAGE C STABLE STRICT
SET search_path = pg_catalog, fairshare, pg_temp;

-- The transitions' rows: one scan of the joined transition tables says which
-- kinds of rows a statement must write, and only those statements run
-- (linear in the rows an UPDATE touches at a million rows; JIT off).
CREATE OR REPLACE FUNCTION fairshare._record_transitions()
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

-- The rules' citations point into docs/ (the comments' text only).
COMMENT ON FUNCTION fairshare.valid_transition(fairshare.job_status, fairshare.job_status) IS
	'true when a job may go from old_status to new_status (docs/lifecycle.md)';
COMMENT ON FUNCTION fairshare.apply_status(bigint, jsonb) IS
	'Apply a SageMaker DescribeTrainingJob response to a job: the state it maps to, retries, capacity fallback, '
	'preemption and termination outcomes (docs/lifecycle.md and docs/dispatcher.md).  Returns the job''s status afterwards.';

------------------------------------------------------------------------------
-- 30_roles.sql: row-level security on the role's name and OID
------------------------------------------------------------------------------

-- A submitter may name every column but job_id in its INSERT (the
-- submission trigger refuses those it may not set): the new one too.
GRANT INSERT (submitter_oid) ON fairshare.jobs TO fairshare_submitter;

-- The role the session acts as, by OID (current_user gives only its name).
CREATE FUNCTION fairshare._current_role_oid()
RETURNS oid
AS 'MODULE_PATHNAME', 'fairshare_current_role_oid'
LANGUAGE C STABLE PARALLEL SAFE;

ALTER POLICY submitter_select_own ON fairshare.jobs
	USING (submitted_by = current_user AND submitter_oid = fairshare._current_role_oid());
ALTER POLICY submitter_insert_own ON fairshare.jobs
	WITH CHECK (submitted_by = current_user AND submitter_oid = fairshare._current_role_oid());

------------------------------------------------------------------------------
-- 40_scheduler.sql: a bounded pass, as the dispatcher runs them
------------------------------------------------------------------------------

CREATE FUNCTION fairshare.schedule(dry_run boolean, max_jobs integer)
RETURNS TABLE (job_id bigint, action text, service_environment text, instance_type text, reason text)
AS 'MODULE_PATHNAME', 'fairshare_schedule'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.schedule(boolean, integer) IS
	'One scheduling pass that places or preempts at most max_jobs jobs, counting the job each reclaim is for (a reclaim''s victims and that job together), and takes in at most max_jobs new ones, as the dispatcher''s passes do; what is left waits for the next pass.';
REVOKE ALL ON FUNCTION fairshare.schedule(boolean, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.schedule(boolean, integer) TO fairshare_admin;

------------------------------------------------------------------------------
-- 40_scheduler.sql: a capacity failure is known by how its reason begins,
-- never by words further in, which may be the job's own (an
-- AlgorithmError's text is the training script's, and was retried without
-- end when it named an InsufficientCapacity error)
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION fairshare.is_capacity_failure(failure_reason text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT failure_reason LIKE 'CapacityError%'
		OR failure_reason LIKE 'ResourceLimitExceeded%'
		OR failure_reason LIKE 'InsufficientCapacity%'
$$;

------------------------------------------------------------------------------
-- 40_scheduler.sql: a training job is adopted only if made after its job
-- was submitted (not after the attempt's placement)
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION fairshare.apply_status(job_id bigint, describe_response jsonb)
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

------------------------------------------------------------------------------
-- 40_scheduler.sql: applying SageMaker's answers is the dispatcher's (a
-- superuser's): an admin's could end a job whose training job runs on
------------------------------------------------------------------------------

REVOKE EXECUTE ON FUNCTION
    fairshare.apply_status(bigint, jsonb),
    fairshare._cancel_unsent(bigint, text)
FROM fairshare_admin;

------------------------------------------------------------------------------
-- 50_aws.sql: the test-only SageMaker calls are the superuser's
------------------------------------------------------------------------------

REVOKE EXECUTE ON FUNCTION
    fairshare._sagemaker_batch(text, jsonb[], jsonb),
    fairshare._sagemaker_wait_test(text, jsonb, int),
    fairshare._sagemaker_pump_test(text, jsonb[], int, boolean),
    fairshare._sagemaker_client_stats()
FROM fairshare_admin;

------------------------------------------------------------------------------
-- 60_worker.sql: every training job is tagged with the installation
------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION fairshare.create_training_job_request(job fairshare.jobs)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT CASE WHEN job.request ? 'StoppingCondition' THEN '{}'::jsonb
				ELSE '{"StoppingCondition": {"MaxRuntimeInSeconds": 86400}}'::jsonb END
		   || job.request || jsonb_build_object(
		'TrainingJobName', job.training_job_name,
		'ResourceConfig', coalesce(job.request -> 'ResourceConfig', '{}')
						  || jsonb_build_object('InstanceType', job.instance_type,
												'InstanceCount', job.instance_count),
		-- (Tags that are not a list, which 0.1.0 took, go as they are:
		-- SageMaker refuses that one job, not every create of the turn.)
		'Tags', CASE WHEN jsonb_typeof(job.request -> 'Tags') = 'array'
					 THEN coalesce((SELECT jsonb_agg(t.tag ORDER BY t.n)
									  FROM jsonb_array_elements(job.request -> 'Tags') WITH ORDINALITY t (tag, n)
									 WHERE job.tags IS NULL OR NOT job.tags ? (t.tag ->> 'Key')), '[]')
					 ELSE coalesce(job.request -> 'Tags', '[]') END
				|| coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
							   FROM jsonb_each_text(job.tags)), '[]')
				|| jsonb_build_array(
					   jsonb_build_object('Key', 'fairshare:installation', 'Value', fairshare.installation_id()::text),
					   jsonb_build_object('Key', 'fairshare:job-id', 'Value', job.job_id::text),
					   jsonb_build_object('Key', 'fairshare:job-queue', 'Value', job.job_queue),
					   jsonb_build_object('Key', 'fairshare:job-submitted',
										  'Value', ((extract(epoch FROM job.created_at) * 1000000)::bigint)::text)))
$$;

------------------------------------------------------------------------------
-- 60_worker.sql: a superuser may hold the dispatcher's lock
------------------------------------------------------------------------------

CREATE FUNCTION fairshare.hold_dispatcher_lock(wait boolean DEFAULT true)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_hold_dispatcher_lock'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.hold_dispatcher_lock(boolean) IS
	'Takes the dispatcher''s lock for this session (superuser): no dispatcher acts on this database until release_dispatcher_lock() or the session''s end.';
CREATE FUNCTION fairshare.release_dispatcher_lock()
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_release_dispatcher_lock'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.release_dispatcher_lock() IS
	'Lets go of the dispatcher''s lock this session took with hold_dispatcher_lock().';
REVOKE ALL ON FUNCTION fairshare.hold_dispatcher_lock(boolean), fairshare.release_dispatcher_lock() FROM PUBLIC;

------------------------------------------------------------------------------
-- 70_views.sql: the views dropped above, casting the numeric limits
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

DO $wrap$
DECLARE
	v text;
BEGIN
	FOREACH v IN ARRAY ARRAY['environment_utilization', 'quota_share_status']
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
COMMENT ON VIEW fairshare.quota_share_status IS
	'Per quota share and capacity unit: its limit, instances held, borrowed (held beyond the limit), '
	'lent (its unused limit that other shares are using), and the jobs waiting in it.';

REVOKE ALL ON fairshare._environment_utilization, fairshare._quota_share_status FROM PUBLIC;
GRANT SELECT ON fairshare.environment_utilization, fairshare.quota_share_status
	TO fairshare_viewer, fairshare_admin;
REVOKE ALL ON FUNCTION fairshare.environment_utilization(), fairshare.quota_share_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.environment_utilization(), fairshare.quota_share_status()
	TO fairshare_viewer, fairshare_admin;

------------------------------------------------------------------------------
-- 80_housekeeping.sql: retention keeps every event of a job not finished
------------------------------------------------------------------------------

-- Delete one bounded batch of one kind; returns the rows deleted.
CREATE OR REPLACE FUNCTION fairshare._retention_delete(what text, cutoff timestamptz, batch_size integer)
RETURNS bigint LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	CASE what
	WHEN 'jobs' THEN
		-- Finished jobs take their attempts, events and back-offs with them
		-- (ON DELETE CASCADE).  Rows someone has locked wait for the next run.
		DELETE FROM fairshare.jobs j
		 WHERE j.job_id IN (SELECT f.job_id FROM fairshare.jobs f
							 WHERE f.status IN ('SUCCEEDED', 'FAILED') AND f.stopped_at < cutoff
							 ORDER BY f.stopped_at
							 LIMIT batch_size FOR UPDATE SKIP LOCKED);
	WHEN 'job_events' THEN
		-- Old events of finished jobs still there (one that ran for longer
		-- than the retention).  A job not finished keeps all its events: a
		-- pass reads from them when it last became RUNNABLE (its time limit)
		-- and when its training last began (the work a preemption would
		-- lose).
		DELETE FROM fairshare.job_events e
		 WHERE e.event_id IN (SELECT o.event_id FROM fairshare.job_events o
							   JOIN fairshare.jobs f ON f.job_id = o.job_id
							  WHERE o.at < cutoff AND f.status IN ('SUCCEEDED', 'FAILED')
							  ORDER BY o.at LIMIT batch_size);
	WHEN 'utilization_history' THEN
		DELETE FROM fairshare.utilization_history h
		 WHERE h.ctid = ANY (ARRAY(SELECT o.ctid FROM fairshare.utilization_history o
									WHERE o.sampled_at < cutoff LIMIT batch_size));
	WHEN 'alert_events' THEN
		-- Alerts still firing stay, however old.
		DELETE FROM fairshare.alert_events a
		 WHERE a.alert_id IN (SELECT o.alert_id FROM fairshare.alert_events o
							   WHERE o.resolved_at < cutoff ORDER BY o.resolved_at LIMIT batch_size);
	END CASE;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;

------------------------------------------------------------------------------
-- 80_housekeeping.sql: retention pins its own search_path
------------------------------------------------------------------------------

CREATE OR REPLACE PROCEDURE fairshare.apply_retention(batch_size integer DEFAULT 1000)
LANGUAGE plpgsql AS $$
DECLARE
	cutoff pg_catalog.timestamptz;
	kinds constant pg_catalog.text[] := ARRAY['jobs', 'job_events', 'utilization_history', 'alert_events'];
	totals pg_catalog.int8[] := ARRAY[0, 0, 0, 0];
	n pg_catalog.int8;
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, fairshare, pg_temp', true);
	PERFORM fairshare._check_batch_size(batch_size);
	cutoff := fairshare.retention_cutoff();
	FOR k IN 1 .. 4 LOOP
		LOOP
			n := fairshare._retention_delete(kinds[k], cutoff, batch_size);
			totals[k] := totals[k] + n;
			COMMIT;
			PERFORM pg_catalog.set_config('search_path', 'pg_catalog, fairshare, pg_temp', true);
			EXIT WHEN n < batch_size;
		END LOOP;
	END LOOP;
	RAISE NOTICE 'fairshare retention (%): deleted % finished jobs, % older job events, % utilization rows, % resolved alerts',
		coalesce(current_setting('fairshare.retention', true), '30d'), totals[1], totals[2], totals[3], totals[4];
END
$$;

------------------------------------------------------------------------------
-- 89_api_common.sql: what every AWS Batch API operation shares
------------------------------------------------------------------------------

-- The region and account that ARNs name.  The region is the dispatcher's,
-- fairshare.aws_region() (fairshare.region, else AWS_REGION, else
-- AWS_DEFAULT_REGION of the server's environment), else us-east-1: the
-- region the API server checks signatures for (src/api/api_call.c resolves
-- it the same way).  The account is fairshare.api_account_id (else twelve
-- zeros).
--
-- These small helpers are PL/pgSQL rather than SQL although each is one
-- expression: a SQL function with a SET clause is never inlined, and it is
-- parsed and planned again in every transaction that calls it, while
-- PL/pgSQL keeps its plans for the session -- and the API's workers call
-- them in every request.
--
-- _api_region() runs as the owner: aws_region() is for admins (50_aws.sql),
-- and the API's roles see the region in every ARN anyway.  Nobody else
-- needs it.
CREATE FUNCTION fairshare._api_region()
RETURNS text LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN coalesce(fairshare.aws_region(), 'us-east-1');
END
$$;
REVOKE ALL ON FUNCTION fairshare._api_region() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._api_region() TO fairshare_admin, fairshare_submitter, fairshare_viewer;

CREATE FUNCTION fairshare._api_account_id()
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN coalesce(nullif(current_setting('fairshare.api_account_id', true), ''), '000000000000');
END
$$;

-- The ARN of a resource, as AWS Batch forms it: kind is service-job,
-- job-queue, service-environment, scheduling-policy or quota-share; a quota
-- share's name is '<queue>/<share>' and its ARN
-- ...:job-queue/<queue>/quota-share/<share>.
CREATE FUNCTION fairshare._api_arn(kind text, name text)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN 'arn:aws:batch:' || fairshare._api_region() || ':' || fairshare._api_account_id() || ':'
		   || CASE WHEN kind = 'quota-share'
				   THEN 'job-queue/' || split_part(name, '/', 1) || '/quota-share/' || split_part(name, '/', 2)
				   ELSE kind || '/' || name END;
END
$$;

-- The name (or decimal job id) a parameter refers to: the parameter itself,
-- or the last part of an ARN of the expected kind.  An ARN of another kind,
-- region or account is refused (22023).  For quota-share the result is
-- '<queue>/<share>'.
CREATE FUNCTION fairshare._api_resource_name(kind text, id_or_arn text, parameter text)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	prefix text;
	rest text;
	parts text[];
BEGIN
	IF id_or_arn IS NULL OR id_or_arn = '' THEN
		RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('%s is required', parameter);
	END IF;
	IF NOT starts_with(id_or_arn, 'arn:') THEN
		RETURN id_or_arn;
	END IF;
	prefix := 'arn:aws:batch:' || fairshare._api_region() || ':' || fairshare._api_account_id() || ':';
	IF NOT starts_with(id_or_arn, prefix) THEN
		RAISE EXCEPTION USING ERRCODE = '22023',
			MESSAGE = format('%s "%s" is not an ARN of this fairshare installation', parameter, id_or_arn),
			HINT = format('ARNs here begin with %s', prefix);
	END IF;
	rest := substr(id_or_arn, length(prefix) + 1);
	IF kind = 'quota-share' THEN
		parts := regexp_match(rest, '^job-queue/([^/]+)/quota-share/([^/]+)$');
		IF parts IS NOT NULL THEN
			RETURN parts[1] || '/' || parts[2];
		END IF;
	ELSIF starts_with(rest, kind || '/') AND strpos(substr(rest, length(kind) + 2), '/') = 0 THEN
		RETURN substr(rest, length(kind) + 2);
	END IF;
	RAISE EXCEPTION USING ERRCODE = '22023',
		MESSAGE = format('%s "%s" is not a %s ARN', parameter, id_or_arn, kind);
END
$$;

-- Times in the API are milliseconds since the epoch.
CREATE FUNCTION fairshare._api_epoch_ms(t timestamptz)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN (extract(epoch FROM t) * 1000)::bigint;
END
$$;
