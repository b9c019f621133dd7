-- 80_housekeeping.sql — the periodic housekeeping that pg_cron runs
-- (docs/operations.md, 'Housekeeping'): a snapshot of utilisation every minute, alert rules every
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
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp SET jit = off AS $$
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
	kind				text NOT NULL CHECK (kind IN ('JOB_WAITING', 'FAILURE_BURST', 'IDLE_CAPACITY', 'SHARE_STARVED',
												   'ORPHANED_TRAINING_JOBS')),
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
	'how long the condition must last; ORPHANED_TRAINING_JOBS how long an orphaned training job must have been '
	'seen.  job_queue / service_environment narrow a rule (NULL = all).';

CREATE FUNCTION fairshare._validate_alert_rule()
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
	 'A quota share has held less than its limit for 10 minutes while it has waiting jobs that fit in its guarantee.'),
	('orphaned_training_jobs', 'ORPHANED_TRAINING_JOBS', '0', NULL, 'CRITICAL',
	 'A training job at SageMaker carries this installation''s tag but no job knows it (a failover lost the end of the WAL).');

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
RETURNS text LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
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

-- The JSON sent with NOTIFY fairshare_alerts.  LISTEN has no access
-- control -- any role that may connect to the database hears it -- so the
-- payload leaves out the one thing a user wrote: a failure burst's most
-- common status_reason (it can name buckets, datasets, ...).  It stays in
-- fairshare.alert_events, which only viewers and admins read.
CREATE FUNCTION fairshare.alert_payload(a fairshare.alert_events)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
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
RETURNS timestamptz LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT now() - coalesce(nullif(current_setting('fairshare.retention', true), ''), '30d')::interval
$$;
COMMENT ON FUNCTION fairshare.retention_cutoff() IS
	'now() minus fairshare.retention: finished jobs, events, history and resolved alerts older than this are deleted.';

-- Delete one bounded batch of one kind; returns the rows deleted.
CREATE FUNCTION fairshare._retention_delete(what text, cutoff timestamptz, batch_size integer)
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

CREATE FUNCTION fairshare._check_batch_size(batch_size integer)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
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
RETURNS TABLE (what text, deleted bigint) LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
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
--
-- A procedure that commits cannot carry a SET clause, and pg_cron calls it
-- as a superuser whose search_path may name schemas others can write to.
-- So it pins the safe path itself, for each of its transactions (SET LOCAL
-- ends at COMMIT), before any statement that resolves a name; the
-- statements before that are schema-qualified.
CREATE PROCEDURE fairshare.apply_retention(batch_size integer DEFAULT 1000)
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
COMMENT ON PROCEDURE fairshare.apply_retention(integer) IS
	'Delete finished jobs (with their attempts and events), job events, utilization history and resolved alerts '
	'older than fairshare.retention, batch_size rows per table and transaction.  pg_cron calls it daily.';

------------------------------------------------------------------------------
-- pg_cron registration (src/housekeeping/cron_jobs.c)
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._housekeeping_sync()
RETURNS void
AS 'MODULE_PATHNAME', 'fairshare_housekeeping_sync'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;

CREATE FUNCTION fairshare._housekeeping_on_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'fairshare_housekeeping_on_drop'
LANGUAGE C
SET search_path = pg_catalog, fairshare, pg_temp;

CREATE FUNCTION fairshare.schedule_housekeeping()
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_schedule_housekeeping'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
COMMENT ON FUNCTION fairshare.schedule_housekeeping() IS
	'Schedule this database''s housekeeping jobs in pg_cron now (CREATE EXTENSION does it by itself); '
	'jobs that exist are kept as they are.  Superuser or extension owner.';

CREATE FUNCTION fairshare.unschedule_housekeeping()
RETURNS text
AS 'MODULE_PATHNAME', 'fairshare_unschedule_housekeeping'
LANGUAGE C VOLATILE
SET search_path = pg_catalog, fairshare, pg_temp;
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
