-- 10_catalog.sql — the fairshare catalog: service environments, scheduling
-- policies, job queues, quota shares, jobs, attempts and events
-- (docs/sql-contract.md), and the validation of every admin table.
--
-- CHECK constraints are the last line of defence; the BEFORE triggers in
-- this file run first and turn each bad input into an error that names the
-- field, the value and what is allowed, with a specific SQLSTATE:
--   22023 invalid_parameter_value   a value out of range or malformed
--   23503 foreign_key_violation     a name that refers to nothing
--   23514 check_violation           rows that contradict each other
--   23P01 exclusion_violation       overlapping share identifiers
--   2BP01 dependent_objects_still_exist  removing something still in use
--   0A000 feature_not_supported     a request shape fairshare cannot run

CREATE TYPE fairshare.job_status AS ENUM
	('SUBMITTED', 'PENDING', 'RUNNABLE', 'SCHEDULED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED');

COMMENT ON TYPE fairshare.job_status IS
	'Job states as in AWS Batch service jobs; SUCCEEDED and FAILED are final.';

-- Raise a validation error.  One helper so every message has the same shape.
CREATE FUNCTION fairshare._reject(sqlstate text, message text, hint text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF hint IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
	END IF;
	RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
END
$$;

-- Names of environments, queues, policies and quota shares: AWS's rule.
CREATE FUNCTION fairshare._check_name(kind text, value text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF value IS NULL THEN
		PERFORM fairshare._reject('22023', format('%s name must not be null', kind));
	ELSIF value !~ '^[A-Za-z0-9_-]{1,128}$' THEN
		PERFORM fairshare._reject('22023',
			format('invalid %s name "%s"', kind, value),
			'Names are 1 to 128 letters, digits, hyphens and underscores.');
	END IF;
END
$$;

CREATE FUNCTION fairshare._check_state(kind text, value text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF value IS NULL OR value NOT IN ('ENABLED', 'DISABLED') THEN
		PERFORM fairshare._reject('22023',
			format('invalid %s state "%s"', kind, coalesce(value, 'NULL')),
			'The state is ENABLED or DISABLED.');
	END IF;
END
$$;

-- A capacity unit is NUM_INSTANCES or a SageMaker instance type.
CREATE FUNCTION fairshare._is_instance_type(value text)
RETURNS boolean LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT value ~ '^ml\.[a-z0-9]+\.[a-z0-9]+$'
$$;

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
-- Service environments and their capacity limits
------------------------------------------------------------------------------

CREATE TABLE fairshare.service_environments (
	name			text PRIMARY KEY,
	state			text NOT NULL DEFAULT 'ENABLED' CHECK (state IN ('ENABLED', 'DISABLED')),
	region			text,
	endpoint_url	text,
	created_at		timestamptz NOT NULL DEFAULT now(),
	CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$')
);
COMMENT ON TABLE fairshare.service_environments IS
	'Pools of SageMaker capacity; DISABLED ones take no new placements.';

CREATE TABLE fairshare.capacity_limits (
	service_environment	text NOT NULL REFERENCES fairshare.service_environments (name) ON DELETE CASCADE,
	capacity_unit		text NOT NULL,
	-- numeric, so that 2.5 is refused rather than rounded on the way in
	max_capacity		numeric NOT NULL CHECK (max_capacity BETWEEN 0 AND 1000000 AND max_capacity = trunc(max_capacity)),
	PRIMARY KEY (service_environment, capacity_unit)
);
COMMENT ON TABLE fairshare.capacity_limits IS
	'Instances an environment may run at once: in total (NUM_INSTANCES) or per instance type.';

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

CREATE FUNCTION fairshare._validate_service_environment()
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

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.service_environments
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_service_environment();

CREATE FUNCTION fairshare._guard_service_environment_delete()
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

CREATE TRIGGER guard_delete BEFORE DELETE ON fairshare.service_environments
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_service_environment_delete();

CREATE FUNCTION fairshare._validate_capacity_limit()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.service_environments WHERE name = NEW.service_environment) THEN
		PERFORM fairshare._reject('23503',
			format('service environment "%s" does not exist', NEW.service_environment));
	END IF;
	PERFORM fairshare._check_capacity(format('service environment "%s"', NEW.service_environment),
									  NEW.capacity_unit, NEW.max_capacity);
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.capacity_limits
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_capacity_limit();

------------------------------------------------------------------------------
-- Scheduling policies and their share weights
------------------------------------------------------------------------------

CREATE TABLE fairshare.scheduling_policies (
	name				text PRIMARY KEY,
	kind				text NOT NULL CHECK (kind IN ('FAIR_SHARE', 'QUOTA_SHARE')),
	share_decay_seconds	integer NOT NULL DEFAULT 0 CHECK (share_decay_seconds BETWEEN 0 AND 604800),
	compute_reservation	integer NOT NULL DEFAULT 0 CHECK (compute_reservation BETWEEN 0 AND 99),
	idle_assignment		text NOT NULL DEFAULT 'FIFO' CHECK (idle_assignment IN ('FIFO', 'FAIR')),
	created_at			timestamptz NOT NULL DEFAULT now(),
	CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$')
);
COMMENT ON TABLE fairshare.scheduling_policies IS
	'FAIR_SHARE (weights, decay, reservation) or QUOTA_SHARE (idle assignment between quota shares).';

CREATE TABLE fairshare.share_distribution (
	scheduling_policy	text NOT NULL REFERENCES fairshare.scheduling_policies (name) ON DELETE CASCADE,
	share_identifier	text NOT NULL,
	weight_factor		numeric(8, 4) NOT NULL DEFAULT 1.0 CHECK (weight_factor BETWEEN 0.0001 AND 999.9999),
	PRIMARY KEY (scheduling_policy, share_identifier)
);
COMMENT ON TABLE fairshare.share_distribution IS
	'Fair-share weights; lower weight = larger share.  An identifier ending in * matches by prefix.';

CREATE FUNCTION fairshare._validate_scheduling_policy()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	q text;
BEGIN
	IF TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name THEN
		PERFORM fairshare._reject('22023',
			format('scheduling policy "%s" cannot be renamed', OLD.name));
	END IF;
	PERFORM fairshare._check_name('scheduling policy', NEW.name);
	IF TG_OP = 'UPDATE' AND NEW.kind IS DISTINCT FROM OLD.kind THEN
		SELECT name INTO q FROM fairshare.job_queues WHERE scheduling_policy = OLD.name ORDER BY name LIMIT 1;
		IF FOUND THEN
			PERFORM fairshare._reject('2BP01',
				format('cannot change the kind of scheduling policy "%s": job queue "%s" uses it', OLD.name, q));
		END IF;
		IF EXISTS (SELECT 1 FROM fairshare.share_distribution WHERE scheduling_policy = OLD.name) THEN
			PERFORM fairshare._reject('2BP01',
				format('cannot change the kind of scheduling policy "%s": it has share_distribution entries', OLD.name));
		END IF;
	END IF;
	IF NEW.kind IS NULL OR NEW.kind NOT IN ('FAIR_SHARE', 'QUOTA_SHARE') THEN
		PERFORM fairshare._reject('22023',
			format('invalid scheduling policy kind "%s"', coalesce(NEW.kind, 'NULL')),
			'The kind is FAIR_SHARE or QUOTA_SHARE; a queue without a policy is FIFO.');
	END IF;
	IF NEW.share_decay_seconds IS NULL OR NEW.share_decay_seconds NOT BETWEEN 0 AND 604800 THEN
		PERFORM fairshare._reject('22023',
			format('share_decay_seconds %s is out of range', coalesce(NEW.share_decay_seconds::text, 'NULL')),
			'share_decay_seconds is from 0 (usage is what runs now) to 604800 (one week).');
	END IF;
	IF NEW.compute_reservation IS NULL OR NEW.compute_reservation NOT BETWEEN 0 AND 99 THEN
		PERFORM fairshare._reject('22023',
			format('compute_reservation %s is out of range', coalesce(NEW.compute_reservation::text, 'NULL')),
			'compute_reservation is a percentage from 0 to 99.');
	END IF;
	IF NEW.idle_assignment IS NULL OR NEW.idle_assignment NOT IN ('FIFO', 'FAIR') THEN
		PERFORM fairshare._reject('22023',
			format('invalid idle_assignment "%s"', coalesce(NEW.idle_assignment, 'NULL')),
			'idle_assignment is FIFO or FAIR.');
	END IF;
	IF NEW.kind = 'QUOTA_SHARE' AND (NEW.share_decay_seconds <> 0 OR NEW.compute_reservation <> 0) THEN
		PERFORM fairshare._reject('23514',
			format('scheduling policy "%s" is QUOTA_SHARE: share_decay_seconds and compute_reservation apply only to FAIR_SHARE', NEW.name),
			'Quota shares get their capacity from quota_share_limits.');
	END IF;
	IF NEW.kind = 'FAIR_SHARE' AND NEW.idle_assignment <> 'FIFO' THEN
		PERFORM fairshare._reject('23514',
			format('scheduling policy "%s" is FAIR_SHARE: idle_assignment applies only to QUOTA_SHARE', NEW.name));
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.scheduling_policies
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_scheduling_policy();

CREATE FUNCTION fairshare._validate_share_distribution()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	policy_kind text;
	other text;
	new_prefix text;
BEGIN
	-- Lock the policy so two sessions cannot add overlapping entries at once.
	SELECT kind INTO policy_kind FROM fairshare.scheduling_policies
	 WHERE name = NEW.scheduling_policy FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('23503',
			format('scheduling policy "%s" does not exist', NEW.scheduling_policy));
	END IF;
	IF policy_kind <> 'FAIR_SHARE' THEN
		PERFORM fairshare._reject('23514',
			format('scheduling policy "%s" is %s: share weights belong to FAIR_SHARE policies', NEW.scheduling_policy, policy_kind),
			'Quota shares have their own weight column in fairshare.quota_shares.');
	END IF;
	IF NEW.share_identifier IS NULL OR NEW.share_identifier !~ '^([A-Za-z0-9_-]{1,255}\*?|\*)$' THEN
		PERFORM fairshare._reject('22023',
			format('invalid share identifier "%s"', coalesce(NEW.share_identifier, 'NULL')),
			'Identifiers are up to 255 letters, digits, hyphens and underscores, optionally ending in * to match by prefix.');
	END IF;
	IF NEW.weight_factor IS NULL OR NEW.weight_factor NOT BETWEEN 0.0001 AND 999.9999 THEN
		PERFORM fairshare._reject('22023',
			format('weight_factor %s for share "%s" is out of range', coalesce(NEW.weight_factor::text, 'NULL'), NEW.share_identifier),
			'weight_factor is from 0.0001 to 999.9999; a lower weight gets a larger share.');
	END IF;
	-- Overlap: an entry matches an identifier exactly, or by prefix if it
	-- ends in *.  Two entries overlap when one could match what the other does.
	new_prefix := rtrim(NEW.share_identifier, '*');
	SELECT d.share_identifier INTO other
	  FROM fairshare.share_distribution d
	 WHERE d.scheduling_policy = NEW.scheduling_policy
	   AND d.share_identifier <> NEW.share_identifier
	   AND (TG_OP = 'INSERT' OR d.share_identifier <> OLD.share_identifier)
	   AND ((d.share_identifier LIKE '%*' AND starts_with(NEW.share_identifier, rtrim(d.share_identifier, '*')))
			OR (NEW.share_identifier LIKE '%*' AND starts_with(d.share_identifier, new_prefix)))
	 ORDER BY d.share_identifier LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('23P01',
			format('share identifier "%s" overlaps "%s" in scheduling policy "%s"', NEW.share_identifier, other, NEW.scheduling_policy),
			'Every share identifier must match through one entry only; remove or rename one of them.');
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.share_distribution
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_share_distribution();

------------------------------------------------------------------------------
-- Job queues, their environments, quota shares and their limits
------------------------------------------------------------------------------

CREATE TABLE fairshare.job_queues (
	name				text PRIMARY KEY,
	state				text NOT NULL DEFAULT 'ENABLED' CHECK (state IN ('ENABLED', 'DISABLED')),
	priority			integer NOT NULL DEFAULT 1 CHECK (priority BETWEEN 0 AND 1000),
	scheduling_policy	text REFERENCES fairshare.scheduling_policies (name),
	strict_fifo			boolean NOT NULL DEFAULT false,
	created_at			timestamptz NOT NULL DEFAULT now(),
	checkpoint_interval	interval CHECK (checkpoint_interval BETWEEN '0' AND '7 days'),
	CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$')
);
COMMENT ON TABLE fairshare.job_queues IS
	'Where jobs are submitted.  No scheduling_policy = FIFO.  Higher priority is served first.';
COMMENT ON COLUMN fairshare.job_queues.checkpoint_interval IS
	'How often a job of this queue whose request has CheckpointConfig is taken to save a checkpoint, '
	'for the work a preemption would lose; NULL = fairshare.checkpoint_interval, 0 = none counted.';

CREATE TABLE fairshare.queue_environments (
	job_queue			text NOT NULL REFERENCES fairshare.job_queues (name) ON DELETE CASCADE,
	service_environment	text NOT NULL REFERENCES fairshare.service_environments (name),
	"order"				integer NOT NULL CHECK ("order" >= 1),
	PRIMARY KEY (job_queue, service_environment),
	UNIQUE (job_queue, "order")
);
COMMENT ON TABLE fairshare.queue_environments IS
	'The environments a queue may place jobs on, tried in ascending "order".';
CREATE INDEX ON fairshare.queue_environments (service_environment);

CREATE TABLE fairshare.quota_shares (
	job_queue			text NOT NULL REFERENCES fairshare.job_queues (name) ON DELETE CASCADE,
	name				text NOT NULL,
	state				text NOT NULL DEFAULT 'ENABLED' CHECK (state IN ('ENABLED', 'DISABLED')),
	strategy			text NOT NULL DEFAULT 'RESERVE' CHECK (strategy IN ('RESERVE', 'LEND', 'LEND_AND_BORROW')),
	borrow_limit		integer CHECK (borrow_limit BETWEEN -1 AND 10000),
	in_share_preemption	boolean NOT NULL DEFAULT false,
	weight				numeric(8, 4) NOT NULL DEFAULT 1.0 CHECK (weight BETWEEN 0.0001 AND 999.9999),
	created_at			timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (job_queue, name),
	CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$')
);
COMMENT ON TABLE fairshare.quota_shares IS
	'Quota shares of a QUOTA_SHARE queue: guaranteed capacity, lending and borrowing.  '
	'borrow_limit is a percentage of the share''s limits (-1 = unlimited), LEND_AND_BORROW only.';

CREATE TABLE fairshare.quota_share_limits (
	job_queue		text NOT NULL,
	quota_share		text NOT NULL,
	capacity_unit	text NOT NULL,
	max_capacity	numeric NOT NULL CHECK (max_capacity BETWEEN 0 AND 1000000 AND max_capacity = trunc(max_capacity)),
	PRIMARY KEY (job_queue, quota_share, capacity_unit),
	FOREIGN KEY (job_queue, quota_share) REFERENCES fairshare.quota_shares (job_queue, name) ON DELETE CASCADE
);
COMMENT ON TABLE fairshare.quota_share_limits IS
	'The capacity a quota share is guaranteed, per capacity unit.';

CREATE FUNCTION fairshare._validate_job_queue()
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

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.job_queues
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_job_queue();

CREATE FUNCTION fairshare._guard_job_queue_delete()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM fairshare.jobs WHERE job_queue = OLD.name;
	IF n > 0 THEN
		PERFORM fairshare._reject('2BP01',
			format('job queue "%s" still has %s jobs', OLD.name, n),
			'Terminate its unfinished jobs and delete its finished ones (or let retention remove them) first.');
	END IF;
	RETURN OLD;
END
$$;

CREATE TRIGGER guard_delete BEFORE DELETE ON fairshare.job_queues
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_job_queue_delete();

CREATE FUNCTION fairshare._validate_queue_environment()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.job_queues WHERE name = NEW.job_queue) THEN
		PERFORM fairshare._reject('23503', format('job queue "%s" does not exist', NEW.job_queue));
	END IF;
	IF NOT EXISTS (SELECT 1 FROM fairshare.service_environments WHERE name = NEW.service_environment) THEN
		PERFORM fairshare._reject('23503',
			format('service environment "%s" does not exist', NEW.service_environment));
	END IF;
	IF NEW."order" IS NULL OR NEW."order" < 1 THEN
		PERFORM fairshare._reject('22023',
			format('order %s of service environment "%s" in job queue "%s" is out of range',
				   coalesce(NEW."order"::text, 'NULL'), NEW.service_environment, NEW.job_queue),
			'"order" is 1 for the first environment tried, 2 for the next, ...');
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.queue_environments
				WHERE job_queue = NEW.job_queue AND "order" = NEW."order"
				  AND service_environment <> NEW.service_environment) THEN
		PERFORM fairshare._reject('23505',
			format('job queue "%s" already has a service environment at order %s', NEW.job_queue, NEW."order"));
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.queue_environments
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_queue_environment();

CREATE FUNCTION fairshare._validate_quota_share()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	policy text;
	policy_kind text;
BEGIN
	IF TG_OP = 'UPDATE' AND (NEW.name, NEW.job_queue) IS DISTINCT FROM (OLD.name, OLD.job_queue) THEN
		PERFORM fairshare._reject('22023',
			format('quota share "%s" of job queue "%s" cannot be renamed or moved', OLD.name, OLD.job_queue));
	END IF;
	SELECT q.scheduling_policy, p.kind INTO policy, policy_kind
	  FROM fairshare.job_queues q LEFT JOIN fairshare.scheduling_policies p ON p.name = q.scheduling_policy
	 WHERE q.name = NEW.job_queue;
	IF NOT FOUND THEN
		PERFORM fairshare._reject('23503', format('job queue "%s" does not exist', NEW.job_queue));
	END IF;
	IF policy_kind IS DISTINCT FROM 'QUOTA_SHARE' THEN
		PERFORM fairshare._reject('23514',
			format('job queue "%s" does not have a QUOTA_SHARE scheduling policy', NEW.job_queue),
			CASE WHEN policy IS NULL THEN 'The queue is FIFO; give it a QUOTA_SHARE policy before adding quota shares.'
				 ELSE format('Its policy "%s" is %s.', policy, policy_kind) END);
	END IF;
	PERFORM fairshare._check_name('quota share', NEW.name);
	PERFORM fairshare._check_state('quota share', NEW.state);
	IF NEW.strategy IS NULL OR NEW.strategy NOT IN ('RESERVE', 'LEND', 'LEND_AND_BORROW') THEN
		PERFORM fairshare._reject('22023',
			format('invalid strategy "%s" for quota share "%s"', coalesce(NEW.strategy, 'NULL'), NEW.name),
			'The strategy is RESERVE, LEND or LEND_AND_BORROW.');
	END IF;
	IF NEW.strategy = 'LEND_AND_BORROW' THEN
		NEW.borrow_limit := coalesce(NEW.borrow_limit, -1);
		IF NEW.borrow_limit NOT BETWEEN -1 AND 10000 THEN
			PERFORM fairshare._reject('22023',
				format('borrow_limit %s for quota share "%s" is out of range', NEW.borrow_limit, NEW.name),
				'borrow_limit is -1 (unlimited) or a percentage of the share''s limits from 0 to 10000.');
		END IF;
	ELSIF NEW.borrow_limit IS NOT NULL THEN
		PERFORM fairshare._reject('23514',
			format('quota share "%s" has strategy %s, which does not borrow: borrow_limit must be NULL', NEW.name, NEW.strategy),
			'Only LEND_AND_BORROW shares borrow.');
	END IF;
	IF NEW.in_share_preemption IS NULL THEN
		NEW.in_share_preemption := false;
	END IF;
	IF NEW.weight IS NULL OR NEW.weight NOT BETWEEN 0.0001 AND 999.9999 THEN
		PERFORM fairshare._reject('22023',
			format('weight %s for quota share "%s" is out of range', coalesce(NEW.weight::text, 'NULL'), NEW.name),
			'weight is from 0.0001 to 999.9999; it orders borrowers when idle_assignment is FAIR.');
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.quota_shares
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_quota_share();

CREATE FUNCTION fairshare._guard_quota_share_delete()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM fairshare.jobs
	 WHERE job_queue = OLD.job_queue AND quota_share = OLD.name AND status NOT IN ('SUCCEEDED', 'FAILED');
	IF n > 0 THEN
		PERFORM fairshare._reject('2BP01',
			format('quota share "%s" of job queue "%s" still has %s unfinished jobs', OLD.name, OLD.job_queue, n),
			'Disable the share and let its jobs finish, or terminate them.');
	END IF;
	RETURN OLD;
END
$$;

CREATE TRIGGER guard_delete BEFORE DELETE ON fairshare.quota_shares
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_quota_share_delete();

CREATE FUNCTION fairshare._validate_quota_share_limit()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.quota_shares WHERE job_queue = NEW.job_queue AND name = NEW.quota_share) THEN
		PERFORM fairshare._reject('23503',
			format('quota share "%s" of job queue "%s" does not exist', NEW.quota_share, NEW.job_queue));
	END IF;
	PERFORM fairshare._check_capacity(format('quota share "%s"', NEW.quota_share),
									  NEW.capacity_unit, NEW.max_capacity);
	IF TG_OP = 'INSERT' AND (SELECT count(*) FROM fairshare.quota_share_limits
							   WHERE job_queue = NEW.job_queue AND quota_share = NEW.quota_share) >= 5 THEN
		PERFORM fairshare._reject('54000',
			format('quota share "%s" already has 5 capacity limits', NEW.quota_share),
			'A quota share has at most five capacity limits, as in AWS Batch.');
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.quota_share_limits
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_quota_share_limit();

------------------------------------------------------------------------------
-- Jobs, attempts and events
------------------------------------------------------------------------------

CREATE TABLE fairshare.jobs (
	job_id					bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	-- A CHECK runs on every UPDATE of the row, so on every transition: the
	-- bounded repetition {1,128} costs about 20 us a row there, this form
	-- nothing measurable (same names accepted).  The submission trigger
	-- gives the message a user sees and the transition trigger keeps the
	-- name unchanged; this guards rows written with triggers off
	-- (session_replication_role = replica).
	job_name				text NOT NULL CHECK (job_name ~ '^[A-Za-z0-9_-]+$' AND length(job_name) <= 128),
	job_queue				text NOT NULL REFERENCES fairshare.job_queues (name),
	share_identifier		text,
	quota_share				text,
	scheduling_priority		integer NOT NULL DEFAULT 0 CHECK (scheduling_priority BETWEEN 0 AND 9999),
	request					jsonb NOT NULL,
	instance_types			text[] NOT NULL,
	instance_count			integer NOT NULL CHECK (instance_count > 0),
	retry_attempts			integer NOT NULL DEFAULT 1 CHECK (retry_attempts BETWEEN 1 AND 10),
	evaluate_on_exit		jsonb,
	preemption_retries		integer CHECK (preemption_retries >= 0),
	attempt_duration_seconds integer CHECK (attempt_duration_seconds >= 1),
	tags					jsonb,
	status					fairshare.job_status NOT NULL DEFAULT 'SUBMITTED',
	status_reason			text,
	created_at				timestamptz NOT NULL DEFAULT now(),
	runnable_at				timestamptz,
	scheduled_at			timestamptz,
	started_at				timestamptz,
	stopped_at				timestamptz,
	service_environment		text,
	instance_type			text,
	training_job_name		text UNIQUE,
	training_job_arn		text,
	attempts				integer NOT NULL DEFAULT 0,
	preemptions				integer NOT NULL DEFAULT 0,
	submitted_by			text NOT NULL DEFAULT current_user,
	-- A stop the dispatcher must carry out (the job keeps its capacity until
	-- SageMaker reports it stopped): why, for whom, and when it was sent.
	stop_kind				text CHECK (stop_kind IN ('PREEMPT', 'TERMINATE', 'TIMEOUT')),
	stop_reason				text,
	stop_requested_at		timestamptz,
	stop_sent_at			timestamptz,
	preempted_for			bigint,
	-- Capacity held for this RUNNABLE job by the scheduler: room freed by
	-- preempting victims for it, or held because it starved (docs/scheduling.md,
	-- 'No starvation by back-fill' and 'Quota-share queues').  Nothing else may take that room.
	nomination_kind			text CHECK (nomination_kind IN ('PREEMPTION', 'STARVATION')),
	nominated_environment	text,
	nominated_instance_type	text,
	nominated_at			timestamptz,
	-- Who submitted it, as a role OID beside the name: a role that is
	-- renamed, and another created with the old name, must not see or act
	-- on the first one's jobs.  Set by the submission trigger.
	submitter_oid			oid NOT NULL DEFAULT 0
);
COMMENT ON TABLE fairshare.jobs IS
	'Submitted SageMaker training jobs.  Submit with INSERT; status and placement are set by fairshare.';

-- The head of every share, for the scheduler: RUNNABLE jobs only (a partial
-- index, so the finished history never slows a pass), in the order a share
-- serves them.  FIFO queues use the same index with a NULL share.
CREATE INDEX jobs_runnable_fair_idx ON fairshare.jobs
	(job_queue, share_identifier, scheduling_priority DESC, runnable_at, job_id)
	WHERE status = 'RUNNABLE' AND share_identifier IS NOT NULL;
CREATE INDEX jobs_runnable_quota_idx ON fairshare.jobs
	(job_queue, quota_share, scheduling_priority DESC, runnable_at, job_id)
	WHERE status = 'RUNNABLE' AND quota_share IS NOT NULL;
CREATE INDEX jobs_runnable_fifo_idx ON fairshare.jobs
	(job_queue, runnable_at, job_id)
	WHERE status = 'RUNNABLE' AND share_identifier IS NULL AND quota_share IS NULL;
-- Jobs holding capacity or in flight, and jobs waiting for their first pass.
CREATE INDEX jobs_active_idx ON fairshare.jobs (service_environment, instance_type)
	WHERE status IN ('SCHEDULED', 'STARTING', 'RUNNING');
CREATE INDEX jobs_new_idx ON fairshare.jobs (job_id)
	WHERE status IN ('SUBMITTED', 'PENDING');
-- (created_at, job_id: ListServiceJobs lists a queue's jobs of one status newest first.)
CREATE INDEX jobs_queue_status_idx ON fairshare.jobs (job_queue, status, created_at, job_id);
CREATE INDEX jobs_submitted_by_idx ON fairshare.jobs (submitted_by);
CREATE INDEX jobs_finished_idx ON fairshare.jobs (stopped_at)
	WHERE status IN ('SUCCEEDED', 'FAILED');
CREATE INDEX jobs_nominated_idx ON fairshare.jobs (job_queue)
	WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL;
-- Attempts with a time limit of their own, which every pass checks
-- (_prepare_pass): without it the check reads every job holding capacity,
-- through a bitmap of all of jobs_queue_status_idx (90 ms a pass at 30,000
-- running jobs, bench/scale).
CREATE INDEX jobs_time_limited_idx ON fairshare.jobs (job_id)
	WHERE status IN ('STARTING', 'RUNNING') AND attempt_duration_seconds IS NOT NULL;

CREATE TABLE fairshare.job_attempts (
	job_id				bigint NOT NULL REFERENCES fairshare.jobs (job_id) ON DELETE CASCADE,
	attempt				integer NOT NULL CHECK (attempt >= 1),
	training_job_name	text NOT NULL UNIQUE,
	training_job_arn	text,
	service_environment	text NOT NULL,
	instance_type		text NOT NULL,
	instance_count		integer NOT NULL,
	created_at			timestamptz NOT NULL DEFAULT now(),
	started_at			timestamptz,
	stopped_at			timestamptz,
	outcome				text CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'PREEMPTED', 'CAPACITY', 'STOPPED', 'REQUEUED')),
	status_reason		text,
	-- The job as it was placed, so that history is read without the jobs.
	job_queue			text,
	share				text,
	scheduling_priority	integer,
	queued_at			timestamptz,
	region				text,
	PRIMARY KEY (job_id, attempt)
);
COMMENT ON COLUMN fairshare.job_attempts.job_queue IS 'The job''s queue (set by fairshare when the attempt starts).';
COMMENT ON COLUMN fairshare.job_attempts.share IS 'The job''s quota share or share identifier, NULL on a FIFO queue.';
COMMENT ON COLUMN fairshare.job_attempts.scheduling_priority IS 'The job''s scheduling_priority when it was placed.';
COMMENT ON COLUMN fairshare.job_attempts.queued_at IS 'Since when the job waited for this attempt: runnable_at, or the end of the previous attempt.';
COMMENT ON COLUMN fairshare.job_attempts.region IS
	'The AWS region its CreateTrainingJob was sent to, where its environment names none (set by the dispatcher before sending): '
	'the attempt is looked up, described and stopped there whatever the server''s region is since.';
COMMENT ON TABLE fairshare.job_attempts IS
	'One row per SageMaker training job started for a job (retries, preemptions and capacity fallbacks each start one).';

CREATE TABLE fairshare.job_events (
	event_id	bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id		bigint NOT NULL REFERENCES fairshare.jobs (job_id) ON DELETE CASCADE,
	at			timestamptz NOT NULL DEFAULT clock_timestamp(),
	old_status	fairshare.job_status,
	new_status	fairshare.job_status NOT NULL,
	reason		text
);
COMMENT ON TABLE fairshare.job_events IS
	'Every status transition of every job, written in the transaction that made it.';
CREATE INDEX job_events_job_idx ON fairshare.job_events (job_id, event_id);
CREATE INDEX job_events_at_idx ON fairshare.job_events (at);

------------------------------------------------------------------------------
-- The installation
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
