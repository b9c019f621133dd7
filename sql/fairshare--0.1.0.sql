-- Generated from sql/parts/*.sql by make; edit the parts.
\echo Use "CREATE EXTENSION fairshare" to load this file. \quit

-- ==== sql/parts/10_catalog.sql
-- 10_catalog.sql — the fairshare catalog: service environments, scheduling
-- policies, job queues, quota shares, jobs, attempts and events (design
-- section 4), and the validation of every admin table.
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
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF hint IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message;
	END IF;
	RAISE EXCEPTION USING ERRCODE = sqlstate, MESSAGE = message, HINT = hint;
END
$$;

-- Names of environments, queues, policies and quota shares: AWS's rule.
CREATE FUNCTION fairshare._check_name(kind text, value text)
RETURNS void LANGUAGE plpgsql AS $$
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
RETURNS void LANGUAGE plpgsql AS $$
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
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
	SELECT value ~ '^ml\.[a-z0-9]+\.[a-z0-9]+$'
$$;

CREATE FUNCTION fairshare._check_capacity(kind text, unit text, max_capacity integer)
RETURNS void LANGUAGE plpgsql AS $$
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
	max_capacity		integer NOT NULL CHECK (max_capacity BETWEEN 0 AND 1000000),
	PRIMARY KEY (service_environment, capacity_unit)
);
COMMENT ON TABLE fairshare.capacity_limits IS
	'Instances an environment may run at once: in total (NUM_INSTANCES) or per instance type.';

CREATE FUNCTION fairshare._validate_service_environment()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	host text;
BEGIN
	IF TG_OP = 'UPDATE' AND NEW.name IS DISTINCT FROM OLD.name THEN
		PERFORM fairshare._reject('22023',
			format('service environment "%s" cannot be renamed', OLD.name),
			'Create a new environment and move the queues to it.');
	END IF;
	PERFORM fairshare._check_name('service environment', NEW.name);
	PERFORM fairshare._check_state('service environment', NEW.state);
	IF NEW.region IS NOT NULL AND NEW.region !~ '^[a-z]{2}(-[a-z]+)+-[0-9]+$' THEN
		PERFORM fairshare._reject('22023',
			format('invalid region "%s" for service environment "%s"', NEW.region, NEW.name),
			'Use an AWS region name such as us-east-1, or NULL for fairshare.region.');
	END IF;
	IF NEW.endpoint_url IS NOT NULL THEN
		host := substring(NEW.endpoint_url FROM '^https?://([^/:?#]+|\[[^]]+\])');
		IF host IS NULL THEN
			PERFORM fairshare._reject('22023',
				format('invalid endpoint_url "%s" for service environment "%s"', NEW.endpoint_url, NEW.name),
				'Use https://host[:port], or NULL for the default endpoint.');
		END IF;
		IF NEW.endpoint_url LIKE 'http://%'
		   AND host NOT IN ('127.0.0.1', 'localhost', '[::1]') THEN
			PERFORM fairshare._reject('22023',
				format('plain http endpoint "%s" is only allowed on the loopback interface', NEW.endpoint_url),
				'Use https:// for any endpoint that is not 127.0.0.1, localhost or [::1].');
		END IF;
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.service_environments
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_service_environment();

CREATE FUNCTION fairshare._guard_service_environment_delete()
RETURNS trigger LANGUAGE plpgsql AS $$
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
	SELECT count(*) INTO n FROM fairshare.jobs
	 WHERE service_environment = OLD.name AND status IN ('SCHEDULED', 'STARTING', 'RUNNING');
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
	CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$')
);
COMMENT ON TABLE fairshare.job_queues IS
	'Where jobs are submitted.  No scheduling_policy = FIFO.  Higher priority is served first.';

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
	max_capacity	integer NOT NULL CHECK (max_capacity BETWEEN 0 AND 1000000),
	PRIMARY KEY (job_queue, quota_share, capacity_unit),
	FOREIGN KEY (job_queue, quota_share) REFERENCES fairshare.quota_shares (job_queue, name) ON DELETE CASCADE
);
COMMENT ON TABLE fairshare.quota_share_limits IS
	'The capacity a quota share is guaranteed, per capacity unit.';

CREATE FUNCTION fairshare._validate_job_queue()
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
RETURNS trigger LANGUAGE plpgsql AS $$
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
	-- preempting victims for it, or held because it starved (design 2.2a,
	-- 2.6).  Nothing else may take that room.
	nomination_kind			text CHECK (nomination_kind IN ('PREEMPTION', 'STARVATION')),
	nominated_environment	text,
	nominated_instance_type	text,
	nominated_at			timestamptz
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
CREATE INDEX jobs_queue_status_idx ON fairshare.jobs (job_queue, status);
CREATE INDEX jobs_submitted_by_idx ON fairshare.jobs (submitted_by);
CREATE INDEX jobs_finished_idx ON fairshare.jobs (stopped_at)
	WHERE status IN ('SUCCEEDED', 'FAILED');
CREATE INDEX jobs_nominated_idx ON fairshare.jobs (job_queue)
	WHERE status = 'RUNNABLE' AND nomination_kind IS NOT NULL;

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
	PRIMARY KEY (job_id, attempt)
);
COMMENT ON COLUMN fairshare.job_attempts.job_queue IS 'The job''s queue (set by fairshare when the attempt starts).';
COMMENT ON COLUMN fairshare.job_attempts.share IS 'The job''s quota share or share identifier, NULL on a FIFO queue.';
COMMENT ON COLUMN fairshare.job_attempts.scheduling_priority IS 'The job''s scheduling_priority when it was placed.';
COMMENT ON COLUMN fairshare.job_attempts.queued_at IS 'Since when the job waited for this attempt: runnable_at, or the end of the previous attempt.';
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

-- ==== sql/parts/20_lifecycle.sql
-- 20_lifecycle.sql — submission and the job state machine (design section 3).
--
-- A job is submitted with a plain INSERT.  The BEFORE INSERT trigger fills
-- instance_types and instance_count from the request and rejects every bad
-- input with its own message, so nothing is written; configuration changes
-- reach its per-backend cache through the _config_changed statement
-- triggers.  The BEFORE UPDATE trigger is the state machine: it allows only
-- the transitions of design section 3 and keeps the row's timestamps and
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
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	changed boolean;
BEGIN
	-- A set difference, not a join: EXISTS over a join of the transition
	-- tables is planned as a nested loop (it expects to stop at the first
	-- row), which is quadratic when no row qualifies -- minutes for an
	-- UPDATE of 50,000 jobs' priorities.  job_id never changes.
	EXECUTE $q$SELECT EXISTS (SELECT job_id, status, training_job_arn FROM new_jobs
					EXCEPT SELECT job_id, status, training_job_arn FROM old_jobs)$q$
		INTO changed;
	IF NOT changed THEN
		RETURN NULL;
	END IF;
	EXECUTE $q$
	INSERT INTO fairshare.job_events (job_id, old_status, new_status, reason)
	SELECT n.job_id, o.status, n.status, n.status_reason
	  FROM new_jobs n JOIN old_jobs o USING (job_id)
	 WHERE n.status <> o.status
	 ORDER BY n.job_id$q$;
	-- Attempts that end: the outcome whoever made the transition set, or
	-- what the new status says.
	EXECUTE $q$
	UPDATE fairshare.job_attempts a
	   SET stopped_at = now(), status_reason = n.status_reason,
		   training_job_arn = coalesce(o.training_job_arn, a.training_job_arn),
		   outcome = coalesce(a.outcome, CASE n.status WHEN 'RUNNABLE' THEN 'REQUEUED' ELSE n.status::text END)
	  FROM new_jobs n JOIN old_jobs o USING (job_id)
	 WHERE a.job_id = n.job_id AND a.attempt = o.attempts
	   AND o.status IN ('SCHEDULED', 'STARTING', 'RUNNING') AND n.status IN ('RUNNABLE', 'SUCCEEDED', 'FAILED')$q$;
	-- Attempts that start, or whose ARN we learn.
	EXECUTE $q$
	UPDATE fairshare.job_attempts a
	   SET started_at = coalesce(a.started_at, n.started_at),
		   training_job_arn = coalesce(n.training_job_arn, a.training_job_arn)
	  FROM new_jobs n JOIN old_jobs o USING (job_id)
	 WHERE a.job_id = n.job_id AND a.attempt = n.attempts
	   AND o.status IN ('SCHEDULED', 'STARTING', 'RUNNING') AND n.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
	   AND (n.started_at IS DISTINCT FROM o.started_at OR n.training_job_arn IS DISTINCT FROM o.training_job_arn)$q$;
	-- Attempts that a placement begins, with the job as it was placed and
	-- since when it waited: runnable_at, or the end of its previous attempt.
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
RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION fairshare.terminate_job(job_id bigint, reason text)
RETURNS boolean
AS 'MODULE_PATHNAME', 'fairshare_terminate_job'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.terminate_job(bigint, text) IS
	'Fail a job that is not placed yet; for a placed one, request the stop (it fails once SageMaker reports it stopped).  '
	'Returns false when there is nothing left to do (already finished, or its termination already requested).';

CREATE FUNCTION fairshare.update_job_priority(job_id bigint, scheduling_priority integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'fairshare_update_job_priority'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.update_job_priority(bigint, integer) IS
	'Change the scheduling_priority of an unfinished job; returns the previous priority.  The next pass honours it.';

-- ==== sql/parts/30_roles.sql
-- Roles.  Roles are cluster-wide, so they are created only when missing and
-- are left in place by DROP EXTENSION (other databases may use them).
--   fairshare_admin      environments, queues, policies, shares; all jobs
--   fairshare_submitter  submits jobs; sees and terminates only its own
--   fairshare_viewer     the dashboard views only
DO $roles$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['fairshare_admin', 'fairshare_submitter', 'fairshare_viewer']
	LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('CREATE ROLE %I NOLOGIN', r);
		END IF;
	END LOOP;
END
$roles$;

GRANT USAGE ON SCHEMA fairshare TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- Admins manage the configuration and may act on every job.
GRANT SELECT, INSERT, UPDATE, DELETE ON
	fairshare.service_environments, fairshare.capacity_limits,
	fairshare.scheduling_policies, fairshare.share_distribution,
	fairshare.job_queues, fairshare.queue_environments,
	fairshare.quota_shares, fairshare.quota_share_limits,
	fairshare.jobs
	TO fairshare_admin;
-- History is written by the lifecycle trigger (as the owner), not by hand:
-- admins may read and delete it, and set an attempt's outcome (what
-- apply_status does as the dispatcher), but not insert rows.
GRANT SELECT, UPDATE, DELETE ON fairshare.job_attempts TO fairshare_admin;
GRANT SELECT, DELETE ON fairshare.job_events TO fairshare_admin;

-- Submitters read the configuration (to know where to submit) and their own
-- jobs, and insert jobs naming only the columns a submission may set.
GRANT SELECT ON
	fairshare.service_environments, fairshare.capacity_limits,
	fairshare.scheduling_policies, fairshare.share_distribution,
	fairshare.job_queues, fairshare.queue_environments,
	fairshare.quota_shares, fairshare.quota_share_limits,
	fairshare.jobs, fairshare.job_attempts, fairshare.job_events
	TO fairshare_submitter;
-- INSERT on every column but job_id (an identity: OVERRIDING SYSTEM VALUE
-- would let a submitter take ids the sequence hands out later), so that a
-- submission naming status, placement or submitted_by reaches the trigger
-- and gets its clear "column ... is set by fairshare" error rather than a
-- bare "permission denied for table jobs".  The trigger refuses them.
DO $grant$
BEGIN
	EXECUTE (SELECT format('GRANT INSERT (%s) ON fairshare.jobs TO fairshare_submitter',
						   string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum))
			   FROM pg_attribute a
			  WHERE a.attrelid = 'fairshare.jobs'::regclass AND a.attnum > 0
				AND NOT a.attisdropped AND a.attname <> 'job_id');
END
$grant$;

-- Row-level security: a submitter sees only the jobs it submitted, and the
-- attempts and events of those jobs.  The extension's owner (the worker,
-- and the functions that switch to it) is not subject to these policies.
ALTER TABLE fairshare.jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.jobs TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.jobs FOR SELECT TO fairshare_submitter
	USING (submitted_by = current_user);
CREATE POLICY submitter_insert_own ON fairshare.jobs FOR INSERT TO fairshare_submitter
	WITH CHECK (submitted_by = current_user);

ALTER TABLE fairshare.job_attempts ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.job_attempts TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.job_attempts FOR SELECT TO fairshare_submitter
	USING (EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = job_attempts.job_id));

ALTER TABLE fairshare.job_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY admin_all ON fairshare.job_events TO fairshare_admin USING (true) WITH CHECK (true);
CREATE POLICY submitter_select_own ON fairshare.job_events FOR SELECT TO fairshare_submitter
	USING (EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.job_id = job_events.job_id));

-- Job control: callable by admins and submitters (row-level security then
-- decides which jobs each may act on).
REVOKE ALL ON FUNCTION fairshare.terminate_job(bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare.update_job_priority(bigint, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.terminate_job(bigint, text) TO fairshare_admin, fairshare_submitter;
GRANT EXECUTE ON FUNCTION fairshare.update_job_priority(bigint, integer) TO fairshare_admin, fairshare_submitter;

-- ==== sql/parts/40_scheduler.sql
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
	-- A training job we have no ARN for yet is ours only if SageMaker made it
	-- after the attempt was placed: a job of the same name from before (an
	-- earlier installation with the same fairshare.job_name_prefix) must not
	-- be adopted, followed, or reported as this job's outcome.  Five minutes
	-- allow for clocks that disagree.
	IF j.training_job_arn IS NULL AND jsonb_typeof(describe_response -> 'CreationTime') = 'number'
	   AND to_timestamp((describe_response ->> 'CreationTime')::double precision)
		   < (SELECT a.created_at FROM fairshare.job_attempts a
			   WHERE a.job_id = j.job_id AND a.attempt = j.attempts) - interval '5 minutes' THEN
		UPDATE fairshare.job_attempts SET outcome = 'FAILED'
		 WHERE job_attempts.job_id = j.job_id AND attempt = j.attempts;
		UPDATE fairshare.jobs
		   SET status = 'FAILED',
			   status_reason = format('training job name %s is taken in SageMaker by a job fairshare did not create '
									  '(created %s, before this attempt was placed); give this installation its own '
									  'fairshare.job_name_prefix', j.training_job_name,
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
	'preemption and termination outcomes (design sections 3 and 5).  Returns the job''s status afterwards.';

REVOKE ALL ON FUNCTION fairshare.apply_status(bigint, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.apply_status(bigint, jsonb) TO fairshare_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON fairshare.share_usage, fairshare.capacity_backoffs TO fairshare_admin;

-- The stop of an attempt that never reached SageMaker (the dispatcher had
-- not sent its create, or SageMaker does not know the name): it never
-- started, so nothing was lost.  A preemption of it sends the job back to
-- RUNNABLE without counting toward preemption_retries (those bound how
-- often a job loses work), the attempt's outcome is REQUEUED; a terminate
-- or timeout ends the job as apply_status would for a Stopped answer.
CREATE FUNCTION fairshare._cancel_unsent(job_id bigint, training_job_name text)
RETURNS fairshare.job_status LANGUAGE plpgsql AS $$
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
GRANT EXECUTE ON FUNCTION fairshare._cancel_unsent(bigint, text) TO fairshare_admin;
GRANT SELECT ON fairshare.share_usage TO fairshare_submitter;

-- The start of every pass (not of a dry run): new jobs enter their queue,
-- jobs of disabled queues or quota shares wait as PENDING (and come back
-- when re-enabled), and attempts past attempt_duration_seconds get a stop.
-- max_new bounds how many SUBMITTED jobs enter their queue, oldest first
-- (NULL: all of them); the result says whether some were left for the
-- next pass.  The dispatcher bounds it so that the first pass of a burst
-- of thousands of jobs places, and sends, its first jobs soon.
CREATE FUNCTION fairshare._prepare_pass(max_new integer DEFAULT NULL)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	moved bigint;
BEGIN
	IF max_new IS NOT NULL AND max_new < 1 THEN
		RAISE EXCEPTION 'max_new must be at least 1, not %', max_new
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- Rows another transaction holds locked (a user's open terminate_job or
	-- update_job_priority) are skipped, never waited for: the next pass
	-- takes them.  A pass must not stall on a session left idle in its
	-- transaction.  Each statement locks its rows in a MATERIALIZED CTE,
	-- read once: a locking subquery that the plan rescans would skip the
	-- rows the statement has already updated and take others.
	--
	-- New jobs: RUNNABLE, or PENDING while their queue or quota share is
	-- disabled.  (jobs_new_idx: only SUBMITTED and PENDING rows, by job_id.)
	-- EXECUTE: a plan for the LIMIT it gets, not a generic one.
	EXECUTE $q$
	WITH w AS MATERIALIZED (
		SELECT job_id, job_queue, quota_share FROM fairshare.jobs
		 WHERE status = 'SUBMITTED' ORDER BY job_id LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED)
	UPDATE fairshare.jobs j
	   SET status = CASE WHEN b.blocked IS NULL THEN 'RUNNABLE' ELSE 'PENDING' END::fairshare.job_status,
		   status_reason = b.blocked
	  FROM (SELECT w.job_id,
				   CASE WHEN q.state <> 'ENABLED' THEN format('job queue "%s" is DISABLED', q.name)
						WHEN qs.state <> 'ENABLED' THEN format('quota share "%s" is DISABLED', qs.name)
				   END AS blocked
			  FROM w
			  JOIN fairshare.job_queues q ON q.name = w.job_queue
			  LEFT JOIN fairshare.quota_shares qs ON qs.job_queue = w.job_queue AND qs.name = w.quota_share) b
	 WHERE j.job_id = b.job_id AND j.status = 'SUBMITTED'
	$q$ USING max_new;
	GET DIAGNOSTICS moved = ROW_COUNT;

	-- Pending jobs whose queue and quota share are enabled again.
	WITH w AS MATERIALIZED (
		SELECT p.job_id FROM fairshare.jobs p
		  JOIN fairshare.job_queues q ON q.name = p.job_queue
		  LEFT JOIN fairshare.quota_shares qs ON qs.job_queue = p.job_queue AND qs.name = p.quota_share
		 WHERE p.status = 'PENDING' AND q.state = 'ENABLED' AND coalesce(qs.state, 'ENABLED') = 'ENABLED'
		   FOR NO KEY UPDATE OF p SKIP LOCKED)
	UPDATE fairshare.jobs j
	   SET status = 'RUNNABLE', status_reason = NULL
	  FROM w
	 WHERE j.job_id = w.job_id AND j.status = 'PENDING';

	-- Waiting jobs of a queue or quota share that was disabled since (the
	-- queue's state is named first, as for new jobs).
	WITH w AS MATERIALIZED (
		SELECT r.job_id,
			   CASE WHEN q.state <> 'ENABLED' THEN format('job queue "%s" is DISABLED', r.job_queue)
					ELSE format('quota share "%s" is DISABLED', r.quota_share) END AS reason
		  FROM fairshare.jobs r
		  JOIN fairshare.job_queues q ON q.name = r.job_queue
		  LEFT JOIN fairshare.quota_shares qs ON qs.job_queue = r.job_queue AND qs.name = r.quota_share
		 WHERE r.status = 'RUNNABLE' AND (q.state <> 'ENABLED' OR qs.state <> 'ENABLED')
		   FOR NO KEY UPDATE OF r SKIP LOCKED)
	UPDATE fairshare.jobs j
	   SET status = 'PENDING', status_reason = w.reason
	  FROM w
	 WHERE j.job_id = w.job_id AND j.status = 'RUNNABLE';

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

	RETURN max_new IS NOT NULL AND moved >= max_new
		AND EXISTS (SELECT 1 FROM fairshare.jobs WHERE status = 'SUBMITTED');
END
$$;

CREATE FUNCTION fairshare.schedule(dry_run boolean DEFAULT false)
RETURNS TABLE (job_id bigint, action text, service_environment text, instance_type text, reason text)
AS 'MODULE_PATHNAME', 'fairshare_schedule'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.schedule(boolean) IS
	'One scheduling pass over every enabled queue: PLACE and PREEMPT decisions, applied unless dry_run.';
REVOKE ALL ON FUNCTION fairshare.schedule(boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.schedule(boolean) TO fairshare_admin;

CREATE FUNCTION fairshare.queue_snapshot(job_queue text, max_jobs integer DEFAULT 100)
RETURNS TABLE ("position" integer, job_id bigint, job_name text, share text, scheduling_priority integer,
			   status fairshare.job_status, earliest_time_at_position timestamptz, pending_reason text)
AS 'MODULE_PATHNAME', 'fairshare_queue_snapshot'
LANGUAGE C VOLATILE;
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
LANGUAGE C VOLATILE;

-- The number of RUNNABLE jobs ahead of a job in its own share, in the
-- share's order (FIFO: runnable_at, job_id; otherwise priority first).
CREATE FUNCTION fairshare._jobs_ahead_in_share(j fairshare.jobs, cap integer)
RETURNS bigint LANGUAGE sql STABLE AS $$
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
RETURNS jsonb LANGUAGE plpgsql VOLATILE AS $$
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
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.explain(bigint) IS
	'Where a job stands and why: its position, what is ahead of it, which limit blocks it, its share''s usage and weight.';

REVOKE ALL ON FUNCTION fairshare.queue_snapshot(text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare.explain(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare._explain(bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION fairshare._explain_pass(bigint, text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.queue_snapshot(text, integer)
	TO fairshare_admin, fairshare_submitter, fairshare_viewer;
GRANT EXECUTE ON FUNCTION fairshare.explain(bigint) TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- ==== sql/parts/50_aws.sql
-- AWS: SigV4 signing, the credential chain and SageMaker calls (src/aws/).
--
-- Every function here deals with secrets or reveals where they come from,
-- so EXECUTE is revoked from PUBLIC and granted to fairshare_admin only
-- (superusers can always execute).  None of them stores or logs a secret.

-- The headers SigV4 adds to a request: Authorization, X-Amz-Date, and
-- X-Amz-Security-Token when session_token is given (X-Amz-Content-SHA256
-- too for service s3).  headers is a JSON object of names to a string or an
-- array of strings (one per repeated header, in order); headers and body
-- may be NULL.  session_token NULL or '' means none; amz_date
-- (YYYYMMDDTHHMMSSZ, UTC) NULL means now.
CREATE FUNCTION fairshare.sigv4_sign(method text, url text, headers jsonb,
                                     body bytea, region text, service text,
                                     access_key_id text,
                                     secret_access_key text,
                                     session_token text DEFAULT NULL,
                                     amz_date text DEFAULT NULL)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_sigv4_sign';

COMMENT ON FUNCTION fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text)
IS 'Headers that sign a request with AWS Signature Version 4, as botocore signs it';

-- Where the server's credential chain finds AWS credentials now, without
-- revealing them: source, masked access key id, expiry and refresh times.
CREATE FUNCTION fairshare.aws_credentials_info()
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'fairshare_aws_credentials_info';

COMMENT ON FUNCTION fairshare.aws_credentials_info()
IS 'Source, masked key id and expiry of the AWS credentials the server would use';

-- fairshare.region, else AWS_REGION, else AWS_DEFAULT_REGION; NULL if none.
CREATE FUNCTION fairshare.aws_region()
RETURNS text
LANGUAGE C STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_aws_region';

COMMENT ON FUNCTION fairshare.aws_region()
IS 'AWS region the extension uses: fairshare.region, else AWS_REGION, else AWS_DEFAULT_REGION';

REVOKE EXECUTE ON FUNCTION
    fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text),
    fairshare.aws_credentials_info(),
    fairshare.aws_region()
FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
    fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text),
    fairshare.aws_credentials_info(),
    fairshare.aws_region()
TO fairshare_admin;

-- ---------------------------------------------------------------------
-- SageMaker calls through the request engine (src/aws/sagemaker_client.c).
-- They act with the server's AWS credentials, so, like the functions
-- above, they are for superusers and fairshare_admin only.

-- One signed call; returns the answer's body, or raises an error that
-- names SageMaker's error type and message (errdetail: HTTP status, tries,
-- error class, request id).  The endpoint is fairshare.endpoint_url, else
-- AWS_ENDPOINT_URL_SAGEMAKER, else https://api.sagemaker.<region>.amazonaws.com.
CREATE FUNCTION fairshare.sagemaker_call(operation text, request jsonb)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_call';

COMMENT ON FUNCTION fairshare.sagemaker_call(text, jsonb)
IS 'One signed SageMaker call (CreateTrainingJob, DescribeTrainingJob, StopTrainingJob, ListTrainingJobs), retried as the dispatcher retries';

-- Where calls go for a service environment with this endpoint_url and
-- region (NULL = not set): {"url", "region", "source"}.
CREATE FUNCTION fairshare.sagemaker_endpoint(endpoint_url text DEFAULT NULL,
                                             region text DEFAULT NULL)
RETURNS jsonb
LANGUAGE C STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_endpoint';

COMMENT ON FUNCTION fairshare.sagemaker_endpoint(text, text)
IS 'The SageMaker endpoint URL and region a call would use, and where the URL comes from';

-- Test-only: many calls at once through a fresh engine, one row each, in
-- array order.  options: connect_timeout_ms, timeout_ms, max_tries,
-- backoff_base_ms, throttle_backoff_base_ms, backoff_cap_ms, endpoint_url,
-- region.
CREATE FUNCTION fairshare._sagemaker_batch(operation text, requests jsonb[],
                                           options jsonb DEFAULT '{}')
RETURNS TABLE(ord int, error_class text, http_status int, error_type text,
              message text, response jsonb, tries int, ambiguous_tries int,
              new_connections int, started_ms float8, elapsed_ms float8)
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_batch';

COMMENT ON FUNCTION fairshare._sagemaker_batch(text, jsonb[], jsonb)
IS 'Test-only: submit many SageMaker calls at once and report each one''s outcome';

-- Test-only: one call, one fs_sm_wait(wait_ms); shows whether a set latch
-- ended the wait early.
CREATE FUNCTION fairshare._sagemaker_wait_test(operation text, request jsonb, wait_ms int)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_wait_test';

COMMENT ON FUNCTION fairshare._sagemaker_wait_test(text, jsonb, int)
IS 'Test-only: does setting this backend''s latch end the SageMaker engine''s wait';

-- Test-only: calls moved along by fs_sm_pump() alone while the caller is
-- busy, as the dispatcher's are during a scheduling pass.
CREATE FUNCTION fairshare._sagemaker_pump_test(operation text, requests jsonb[], busy_ms int, pump boolean)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_pump_test';

COMMENT ON FUNCTION fairshare._sagemaker_pump_test(text, jsonb[], int, boolean)
IS 'Test-only: do SageMaker calls progress through the non-blocking pump while the caller is busy';

-- Test-only: curl handles alive in this backend.
CREATE FUNCTION fairshare._sagemaker_client_stats()
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_client_stats';

COMMENT ON FUNCTION fairshare._sagemaker_client_stats()
IS 'Test-only: SageMaker clients and curl handles alive in this backend';

REVOKE EXECUTE ON FUNCTION
    fairshare.sagemaker_call(text, jsonb),
    fairshare.sagemaker_endpoint(text, text),
    fairshare._sagemaker_batch(text, jsonb[], jsonb),
    fairshare._sagemaker_wait_test(text, jsonb, int),
    fairshare._sagemaker_pump_test(text, jsonb[], int, boolean),
    fairshare._sagemaker_client_stats()
FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
    fairshare.sagemaker_call(text, jsonb),
    fairshare.sagemaker_endpoint(text, text),
    fairshare._sagemaker_batch(text, jsonb[], jsonb),
    fairshare._sagemaker_wait_test(text, jsonb, int),
    fairshare._sagemaker_pump_test(text, jsonb[], int, boolean),
    fairshare._sagemaker_client_stats()
TO fairshare_admin;

-- ==== sql/parts/60_worker.sql
-- 60_worker.sql — what the dispatcher (src/worker/) needs from SQL:
-- wake-on-commit, its state, and the CreateTrainingJob body of an attempt.

-- Any transaction that inserts or changes jobs wakes the dispatcher when it
-- commits (once per transaction; not on rollback).
CREATE FUNCTION fairshare._wake_dispatcher()
RETURNS trigger
AS 'MODULE_PATHNAME', 'fairshare_wake_dispatcher'
LANGUAGE C;
CREATE TRIGGER wake_dispatcher AFTER INSERT OR UPDATE ON fairshare.jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._wake_dispatcher();

CREATE FUNCTION fairshare.dispatcher_state(OUT pid integer, OUT wake_requests bigint,
										   OUT turns bigint, OUT last_turn_at timestamptz)
AS 'MODULE_PATHNAME', 'fairshare_dispatcher_state'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.dispatcher_state() IS
	'The dispatcher''s process id (NULL when none runs), committed transactions that woke it, turns it completed, and when the last ended.';

-- The CreateTrainingJob body for a job's current attempt: the submitted
-- request with the attempt's name, the placement's instance type and count,
-- and the job's tags (plus fairshare's own) as SageMaker Tags.  SageMaker
-- requires a StoppingCondition; a request without one gets SageMaker's
-- default limit, a day, which is also the time limit the scheduler assumed.
CREATE FUNCTION fairshare.create_training_job_request(job fairshare.jobs)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN job.request ? 'StoppingCondition' THEN '{}'::jsonb
				ELSE '{"StoppingCondition": {"MaxRuntimeInSeconds": 86400}}'::jsonb END
		   || job.request || jsonb_build_object(
		'TrainingJobName', job.training_job_name,
		'ResourceConfig', coalesce(job.request -> 'ResourceConfig', '{}')
						  || jsonb_build_object('InstanceType', job.instance_type,
												'InstanceCount', job.instance_count),
		'Tags', coalesce(job.request -> 'Tags', '[]')
				|| coalesce((SELECT jsonb_agg(jsonb_build_object('Key', key, 'Value', value) ORDER BY key)
							   FROM jsonb_each_text(job.tags)), '[]')
				|| jsonb_build_array(
					   jsonb_build_object('Key', 'fairshare:job-id', 'Value', job.job_id::text),
					   jsonb_build_object('Key', 'fairshare:job-queue', 'Value', job.job_queue)))
$$;
COMMENT ON FUNCTION fairshare.create_training_job_request(fairshare.jobs) IS
	'The CreateTrainingJob request the dispatcher sends for the job''s current attempt.';

REVOKE ALL ON FUNCTION fairshare.dispatcher_state() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.dispatcher_state() TO fairshare_admin, fairshare_viewer;

-- ==== sql/parts/70_views.sql
-- 70_views.sql — the dashboard views (design section 4, "Views for
-- dashboards"): what every environment, queue and share holds and waits for
-- now, and wait times, run times, failures and throughput over a recent
-- window.  README.md, "Dashboards and housekeeping", says what each column
-- means.
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
-- stop is in progress (design 2.1).
CREATE VIEW fairshare._held_jobs AS
SELECT j.job_id, j.job_queue, j.share_identifier, j.quota_share,
	   j.service_environment, j.instance_type, j.instance_count,
	   j.stop_kind IS NOT NULL AS stopping
  FROM fairshare.jobs j
 WHERE j.status IN ('SCHEDULED', 'STARTING', 'RUNNING');

-- RUNNABLE jobs and since when each has waited: since it last became
-- RUNNABLE, i.e. the end of its last attempt, or runnable_at if it never
-- ran.  (runnable_at itself is kept across retries and preemptions: it is
-- the job's place in line, not its wait.)
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
	SELECT service_environment, capacity_unit, max_capacity
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
		   (SELECT l.max_capacity FROM fairshare.capacity_limits l
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
		   l.capacity_unit, l.max_capacity AS share_limit
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
			   (SELECT l.max_capacity FROM fairshare.capacity_limits l
				 WHERE l.service_environment = qe.service_environment AND l.capacity_unit = u.capacity_unit),
			   CASE WHEN u.capacity_unit = 'NUM_INSTANCES'
					THEN (SELECT sum(l.max_capacity) FROM fairshare.capacity_limits l
						   WHERE l.service_environment = qe.service_environment)
					ELSE (SELECT l.max_capacity FROM fairshare.capacity_limits l
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
	   -- else 1 (design 2.5).
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
			LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
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
RETURNS void LANGUAGE plpgsql AS $$
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
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
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
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
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
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
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
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off
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

-- ==== sql/parts/80_housekeeping.sql
-- 80_housekeeping.sql — the periodic housekeeping that pg_cron runs (design
-- section 8): a snapshot of utilisation every minute, alert rules every
-- minute, retention every day; and the registration of those jobs with
-- pg_cron, whichever database fairshare lives in.
--
-- Every job is a plain function or procedure that may also be called by
-- hand (and is, by the regression tests):
--   fairshare.record_utilization()   every minute  -> utilization_history
--   fairshare.evaluate_alerts()      every minute  -> alert_events + NOTIFY fairshare_alerts
--   CALL fairshare.apply_retention() daily, 03:17 -> deletes what is older than fairshare.retention
--
-- The pg_cron jobs are written by src/housekeeping/cron_jobs.c, which says
-- how they reach cron.database_name; this file asks for them at the end,
-- and an event trigger asks for their removal when fairshare is dropped.

------------------------------------------------------------------------------
-- Utilisation history
------------------------------------------------------------------------------

CREATE TABLE fairshare.utilization_history (
	sampled_at			timestamptz NOT NULL,
	kind				text NOT NULL CHECK (kind IN ('ENVIRONMENT', 'QUOTA_SHARE', 'FAIR_SHARE')),
	service_environment	text,		-- ENVIRONMENT rows
	job_queue			text,		-- QUOTA_SHARE and FAIR_SHARE rows
	share				text,		-- the quota share or the share identifier
	capacity_unit		text,		-- ENVIRONMENT and QUOTA_SHARE rows: NUM_INSTANCES or an instance type
	capacity			integer,	-- the environment's limit, or the quota share's limit
	in_use				integer NOT NULL,	-- instances held (SCHEDULED, STARTING, RUNNING)
	borrowed			integer,	-- QUOTA_SHARE rows: held beyond the share's limit
	usage				double precision,	-- FAIR_SHARE rows: decayed usage
	waiting_instances	integer NOT NULL,	-- instances the RUNNABLE jobs want
	queue_depth			integer NOT NULL,	-- RUNNABLE jobs
	oldest_wait_seconds	bigint		-- the longest current wait
);
COMMENT ON TABLE fairshare.utilization_history IS
	'One row per minute per (environment, capacity unit), per quota share and capacity unit, and per active fair share, '
	'written by fairshare.record_utilization().';
CREATE INDEX utilization_history_sampled_idx ON fairshare.utilization_history (sampled_at);

CREATE FUNCTION fairshare.record_utilization()
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
	n integer;
BEGIN
	INSERT INTO fairshare.utilization_history
		(sampled_at, kind, service_environment, job_queue, share, capacity_unit, capacity,
		 in_use, borrowed, usage, waiting_instances, queue_depth, oldest_wait_seconds)
	SELECT now(), 'ENVIRONMENT', e.service_environment, NULL::text, NULL::text, e.capacity_unit, e.capacity,
		   e.in_use, NULL::integer, NULL::double precision, e.waiting_instances, e.waiting_jobs, e.oldest_wait_seconds
	  FROM fairshare._environment_utilization e
	UNION ALL
	SELECT now(), 'QUOTA_SHARE', NULL, q.job_queue, q.quota_share, q.capacity_unit, q.share_limit,
		   q.held, q.borrowed, NULL, q.waiting_instances, q.waiting_jobs, q.oldest_wait_seconds
	  FROM fairshare._quota_share_status q
	UNION ALL
	-- Fair shares come and go with their identifiers: only those with
	-- something running, waiting or still counted in their usage.
	SELECT now(), 'FAIR_SHARE', NULL, f.job_queue, f.share_identifier, NULL, NULL,
		   f.held, NULL, f.decayed_usage, f.waiting_instances, f.waiting_jobs, f.oldest_wait_seconds
	  FROM fairshare._fair_share_status f
	 WHERE f.held > 0 OR f.waiting_jobs > 0 OR f.decayed_usage >= 0.01;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;
COMMENT ON FUNCTION fairshare.record_utilization() IS
	'Append the current environment, quota-share and fair-share state to fairshare.utilization_history; '
	'returns the rows written.  pg_cron calls it every minute.';

------------------------------------------------------------------------------
-- Alerts
------------------------------------------------------------------------------

CREATE TABLE fairshare.alert_rules (
	name				text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9_-]{1,128}$'),
	kind				text NOT NULL CHECK (kind IN ('JOB_WAITING', 'FAILURE_BURST', 'IDLE_CAPACITY', 'SHARE_STARVED')),
	job_queue			text REFERENCES fairshare.job_queues (name) ON DELETE CASCADE,
	service_environment	text REFERENCES fairshare.service_environments (name) ON DELETE CASCADE,
	threshold			interval NOT NULL,
	min_count			integer CHECK (min_count >= 1),
	severity			text NOT NULL DEFAULT 'WARNING' CHECK (severity IN ('INFO', 'WARNING', 'CRITICAL')),
	enabled				boolean NOT NULL DEFAULT true,
	description			text
);
COMMENT ON TABLE fairshare.alert_rules IS
	'What fairshare.evaluate_alerts() checks.  threshold: JOB_WAITING how long a job may stay RUNNABLE; '
	'FAILURE_BURST the window in which min_count failed attempts raise it; IDLE_CAPACITY and SHARE_STARVED '
	'how long the condition must last.  job_queue / service_environment narrow a rule (NULL = all).';

CREATE FUNCTION fairshare._validate_alert_rule()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM fairshare._check_name('alert rule', NEW.name);
	IF NEW.kind IS NULL OR NEW.kind NOT IN ('JOB_WAITING', 'FAILURE_BURST', 'IDLE_CAPACITY', 'SHARE_STARVED') THEN
		PERFORM fairshare._reject('22023',
			format('invalid alert rule kind "%s"', coalesce(NEW.kind, 'NULL')),
			'The kind is JOB_WAITING, FAILURE_BURST, IDLE_CAPACITY or SHARE_STARVED.');
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

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.alert_rules
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_alert_rule();

INSERT INTO fairshare.alert_rules (name, kind, threshold, min_count, severity, description) VALUES
	('job_waiting', 'JOB_WAITING', '1 hour', NULL, 'WARNING',
	 'A job has been RUNNABLE for more than an hour.'),
	('failure_burst', 'FAILURE_BURST', '15 minutes', 5, 'CRITICAL',
	 'Five or more attempts of one queue failed within 15 minutes.'),
	('idle_capacity', 'IDLE_CAPACITY', '5 minutes', NULL, 'WARNING',
	 'Capacity has stayed free for 5 minutes while a job that fits in it waits.'),
	('share_starved', 'SHARE_STARVED', '10 minutes', NULL, 'CRITICAL',
	 'A quota share has held less than its limit for 10 minutes while it has waiting jobs that fit in its guarantee.');

-- A condition as evaluate_alerts() sees it.  subject says what it is about
-- and is, with the rule, what makes two observations the same alert.
CREATE TYPE fairshare.alert_candidate AS (
	rule_name			text,
	subject				text,
	job_queue			text,
	share				text,
	service_environment	text,
	capacity_unit		text,
	message				text,
	details				jsonb
);

-- Conditions that held at the last evaluation: since when, and the alert
-- raised for them (NULL while a "for at least" threshold has not passed).
CREATE TABLE fairshare.alert_conditions (
	rule_name	text NOT NULL,
	subject		text NOT NULL,
	since		timestamptz NOT NULL,
	last_seen	timestamptz NOT NULL,
	alert_id	bigint,
	PRIMARY KEY (rule_name, subject)
);
COMMENT ON TABLE fairshare.alert_conditions IS
	'Alert conditions holding at the last evaluation; the row goes when the condition no longer holds.';

CREATE TABLE fairshare.alert_events (
	alert_id			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	rule_name			text NOT NULL,
	kind				text NOT NULL,
	severity			text NOT NULL,
	subject				text NOT NULL,
	job_queue			text,
	share				text,
	service_environment	text,
	capacity_unit		text,
	message				text NOT NULL,
	details				jsonb NOT NULL DEFAULT '{}',
	condition_since		timestamptz NOT NULL,
	raised_at			timestamptz NOT NULL DEFAULT now(),
	resolved_at			timestamptz
);
COMMENT ON TABLE fairshare.alert_events IS
	'Alerts raised by fairshare.evaluate_alerts(), one per episode of a condition; resolved_at is set at the '
	'first evaluation where the condition no longer holds.';
CREATE INDEX alert_events_raised_idx ON fairshare.alert_events (raised_at);
CREATE INDEX alert_events_resolved_idx ON fairshare.alert_events (resolved_at);

-- A duration for people: "45 s", "12 min", "2 h 5 min", "3 d 4 h" (the
-- same whatever IntervalStyle the session uses).
CREATE FUNCTION fairshare._human_duration(d interval)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN s < 60 THEN s || ' s'
		WHEN s < 3600 THEN s / 60 || ' min'
		WHEN s < 86400 THEN s / 3600 || ' h' || CASE WHEN s % 3600 >= 60 THEN ' ' || s % 3600 / 60 || ' min' ELSE '' END
		ELSE s / 86400 || ' d' || CASE WHEN s % 86400 >= 3600 THEN ' ' || s % 86400 / 3600 || ' h' ELSE '' END
	END
	  FROM (SELECT floor(extract(epoch FROM d))::bigint AS s) x
$$;

-- What holds now, for every enabled rule.
CREATE FUNCTION fairshare._alert_candidates()
RETURNS SETOF fairshare.alert_candidate LANGUAGE sql VOLATILE AS $$
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
$$;

-- The JSON sent with NOTIFY fairshare_alerts.  LISTEN has no access
-- control -- any role that may connect to the database hears it -- so the
-- payload leaves out the one thing a user wrote: a failure burst's most
-- common status_reason (it can name buckets, datasets, ...).  It stays in
-- fairshare.alert_events, which only viewers and admins read.
CREATE FUNCTION fairshare.alert_payload(a fairshare.alert_events)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'alert_id', a.alert_id, 'rule', a.rule_name, 'kind', a.kind, 'severity', a.severity,
		'subject', a.subject, 'job_queue', a.job_queue, 'share', a.share,
		'service_environment', a.service_environment, 'capacity_unit', a.capacity_unit,
		'message', CASE WHEN a.kind = 'FAILURE_BURST'
						THEN split_part(a.message, '; most common reason: ', 1)
							 || '; the most common reason is in fairshare.alert_events'
						ELSE a.message END,
		'details', a.details - 'top_reason',
		'condition_since', a.condition_since, 'raised_at', a.raised_at, 'database', current_database()))
$$;
COMMENT ON FUNCTION fairshare.alert_payload(fairshare.alert_events) IS
	'The JSON payload of the NOTIFY fairshare_alerts sent for an alert.';

CREATE FUNCTION fairshare.evaluate_alerts()
RETURNS SETOF fairshare.alert_events
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
	cands fairshare.alert_candidate[];
	a fairshare.alert_events;
BEGIN
	-- One evaluation at a time: pg_cron's and one made by hand may overlap.
	PERFORM pg_advisory_xact_lock(hashtext('fairshare.evaluate_alerts'));

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
			   AND (r.kind IN ('JOB_WAITING', 'FAILURE_BURST') OR now() - ac.since >= r.threshold)
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
COMMENT ON FUNCTION fairshare.evaluate_alerts() IS
	'Evaluate every enabled alert rule; raise (and NOTIFY fairshare_alerts) each new alert once per episode of '
	'its condition, resolve those whose condition has ended; returns the alerts raised.  pg_cron calls it every minute.';

CREATE VIEW fairshare.active_alerts AS
SELECT alert_id, rule_name, kind, severity, subject, job_queue, share, service_environment, capacity_unit,
	   message, details, condition_since, raised_at
  FROM fairshare.alert_events
 WHERE resolved_at IS NULL;
COMMENT ON VIEW fairshare.active_alerts IS
	'Alerts whose condition still held at the last evaluation.';

------------------------------------------------------------------------------
-- Retention
------------------------------------------------------------------------------

-- Everything that finished, ended or was sampled before this goes.
CREATE FUNCTION fairshare.retention_cutoff()
RETURNS timestamptz LANGUAGE sql STABLE AS $$
	SELECT now() - coalesce(nullif(current_setting('fairshare.retention', true), ''), '30d')::interval
$$;
COMMENT ON FUNCTION fairshare.retention_cutoff() IS
	'now() minus fairshare.retention: finished jobs, events, history and resolved alerts older than this are deleted.';

-- Delete one bounded batch of one kind; returns the rows deleted.
CREATE FUNCTION fairshare._retention_delete(what text, cutoff timestamptz, batch_size integer)
RETURNS bigint LANGUAGE plpgsql AS $$
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
		-- Old events of jobs that are still there: a job unfinished for
		-- longer than the retention keeps its row, not its oldest events.
		DELETE FROM fairshare.job_events e
		 WHERE e.event_id IN (SELECT o.event_id FROM fairshare.job_events o
							   WHERE o.at < cutoff ORDER BY o.at LIMIT batch_size);
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

CREATE FUNCTION fairshare._check_batch_size(batch_size integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF batch_size IS NULL OR batch_size NOT BETWEEN 1 AND 100000 THEN
		PERFORM fairshare._reject('22023',
			format('batch_size %s is out of range', coalesce(batch_size::text, 'NULL')),
			'batch_size is from 1 to 100000 rows per table and transaction.');
	END IF;
END
$$;

-- One bounded batch of each kind, in the caller's transaction.
CREATE FUNCTION fairshare.apply_retention_batch(batch_size integer DEFAULT 1000,
												older_than timestamptz DEFAULT NULL)
RETURNS TABLE (what text, deleted bigint) LANGUAGE plpgsql AS $$
DECLARE
	cutoff timestamptz := coalesce(older_than, fairshare.retention_cutoff());
BEGIN
	PERFORM fairshare._check_batch_size(batch_size);
	FOREACH what IN ARRAY ARRAY['jobs', 'job_events', 'utilization_history', 'alert_events'] LOOP
		deleted := fairshare._retention_delete(what, cutoff, batch_size);
		RETURN NEXT;
	END LOOP;
END
$$;
COMMENT ON FUNCTION fairshare.apply_retention_batch(integer, timestamptz) IS
	'Delete at most batch_size rows of each kind older than older_than (default: fairshare.retention_cutoff()), '
	'in the current transaction; returns what was deleted.';

-- The daily job: for each kind, batches, each committed, until nothing old
-- is left (finished jobs first, so that their events go with them).  A
-- procedure, so that no lock outlives its batch; CALL it outside a
-- transaction block.
CREATE PROCEDURE fairshare.apply_retention(batch_size integer DEFAULT 1000)
LANGUAGE plpgsql AS $$
DECLARE
	cutoff timestamptz := fairshare.retention_cutoff();
	kinds constant text[] := ARRAY['jobs', 'job_events', 'utilization_history', 'alert_events'];
	totals bigint[] := ARRAY[0, 0, 0, 0];
	n bigint;
BEGIN
	PERFORM fairshare._check_batch_size(batch_size);
	FOR k IN 1 .. array_length(kinds, 1) LOOP
		LOOP
			n := fairshare._retention_delete(kinds[k], cutoff, batch_size);
			totals[k] := totals[k] + n;
			COMMIT;
			EXIT WHEN n < batch_size;
		END LOOP;
	END LOOP;
	RAISE NOTICE 'fairshare retention (%): deleted % finished jobs, % older job events, % utilization rows, % resolved alerts',
		coalesce(current_setting('fairshare.retention', true), '30d'), totals[1], totals[2], totals[3], totals[4];
END
$$;
COMMENT ON PROCEDURE fairshare.apply_retention(integer) IS
	'Delete finished jobs (with their attempts and events), job events, utilization history and resolved alerts '
	'older than fairshare.retention, batch_size rows per table and transaction.  pg_cron calls it daily.';

------------------------------------------------------------------------------
-- pg_cron registration (src/housekeeping/cron_jobs.c)
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._housekeeping_sync()
RETURNS void
AS 'MODULE_PATHNAME', 'fairshare_housekeeping_sync'
LANGUAGE C VOLATILE;

CREATE FUNCTION fairshare._housekeeping_on_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fairshare_housekeeping_on_drop'
LANGUAGE C;

CREATE FUNCTION fairshare.schedule_housekeeping()
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_schedule_housekeeping'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.schedule_housekeeping() IS
	'Schedule this database''s housekeeping jobs in pg_cron now (CREATE EXTENSION does it by itself); '
	'jobs that exist are kept as they are.  Superuser or extension owner.';

CREATE FUNCTION fairshare.unschedule_housekeeping()
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_unschedule_housekeeping'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION fairshare.unschedule_housekeeping() IS
	'Remove this database''s housekeeping jobs from pg_cron (DROP EXTENSION does it by itself).  '
	'Superuser or extension owner.';

-- DROP EXTENSION fairshare, or DROP SCHEMA fairshare CASCADE, or DROP OWNED
-- of its owner: at commit, if fairshare is gone, so are its jobs.  ENABLE
-- ALWAYS: it fires also under session_replication_role = replica.
CREATE EVENT TRIGGER fairshare_housekeeping_on_drop ON ddl_command_start
	WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
	EXECUTE FUNCTION fairshare._housekeeping_on_drop();
ALTER EVENT TRIGGER fairshare_housekeeping_on_drop ENABLE ALWAYS;

------------------------------------------------------------------------------
-- Privileges
------------------------------------------------------------------------------

GRANT SELECT ON fairshare.utilization_history, fairshare.alert_events, fairshare.active_alerts,
				fairshare.alert_rules
	TO fairshare_viewer, fairshare_admin;
GRANT INSERT, UPDATE, DELETE ON fairshare.alert_rules TO fairshare_admin;
GRANT SELECT ON fairshare.alert_conditions TO fairshare_admin;
GRANT DELETE ON fairshare.utilization_history, fairshare.alert_events TO fairshare_admin;

REVOKE ALL ON FUNCTION fairshare.record_utilization(), fairshare.evaluate_alerts(),
				fairshare.apply_retention_batch(integer, timestamptz),
				fairshare._retention_delete(text, timestamptz, integer),
				fairshare._housekeeping_sync(), fairshare.schedule_housekeeping(),
				fairshare.unschedule_housekeeping()
	FROM PUBLIC;
REVOKE ALL ON PROCEDURE fairshare.apply_retention(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare.record_utilization(), fairshare.evaluate_alerts(),
				fairshare.apply_retention_batch(integer, timestamptz),
				fairshare._retention_delete(text, timestamptz, integer)
	TO fairshare_admin;
GRANT EXECUTE ON PROCEDURE fairshare.apply_retention(integer) TO fairshare_admin;

-- Last: ask for the pg_cron jobs, scheduled when CREATE EXTENSION commits.
SELECT fairshare._housekeeping_sync();

-- ==== sql/parts/95_dump.sql
-- 95_dump.sql — pg_dump must save what users put in fairshare's tables.
--
-- Tables created by an extension script are not dumped unless marked:
-- without this, a pg_dump / pg_restore of the database would keep the
-- extension and lose every queue, share and job.  The default alert rules
-- are inserted by the install script, so only the others are dumped (a
-- change to a default rule's threshold is not kept across a dump).  One
-- call per statement: each call updates the extension's catalog row.
DO $dump$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['service_environments', 'capacity_limits', 'scheduling_policies',
							 'share_distribution', 'job_queues', 'queue_environments', 'quota_shares',
							 'quota_share_limits', 'jobs', 'job_attempts', 'job_events', 'share_usage',
							 'capacity_backoffs', 'utilization_history', 'alert_conditions', 'alert_events']
	LOOP
		PERFORM pg_catalog.pg_extension_config_dump(('fairshare.' || t)::regclass, '');
	END LOOP;
	PERFORM pg_catalog.pg_extension_config_dump('fairshare.alert_rules'::regclass,
		$$WHERE name NOT IN ('job_waiting', 'failure_burst', 'idle_capacity', 'share_starved')$$);
	FOREACH t IN ARRAY ARRAY['jobs_job_id_seq', 'job_events_event_id_seq', 'alert_events_alert_id_seq']
	LOOP
		PERFORM pg_catalog.pg_extension_config_dump(('fairshare.' || t)::regclass, '');
	END LOOP;
END
$dump$;
