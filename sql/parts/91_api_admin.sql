-- 91_api_admin.sql — the administration operations of the AWS Batch API
-- (docs/api-admin.md): service environments, job queues, scheduling
-- policies, quota shares and tags, each a function
--     fairshare._api_<operation in snake_case>(request jsonb) RETURNS jsonb
-- over the same tables an admin writes in SQL (89_api_common.sql says how
-- the server calls them and maps their SQLSTATEs).  Also the queues' time
-- limits (jobStateTimeLimitActions), enforced by every scheduling pass.
--
-- Who may do what is decided by grants, never by a check in the function:
-- the operations that change something are SECURITY INVOKER and executable
-- by fairshare_admin only, so a submitter's or viewer's key gets 42501 from
-- PostgreSQL itself.  The operations that only read the configuration are
-- SECURITY DEFINER (viewers have no right on the tables, as in SQL, but may
-- see the queues' configuration through the API as through the views), and
-- the tags of a service job are read as the caller, so row-level security
-- decides which jobs' tags a submitter sees.
--
-- Where AWS and fairshare's SQL mean different things, the API follows AWS:
--  * a queue or quota share DISABLED through the API refuses new jobs but
--    keeps scheduling the ones it has (column accepts_jobs); SQL's state
--    DISABLED, which also holds its jobs back as PENDING, is shown by the
--    API as DISABLED too, with a statusReason that says so;
--  * deleting a queue or quota share terminates its unfinished jobs and
--    removes it once they have stopped (column deleting_since; the
--    scheduling pass finishes the deletion);
--  * shareDecaySeconds 0 (or none) is AWS's default 600-second window.

------------------------------------------------------------------------------
-- Catalog: tags, submissions and deletion of the admin resources, and the
-- queues' time limits.
------------------------------------------------------------------------------

ALTER TABLE fairshare.service_environments ADD COLUMN tags jsonb;
ALTER TABLE fairshare.scheduling_policies ADD COLUMN tags jsonb;
ALTER TABLE fairshare.job_queues ADD COLUMN tags jsonb;
ALTER TABLE fairshare.quota_shares ADD COLUMN tags jsonb;
COMMENT ON COLUMN fairshare.service_environments.tags IS 'Tags (a JSON object of strings), as TagResource sets them.';
COMMENT ON COLUMN fairshare.scheduling_policies.tags IS 'Tags (a JSON object of strings), as TagResource sets them.';
COMMENT ON COLUMN fairshare.job_queues.tags IS 'Tags (a JSON object of strings), as TagResource sets them.';
COMMENT ON COLUMN fairshare.quota_shares.tags IS 'Tags (a JSON object of strings), as TagResource sets them.';

-- AWS's DISABLED: the queue (or share) refuses new jobs, and the jobs it
-- has still run.  Checked by the submission trigger.
ALTER TABLE fairshare.job_queues ADD COLUMN accepts_jobs boolean NOT NULL DEFAULT true;
ALTER TABLE fairshare.quota_shares ADD COLUMN accepts_jobs boolean NOT NULL DEFAULT true;
COMMENT ON COLUMN fairshare.job_queues.accepts_jobs IS
	'false: new jobs are refused (the API''s DISABLED); the queue''s jobs still run unless state is DISABLED too.';
COMMENT ON COLUMN fairshare.quota_shares.accepts_jobs IS
	'false: new jobs are refused (the API''s DISABLED); the share''s jobs still run unless state is DISABLED too.';

-- Set by DeleteJobQueue / DeleteQuotaShare: the unfinished jobs were
-- terminated, and the row goes once the last of them has stopped.
ALTER TABLE fairshare.job_queues ADD COLUMN deleting_since timestamptz;
ALTER TABLE fairshare.quota_shares ADD COLUMN deleting_since timestamptz;
COMMENT ON COLUMN fairshare.job_queues.deleting_since IS
	'Set when the queue is being deleted: its jobs were terminated; the queue and its finished jobs go once they stopped.';
COMMENT ON COLUMN fairshare.quota_shares.deleting_since IS
	'Set when the share is being deleted: its jobs were terminated; the share goes once they stopped.';

-- One being deleted accepts no job again: its jobs were terminated, and a
-- job submitted now would only be failed by the next pass's intake.  (An
-- admin may still call the deletion off in SQL, clearing deleting_since.)
CREATE FUNCTION fairshare._guard_deleting()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NEW.deleting_since IS NOT NULL AND NEW.accepts_jobs THEN
		PERFORM fairshare._reject('55000',
			format('%s "%s" is being deleted: it accepts no new jobs',
				   CASE TG_RELID WHEN 'fairshare.quota_shares'::regclass THEN 'quota share' ELSE 'job queue' END,
				   NEW.name),
			'It goes once its jobs have stopped; to take jobs there again, call the deletion off first (deleting_since = NULL).');
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER guard_deleting BEFORE INSERT OR UPDATE OF accepts_jobs, deleting_since ON fairshare.job_queues
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_deleting();
CREATE TRIGGER guard_deleting BEFORE INSERT OR UPDATE OF accepts_jobs, deleting_since ON fairshare.quota_shares
	FOR EACH ROW EXECUTE FUNCTION fairshare._guard_deleting();

-- Tags of the admin resources, checked as AWS checks them.
CREATE FUNCTION fairshare._check_tags(kind text, tags jsonb)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	tag record;
BEGIN
	IF tags IS NULL THEN
		RETURN;
	END IF;
	IF jsonb_typeof(tags) <> 'object' THEN
		PERFORM fairshare._reject('22023', format('tags of a %s must be a JSON object of string values', kind));
	END IF;
	IF (SELECT count(*) FROM jsonb_object_keys(tags)) > 50 THEN
		PERFORM fairshare._reject('22023', format('a %s has at most 50 tags', kind));
	END IF;
	FOR tag IN SELECT key, value FROM jsonb_each(tags) LOOP
		IF jsonb_typeof(tag.value) <> 'string' OR length(tag.key) NOT BETWEEN 1 AND 128
		   OR length(tag.value #>> '{}') > 256 THEN
			PERFORM fairshare._reject('22023', format('invalid tag "%s" of a %s', tag.key, kind),
				'Tag keys are 1 to 128 characters and values are strings of at most 256.');
		END IF;
		IF lower(tag.key) LIKE 'aws:%' THEN
			PERFORM fairshare._reject('22023', format('tag key "%s" is reserved', tag.key),
				'Keys beginning with aws: belong to AWS.');
		END IF;
	END LOOP;
END
$$;

CREATE FUNCTION fairshare._validate_resource_tags()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	-- The messages name one resource: "a job queue has at most 50 tags".
	PERFORM fairshare._check_tags(CASE TG_RELID
		WHEN 'fairshare.service_environments'::regclass THEN 'service environment'
		WHEN 'fairshare.scheduling_policies'::regclass THEN 'scheduling policy'
		WHEN 'fairshare.job_queues'::regclass THEN 'job queue'
		WHEN 'fairshare.quota_shares'::regclass THEN 'quota share'
		ELSE TG_TABLE_NAME::text END, NEW.tags);
	RETURN NEW;
END
$$;

CREATE TRIGGER validate_tags BEFORE INSERT OR UPDATE OF tags ON fairshare.service_environments
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_resource_tags();
CREATE TRIGGER validate_tags BEFORE INSERT OR UPDATE OF tags ON fairshare.scheduling_policies
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_resource_tags();
CREATE TRIGGER validate_tags BEFORE INSERT OR UPDATE OF tags ON fairshare.job_queues
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_resource_tags();
CREATE TRIGGER validate_tags BEFORE INSERT OR UPDATE OF tags ON fairshare.quota_shares
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_resource_tags();

-- The reasons a RUNNABLE job may be terminated for, as AWS names them for
-- SageMaker queues, and what each means in fairshare's status_reason.
CREATE FUNCTION fairshare.time_limit_reason_matches(reason text, status_reason text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT CASE reason
		WHEN 'MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE'
			THEN starts_with(status_reason, 'MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE')
		WHEN 'MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED'
			THEN starts_with(status_reason, 'MISCONFIGURATION:QUOTA_SHARE_MAX_RESOURCE')
				 OR starts_with(status_reason, 'MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED')
		-- (a retried failure's reason quotes SageMaker's FailureReason after
		-- its prefix: an AlgorithmError naming a capacity error is not one)
		WHEN 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY'
			THEN starts_with(status_reason, 'CAPACITY:')
				 OR (fairshare.is_capacity_failure(status_reason)
					 AND NOT starts_with(status_reason, 'Received status from SageMaker:'))
		ELSE false END
$$;
COMMENT ON FUNCTION fairshare.time_limit_reason_matches(text, text) IS
	'Whether a RUNNABLE job''s status_reason is the blocked reason a job_state_time_limit_actions row names.';

CREATE TABLE fairshare.job_state_time_limit_actions (
	job_queue			text NOT NULL REFERENCES fairshare.job_queues (name) ON DELETE CASCADE,
	reason				text NOT NULL CHECK (reason IN ('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
														'MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE',
														'MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED')),
	state				text NOT NULL DEFAULT 'RUNNABLE' CHECK (state = 'RUNNABLE'),
	max_time_seconds	integer NOT NULL CHECK (max_time_seconds BETWEEN 600 AND 86400),
	action				text NOT NULL DEFAULT 'TERMINATE' CHECK (action = 'TERMINATE'),
	PRIMARY KEY (job_queue, state, reason)
);
COMMENT ON TABLE fairshare.job_state_time_limit_actions IS
	'jobStateTimeLimitActions: a job at the head of its queue (of its share), RUNNABLE for longer than '
	'max_time_seconds with this blocked reason, is terminated with it by the next scheduling pass.';

CREATE FUNCTION fairshare._validate_time_limit_action()
RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.job_queues WHERE name = NEW.job_queue) THEN
		PERFORM fairshare._reject('23503', format('job queue "%s" does not exist', NEW.job_queue));
	END IF;
	IF NEW.state IS DISTINCT FROM 'RUNNABLE' THEN
		PERFORM fairshare._reject('22023', format('invalid state "%s" of a job state time limit action', coalesce(NEW.state, 'NULL')),
			'The only state is RUNNABLE.');
	END IF;
	IF NEW.reason IS NULL OR NEW.reason NOT IN ('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
			'MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE', 'MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED') THEN
		PERFORM fairshare._reject('22023', format('invalid reason "%s" of a job state time limit action', coalesce(NEW.reason, 'NULL')),
			'The reason is CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY, MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE '
			'or MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED, as for AWS Batch''s SageMaker queues.');
	END IF;
	IF NEW.max_time_seconds IS NULL OR NEW.max_time_seconds NOT BETWEEN 600 AND 86400 THEN
		PERFORM fairshare._reject('22023', format('maxTimeSeconds %s is out of range', coalesce(NEW.max_time_seconds::text, 'NULL')),
			'maxTimeSeconds is from 600 (10 minutes) to 86400 (24 hours).');
	END IF;
	IF NEW.action IS DISTINCT FROM 'TERMINATE' THEN
		PERFORM fairshare._reject('22023', format('invalid action "%s" of a job state time limit action', coalesce(NEW.action, 'NULL')),
			'Queues of SageMaker training jobs support only TERMINATE.');
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER validate BEFORE INSERT OR UPDATE ON fairshare.job_state_time_limit_actions
	FOR EACH ROW EXECUTE FUNCTION fairshare._validate_time_limit_action();

GRANT SELECT, INSERT, UPDATE, DELETE ON fairshare.job_state_time_limit_actions TO fairshare_admin;
GRANT SELECT ON fairshare.job_state_time_limit_actions TO fairshare_submitter;
SELECT pg_catalog.pg_extension_config_dump('fairshare.job_state_time_limit_actions'::regclass, '');

-- When the job last became RUNNABLE, which a time limit counts from (AWS
-- counts the time in the state): runnable_at is the first time, kept for
-- the job's place in line, so a job requeued after an attempt (a capacity
-- failure, a preemption, a retry) or whose queue was enabled again became
-- RUNNABLE later -- when the attempt ended, or by its latest transition.
-- A job that waited its turn for an hour and then met a capacity error
-- must try its other placements, not be terminated at the next pass.
CREATE FUNCTION fairshare._runnable_since(j fairshare.jobs)
RETURNS timestamptz LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT greatest(j.runnable_at,
					(SELECT max(coalesce(a.stopped_at, a.created_at)) FROM fairshare.job_attempts a
					  WHERE a.job_id = j.job_id),
					(SELECT max(e.at) FROM fairshare.job_events e
					  WHERE e.job_id = j.job_id AND e.new_status = 'RUNNABLE'))
$$;
REVOKE ALL ON FUNCTION fairshare._runnable_since(fairshare.jobs) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._runnable_since(fairshare.jobs) TO fairshare_admin;

-- Enforce the time limits: called at the start of every scheduling pass
-- (fairshare._prepare_pass).  Driven by the small table of actions: with
-- none it is one probe of an empty table; otherwise, per queue that has
-- actions, it reads only the head job of each share (of the queue, for a
-- FIFO queue) through the scheduler's partial indexes of RUNNABLE jobs, so
-- its cost does not grow with the number of waiting jobs.  Rows another
-- transaction holds locked are skipped, never waited for.  Returns how
-- many jobs it terminated.
CREATE FUNCTION fairshare._apply_time_limit_actions()
RETURNS integer LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	q record;
	heads bigint[];
	done integer := 0;
	n integer;
BEGIN
	FOR q IN SELECT a.job_queue, p.kind, min(a.max_time_seconds) AS shortest
			   FROM fairshare.job_state_time_limit_actions a
			   JOIN fairshare.job_queues jq ON jq.name = a.job_queue
			   LEFT JOIN fairshare.scheduling_policies p ON p.name = jq.scheduling_policy
			  WHERE jq.state = 'ENABLED'
			  GROUP BY a.job_queue, p.kind
	LOOP
		IF q.kind IS NULL THEN
			SELECT array_agg(h.job_id) INTO heads
			  FROM (SELECT j.job_id, j.runnable_at FROM fairshare.jobs j
					 WHERE j.job_queue = q.job_queue AND j.status = 'RUNNABLE'
					   AND j.share_identifier IS NULL AND j.quota_share IS NULL
					 ORDER BY j.runnable_at, j.job_id LIMIT 1) h
			 WHERE h.runnable_at <= now() - make_interval(secs => q.shortest);
		ELSIF q.kind = 'QUOTA_SHARE' THEN
			SELECT array_agg(h.job_id) INTO heads
			  FROM fairshare.quota_shares s
			 CROSS JOIN LATERAL (
					SELECT j.job_id, j.runnable_at FROM fairshare.jobs j
					 WHERE j.job_queue = q.job_queue AND j.quota_share = s.name AND j.status = 'RUNNABLE'
					   AND j.quota_share IS NOT NULL
					 ORDER BY j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1) h
			 WHERE s.job_queue = q.job_queue AND h.runnable_at <= now() - make_interval(secs => q.shortest);
		ELSE
			-- The head of each share, by a skip scan of the index: the first
			-- row of a share in the index's order is its head, and the next
			-- share's head is the first row after it.
			WITH RECURSIVE h(share, job_id, runnable_at) AS (
				(SELECT j.share_identifier, j.job_id, j.runnable_at FROM fairshare.jobs j
				  WHERE j.job_queue = q.job_queue AND j.status = 'RUNNABLE' AND j.share_identifier IS NOT NULL
				  ORDER BY j.share_identifier, j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1)
				UNION ALL
				SELECT n.share_identifier, n.job_id, n.runnable_at
				  FROM h CROSS JOIN LATERAL (
						SELECT j.share_identifier, j.job_id, j.runnable_at FROM fairshare.jobs j
						 WHERE j.job_queue = q.job_queue AND j.status = 'RUNNABLE' AND j.share_identifier IS NOT NULL
						   AND j.share_identifier > h.share
						 ORDER BY j.share_identifier, j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1) n)
			SELECT array_agg(h.job_id) INTO heads
			  FROM h WHERE h.runnable_at <= now() - make_interval(secs => q.shortest);
		END IF;
		-- (runnable_at is never later than _runnable_since(): a first cut)
		CONTINUE WHEN heads IS NULL;

		WITH w AS MATERIALIZED (
			SELECT j.job_id, a.reason
			  FROM fairshare.jobs j
			 CROSS JOIN LATERAL (
					SELECT a.reason FROM fairshare.job_state_time_limit_actions a
					 WHERE a.job_queue = j.job_queue AND a.state = 'RUNNABLE'
					   AND fairshare._runnable_since(j) <= now() - make_interval(secs => a.max_time_seconds)
					   AND fairshare.time_limit_reason_matches(a.reason, j.status_reason)
					 ORDER BY a.max_time_seconds, a.reason LIMIT 1) a
			 WHERE j.job_id = ANY (heads) AND j.status = 'RUNNABLE'
			   FOR NO KEY UPDATE OF j SKIP LOCKED)
		UPDATE fairshare.jobs j
		   SET status = 'FAILED',
			   status_reason = 'Terminated by JobStateTimeLimit action due to reason: ' || w.reason
		  FROM w
		 WHERE j.job_id = w.job_id AND j.status = 'RUNNABLE';
		GET DIAGNOSTICS n = ROW_COUNT;
		done := done + n;
	END LOOP;
	RETURN done;
END
$$;
REVOKE ALL ON FUNCTION fairshare._apply_time_limit_actions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._apply_time_limit_actions() TO fairshare_admin;

-- Finish the deletions DeleteJobQueue and DeleteQuotaShare began: a queue
-- or share whose jobs have all stopped goes (a queue with its finished
-- jobs, which refer to it).  Called by every scheduling pass while one is
-- pending, and by the Delete operations themselves.  Skips what another
-- transaction holds locked.
CREATE FUNCTION fairshare._finish_deletions()
RETURNS integer LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r record;
	done integer := 0;
	left_over bigint;
BEGIN
	FOR r IN SELECT s.job_queue, s.name FROM fairshare.quota_shares s
			  WHERE s.deleting_since IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM fairshare.jobs j
								 WHERE j.job_queue = s.job_queue AND j.quota_share = s.name
								   AND j.status NOT IN ('SUCCEEDED', 'FAILED'))
			  FOR UPDATE OF s SKIP LOCKED
	LOOP
		BEGIN
			DELETE FROM fairshare.quota_shares WHERE job_queue = r.job_queue AND name = r.name;
			done := done + 1;
		EXCEPTION WHEN dependent_objects_still_exist THEN
			-- A job submitted to it committed since the check above (its
			-- delete guard saw it): the share stays until that job has
			-- finished, and the pass goes on.
			NULL;
		END;
	END LOOP;
	FOR r IN SELECT q.name FROM fairshare.job_queues q
			  WHERE q.deleting_since IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM fairshare.jobs j
								 WHERE j.job_queue = q.name AND j.status NOT IN ('SUCCEEDED', 'FAILED'))
			  FOR UPDATE OF q SKIP LOCKED
	LOOP
		-- finished jobs only: one submitted since the check above (by a
		-- backend whose cached queue configuration did not yet say the queue
		-- was going) stays, and so does the queue, until the next pass
		WITH w AS MATERIALIZED (
			SELECT job_id FROM fairshare.jobs WHERE job_queue = r.name AND status IN ('SUCCEEDED', 'FAILED')
			   FOR UPDATE SKIP LOCKED)
		DELETE FROM fairshare.jobs j USING w WHERE j.job_id = w.job_id;
		SELECT count(*) INTO left_over FROM fairshare.jobs WHERE job_queue = r.name;
		CONTINUE WHEN left_over > 0;
		DELETE FROM fairshare.job_queues WHERE name = r.name;
		done := done + 1;
	END LOOP;
	RETURN done;
END
$$;
REVOKE ALL ON FUNCTION fairshare._finish_deletions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._finish_deletions() TO fairshare_admin;

-- What DeleteJobQueue and DeleteQuotaShare do once they have marked the
-- queue or share: terminate its unfinished jobs (share NULL: every job of
-- the queue), then finish the deletions that can be finished.
CREATE FUNCTION fairshare._api_terminate_for_deletion(queue text, share text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	reason text := CASE WHEN share IS NULL THEN format('job queue %s is being deleted', queue)
						ELSE format('quota share %s is being deleted', share) END;
	j bigint;
BEGIN
	FOR j IN SELECT job_id FROM fairshare.jobs
			  WHERE job_queue = queue AND (share IS NULL OR quota_share = share) AND status NOT IN ('SUCCEEDED', 'FAILED')
			  ORDER BY job_id LOOP
		PERFORM fairshare.terminate_job(j, reason);
	END LOOP;
	PERFORM fairshare._finish_deletions();
END
$$;

------------------------------------------------------------------------------
-- Reading requests
------------------------------------------------------------------------------

-- The request itself must be an object.
CREATE FUNCTION fairshare._api_request(request jsonb)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF request IS NULL OR jsonb_typeof(request) <> 'object' THEN
		PERFORM fairshare._reject('22023', 'the request body must be a JSON object');
	END IF;
	RETURN request;
END
$$;

-- maxResults (1 to 100, default 100) and nextToken of a paginated request;
-- the token is the opaque form of the last key of the previous page.
CREATE FUNCTION fairshare._api_page(request jsonb, OUT max_results integer, OUT after_key text)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	token text := fairshare._api_string(request, 'nextToken');
BEGIN
	max_results := coalesce(fairshare._api_integer(request, 'maxResults'), 100);
	IF max_results NOT BETWEEN 1 AND 100 THEN
		PERFORM fairshare._reject('22023', format('maxResults %s is out of range', max_results),
			'maxResults is from 1 to 100.');
	END IF;
	IF token IS NOT NULL THEN
		BEGIN
			after_key := convert_from(decode(token, 'base64'), 'UTF8');
		EXCEPTION WHEN OTHERS THEN
			after_key := NULL;
		END;
		IF after_key IS NULL OR NOT starts_with(after_key, 'fs1:') THEN
			PERFORM fairshare._reject('22023', 'invalid nextToken',
				'Pass back the nextToken of the previous answer unchanged.');
		END IF;
		after_key := substr(after_key, 5);
	END IF;
END
$$;

CREATE FUNCTION fairshare._api_next_token(last_key text)
RETURNS text LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT translate(encode(convert_to('fs1:' || last_key, 'UTF8'), 'base64'), E'\n', '')
$$;

-- One page of a paginated answer, from the keys and items of the rows
-- after the previous page's last key, in key order, read up to
-- max_results + 1 (the extra row only says there is more): the first
-- max_results items as member and, when there is more, the nextToken of
-- the last key shown.
CREATE FUNCTION fairshare._api_page_answer(member text, max_results integer, keys text[], items jsonb[])
RETURNS jsonb LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT jsonb_build_object(member, coalesce(to_jsonb(items[1:max_results]), '[]'))
		   || CASE WHEN cardinality(keys) > max_results
				   THEN jsonb_build_object('nextToken', fairshare._api_next_token(keys[max_results]))
				   ELSE '{}' END
$$;

-- The names a Describe operation asks for: wanted, its member (of names or
-- ARNs of resources of kind, noun saying which), at most 100 of them; NULL
-- when the request names none.
CREATE FUNCTION fairshare._api_wanted_names(wanted jsonb, kind text, member text, noun text)
RETURNS text[] LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF jsonb_array_length(wanted) > 100 THEN
		PERFORM fairshare._reject('22023', format('%s lists at most 100 %s', member, noun));
	END IF;
	RETURN (SELECT array_agg(fairshare._api_resource_name(kind, x, member)) FROM jsonb_array_elements_text(wanted) x);
END
$$;

-- A resource's ARN split into its kind and name ('<queue>/<share>' for a
-- quota share, the decimal job id for a service job).
CREATE FUNCTION fairshare._api_parse_arn(arn text, parameter text, OUT kind text, OUT name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	prefix text := 'arn:aws:batch:' || fairshare._api_region() || ':' || fairshare._api_account_id() || ':';
	rest text;
	parts text[];
BEGIN
	IF arn IS NULL OR arn = '' THEN
		PERFORM fairshare._reject('22023', format('%s is required', parameter));
	END IF;
	IF NOT starts_with(arn, prefix) THEN
		PERFORM fairshare._reject('22023', format('%s "%s" is not an ARN of this fairshare installation', parameter, arn),
			format('ARNs here begin with %s', prefix));
	END IF;
	rest := substr(arn, length(prefix) + 1);
	parts := regexp_match(rest, '^job-queue/([^/]+)/quota-share/([^/]+)$');
	IF parts IS NOT NULL THEN
		kind := 'quota-share';
		name := parts[1] || '/' || parts[2];
		RETURN;
	END IF;
	parts := regexp_match(rest, '^(service-environment|job-queue|scheduling-policy|service-job)/([^/]+)$');
	IF parts IS NULL THEN
		PERFORM fairshare._reject('22023', format('%s "%s" names no resource that has tags', parameter, arn),
			'Service environments, job queues, scheduling policies, quota shares and service jobs have tags.');
	END IF;
	kind := parts[1];
	name := parts[2];
END
$$;

-- A quota share parameter: its ARN, or '<queue>/<share>'.
CREATE FUNCTION fairshare._api_quota_share_key(id_or_arn text, parameter text, OUT job_queue text, OUT name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	key text := fairshare._api_resource_name('quota-share', id_or_arn, parameter);
BEGIN
	IF key !~ '^[^/]+/[^/]+$' THEN
		PERFORM fairshare._reject('22023', format('%s "%s" is not a quota share ARN', parameter, id_or_arn),
			'A quota share ARN ends in job-queue/<queue>/quota-share/<share>; <queue>/<share> is accepted too.');
	END IF;
	job_queue := split_part(key, '/', 1);
	name := split_part(key, '/', 2);
END
$$;

CREATE FUNCTION fairshare._api_not_found(kind text, name text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	PERFORM fairshare._reject('P0002', format('%s "%s" does not exist', kind, name));
END
$$;

-- capacityLimits as (capacity_unit, max_capacity) rows, checked.
CREATE FUNCTION fairshare._api_capacity_limits(limits jsonb, member text, unit_required boolean)
RETURNS TABLE (capacity_unit text, max_capacity integer)
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	l jsonb;
BEGIN
	FOR l IN SELECT * FROM jsonb_array_elements(limits) LOOP
		IF jsonb_typeof(l) <> 'object' THEN
			PERFORM fairshare._reject('22023', format('each of %s must be an object {"maxCapacity": n, "capacityUnit": "..."}', member));
		END IF;
		capacity_unit := fairshare._api_string(l, 'capacityUnit', unit_required);
		IF capacity_unit IS NULL THEN
			capacity_unit := 'NUM_INSTANCES';
		END IF;
		max_capacity := fairshare._api_integer(l, 'maxCapacity', true);
		RETURN NEXT;
	END LOOP;
	IF (SELECT count(*) - count(DISTINCT u) FROM (SELECT x ->> 'capacityUnit' AS u FROM jsonb_array_elements(limits) x) d) > 0 THEN
		PERFORM fairshare._reject('22023', format('%s names a capacityUnit twice', member));
	END IF;
END
$$;

------------------------------------------------------------------------------
-- Answers (what Describe and List return), read with the owner's rights
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._api_service_environment_detail(e fairshare.service_environments)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'serviceEnvironmentName', e.name,
		'serviceEnvironmentArn', fairshare._api_arn('service-environment', e.name),
		'serviceEnvironmentType', 'SAGEMAKER_TRAINING',
		'state', e.state,
		'status', 'VALID',
		'tags', e.tags))
	   || jsonb_build_object('capacityLimits', coalesce(
			(SELECT jsonb_agg(jsonb_build_object('maxCapacity', l.max_capacity::bigint, 'capacityUnit', l.capacity_unit)
							  ORDER BY l.capacity_unit)
			   FROM fairshare.capacity_limits l WHERE l.service_environment = e.name), '[]'))
$$;

CREATE FUNCTION fairshare._api_job_queue_detail(q fairshare.job_queues)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'jobQueueName', q.name,
		'jobQueueArn', fairshare._api_arn('job-queue', q.name),
		'state', CASE WHEN q.accepts_jobs AND q.state = 'ENABLED' THEN 'ENABLED' ELSE 'DISABLED' END,
		'schedulingPolicyArn', fairshare._api_arn('scheduling-policy', q.scheduling_policy),
		'status', CASE WHEN q.deleting_since IS NOT NULL THEN 'DELETING' ELSE 'VALID' END,
		'statusReason', CASE
			WHEN q.deleting_since IS NOT NULL THEN 'Deleting: its jobs were terminated; it goes once they have stopped'
			WHEN q.state <> 'ENABLED' THEN 'Scheduling is paused (state DISABLED in SQL): its jobs wait as PENDING'
			WHEN NOT q.accepts_jobs THEN 'DISABLED: new jobs are refused; the jobs in the queue still run'
			ELSE 'JobQueue Healthy' END,
		'priority', q.priority,
		'jobQueueType', 'SAGEMAKER_TRAINING',
		'tags', q.tags))
	   || jsonb_build_object(
		'computeEnvironmentOrder', '[]'::jsonb,
		'serviceEnvironmentOrder', coalesce(
			(SELECT jsonb_agg(jsonb_build_object('order', qe."order", 'serviceEnvironment',
												 fairshare._api_arn('service-environment', qe.service_environment))
							  ORDER BY qe."order")
			   FROM fairshare.queue_environments qe WHERE qe.job_queue = q.name), '[]'),
		'jobStateTimeLimitActions', coalesce(
			(SELECT jsonb_agg(jsonb_build_object('reason', a.reason, 'state', a.state,
												 'maxTimeSeconds', a.max_time_seconds, 'action', a.action)
							  ORDER BY a.reason)
			   FROM fairshare.job_state_time_limit_actions a WHERE a.job_queue = q.name), '[]'))
$$;

CREATE FUNCTION fairshare._api_scheduling_policy_detail(p fairshare.scheduling_policies)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT jsonb_strip_nulls(jsonb_build_object(
		'name', p.name,
		'arn', fairshare._api_arn('scheduling-policy', p.name),
		'tags', p.tags))
	   || CASE WHEN p.kind = 'QUOTA_SHARE'
			   THEN jsonb_build_object('quotaSharePolicy', jsonb_build_object('idleResourceAssignmentStrategy', p.idle_assignment))
			   ELSE jsonb_build_object('fairsharePolicy', jsonb_build_object(
						'shareDecaySeconds', p.share_decay_seconds,
						'computeReservation', p.compute_reservation,
						'shareDistribution', coalesce(
							(SELECT jsonb_agg(jsonb_build_object('shareIdentifier', d.share_identifier,
																 'weightFactor', d.weight_factor::double precision)
											  ORDER BY d.share_identifier)
							   FROM fairshare.share_distribution d WHERE d.scheduling_policy = p.name), '[]')))
		  END
$$;

CREATE FUNCTION fairshare._api_quota_share_detail(s fairshare.quota_shares)
RETURNS jsonb LANGUAGE sql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
	SELECT jsonb_build_object(
		'quotaShareName', s.name,
		'quotaShareArn', fairshare._api_arn('quota-share', s.job_queue || '/' || s.name),
		'jobQueueArn', fairshare._api_arn('job-queue', s.job_queue),
		'capacityLimits', coalesce(
			(SELECT jsonb_agg(jsonb_build_object('maxCapacity', l.max_capacity::bigint, 'capacityUnit', l.capacity_unit)
							  ORDER BY l.capacity_unit)
			   FROM fairshare.quota_share_limits l WHERE l.job_queue = s.job_queue AND l.quota_share = s.name), '[]'),
		'resourceSharingConfiguration', jsonb_strip_nulls(jsonb_build_object('strategy', s.strategy, 'borrowLimit', s.borrow_limit)),
		'preemptionConfiguration', jsonb_build_object('inSharePreemption',
			CASE WHEN s.in_share_preemption THEN 'ENABLED' ELSE 'DISABLED' END),
		'state', CASE WHEN s.accepts_jobs AND s.state = 'ENABLED' THEN 'ENABLED' ELSE 'DISABLED' END,
		'status', CASE WHEN s.deleting_since IS NOT NULL THEN 'DELETING' ELSE 'VALID' END)
	   || jsonb_strip_nulls(jsonb_build_object('tags', s.tags))
$$;

REVOKE ALL ON FUNCTION fairshare._api_service_environment_detail(fairshare.service_environments),
	fairshare._api_job_queue_detail(fairshare.job_queues),
	fairshare._api_scheduling_policy_detail(fairshare.scheduling_policies),
	fairshare._api_quota_share_detail(fairshare.quota_shares) FROM PUBLIC;

------------------------------------------------------------------------------
-- Service environments
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._api_set_capacity_limits(environment text, limits jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF jsonb_array_length(limits) = 0 THEN
		PERFORM fairshare._reject('22023', 'capacityLimits must name at least one limit');
	END IF;
	DELETE FROM fairshare.capacity_limits cl WHERE cl.service_environment = environment
	   AND cl.capacity_unit NOT IN (SELECT l.capacity_unit FROM fairshare._api_capacity_limits(limits, 'capacityLimits', false) l);
	INSERT INTO fairshare.capacity_limits AS cl (service_environment, capacity_unit, max_capacity)
	SELECT environment, l.capacity_unit, l.max_capacity
	  FROM fairshare._api_capacity_limits(limits, 'capacityLimits', false) l
	ON CONFLICT (service_environment, capacity_unit) DO UPDATE SET max_capacity = excluded.max_capacity
	 WHERE cl.max_capacity IS DISTINCT FROM excluded.max_capacity;
END
$$;

CREATE FUNCTION fairshare._api_create_service_environment(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	env text := fairshare._api_string(r, 'serviceEnvironmentName', true);
	env_type text := fairshare._api_string(r, 'serviceEnvironmentType', true);
	env_state text := coalesce(fairshare._api_string(r, 'state'), 'ENABLED');
	limits jsonb := fairshare._api_json(r, 'capacityLimits', 'array', true);
	tags jsonb := fairshare._api_json(r, 'tags', 'object');
BEGIN
	IF env_type <> 'SAGEMAKER_TRAINING' THEN
		PERFORM fairshare._reject('22023', format('serviceEnvironmentType "%s" is not supported', env_type),
			'fairshare runs SageMaker training jobs: the type is SAGEMAKER_TRAINING.');
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.service_environments WHERE name = env) THEN
		-- AWS Batch's own words, which SDK code compares (as here) to reuse what exists.
		PERFORM fairshare._reject('23505', 'Object already exists');
	END IF;
	INSERT INTO fairshare.service_environments (name, state, tags) VALUES (env, env_state, tags);
	PERFORM fairshare._api_set_capacity_limits(env, limits);
	RETURN jsonb_build_object('serviceEnvironmentName', env,
							  'serviceEnvironmentArn', fairshare._api_arn('service-environment', env));
END
$$;

CREATE FUNCTION fairshare._api_update_service_environment(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	env text := fairshare._api_resource_name('service-environment', fairshare._api_string(r, 'serviceEnvironment', true), 'serviceEnvironment');
	env_state text := fairshare._api_string(r, 'state');
	limits jsonb := fairshare._api_json(r, 'capacityLimits', 'array');
BEGIN
	PERFORM 1 FROM fairshare.service_environments WHERE name = env FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('service environment', env);
	END IF;
	IF env_state IS NOT NULL THEN
		UPDATE fairshare.service_environments SET state = env_state WHERE name = env AND state IS DISTINCT FROM env_state;
	END IF;
	IF limits IS NOT NULL THEN
		PERFORM fairshare._api_set_capacity_limits(env, limits);
	END IF;
	RETURN jsonb_build_object('serviceEnvironmentName', env,
							  'serviceEnvironmentArn', fairshare._api_arn('service-environment', env));
END
$$;

CREATE FUNCTION fairshare._api_delete_service_environment(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	env text := fairshare._api_resource_name('service-environment', fairshare._api_string(r, 'serviceEnvironment', true), 'serviceEnvironment');
	env_state text;
BEGIN
	SELECT state INTO env_state FROM fairshare.service_environments WHERE name = env FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('service environment', env);
	END IF;
	IF env_state <> 'DISABLED' THEN
		PERFORM fairshare._reject('55000', format('service environment "%s" is ENABLED', env),
			'Disable it first (UpdateServiceEnvironment with state DISABLED), and remove it from its job queues.');
	END IF;
	DELETE FROM fairshare.service_environments WHERE name = env;
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_describe_service_environments(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	wanted jsonb := fairshare._api_json(r, 'serviceEnvironments', 'array');
	names text[];
	page record;
BEGIN
	SELECT * INTO page FROM fairshare._api_page(r);
	names := fairshare._api_wanted_names(wanted, 'service-environment', 'serviceEnvironments', 'names');
	RETURN (SELECT fairshare._api_page_answer('serviceEnvironments', page.max_results, array_agg((p.e).name ORDER BY (p.e).name),
											  array_agg(fairshare._api_service_environment_detail(p.e) ORDER BY (p.e).name))
			  FROM (SELECT e FROM fairshare.service_environments e
					 WHERE (names IS NULL OR e.name = ANY (names))
					   AND (page.after_key IS NULL OR e.name > page.after_key)
					 ORDER BY e.name LIMIT page.max_results + 1) p);
END
$$;

------------------------------------------------------------------------------
-- Job queues
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._api_set_queue_environments(queue text, envs jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	e jsonb;
	names text[] := '{}';
	orders integer[] := '{}';
BEGIN
	IF jsonb_array_length(envs) = 0 THEN
		PERFORM fairshare._reject('22023', 'serviceEnvironmentOrder must name at least one service environment');
	END IF;
	FOR e IN SELECT * FROM jsonb_array_elements(envs) LOOP
		IF jsonb_typeof(e) <> 'object' THEN
			PERFORM fairshare._reject('22023', 'each of serviceEnvironmentOrder must be an object {"order": n, "serviceEnvironment": "..."}');
		END IF;
		names := names || fairshare._api_resource_name('service-environment',
			fairshare._api_string(e, 'serviceEnvironment', true), 'serviceEnvironment');
		orders := orders || fairshare._api_integer(e, 'order', true);
		IF NOT EXISTS (SELECT 1 FROM fairshare.service_environments WHERE name = names[cardinality(names)]) THEN
			PERFORM fairshare._api_not_found('service environment', names[cardinality(names)]);
		END IF;
	END LOOP;
	IF (SELECT count(DISTINCT n) FROM unnest(names) n) < cardinality(names)
	   OR (SELECT count(DISTINCT o) FROM unnest(orders) o) < cardinality(orders) THEN
		PERFORM fairshare._reject('22023', 'serviceEnvironmentOrder names a service environment or an order twice');
	END IF;
	-- Replace the list: drop what is no longer in it first, so that orders can move.
	DELETE FROM fairshare.queue_environments qe WHERE qe.job_queue = queue
	   AND (qe.service_environment, qe."order") NOT IN (SELECT t.n, t.o FROM unnest(names, orders) t(n, o));
	INSERT INTO fairshare.queue_environments (job_queue, service_environment, "order")
	SELECT queue, t.n, t.o FROM unnest(names, orders) t(n, o)
	 WHERE NOT EXISTS (SELECT 1 FROM fairshare.queue_environments qe
						WHERE qe.job_queue = queue AND qe.service_environment = t.n);
END
$$;

CREATE FUNCTION fairshare._api_set_time_limit_actions(queue text, actions jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	a jsonb;
BEGIN
	DELETE FROM fairshare.job_state_time_limit_actions WHERE job_queue = queue;
	FOR a IN SELECT * FROM jsonb_array_elements(actions) LOOP
		IF jsonb_typeof(a) <> 'object' THEN
			PERFORM fairshare._reject('22023', 'each of jobStateTimeLimitActions must be an object {"reason", "state", "maxTimeSeconds", "action"}');
		END IF;
		IF EXISTS (SELECT 1 FROM fairshare.job_state_time_limit_actions
					WHERE job_queue = queue AND state = fairshare._api_string(a, 'state', true)
					  AND reason = fairshare._api_string(a, 'reason', true)) THEN
			PERFORM fairshare._reject('22023', format('jobStateTimeLimitActions names reason %s twice', a -> 'reason'));
		END IF;
		INSERT INTO fairshare.job_state_time_limit_actions (job_queue, reason, state, max_time_seconds, action)
		VALUES (queue, fairshare._api_string(a, 'reason', true), fairshare._api_string(a, 'state', true),
				fairshare._api_integer(a, 'maxTimeSeconds', true), fairshare._api_string(a, 'action', true));
	END LOOP;
END
$$;

-- The state a job queue or quota share is given: ENABLED or DISABLED
-- (NULL: left as it is).
CREATE FUNCTION fairshare._api_check_state(state text)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF state NOT IN ('ENABLED', 'DISABLED') THEN
		PERFORM fairshare._reject('22023', format('invalid state "%s"', state), 'The state is ENABLED or DISABLED.');
	END IF;
END
$$;

-- A queue's request may name no compute environments: fairshare's queues
-- have service environments only.
CREATE FUNCTION fairshare._api_no_compute_environments(r jsonb)
RETURNS void LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	IF coalesce(jsonb_array_length(fairshare._api_json(r, 'computeEnvironmentOrder', 'array')), 0) > 0 THEN
		PERFORM fairshare._reject('22023', 'computeEnvironmentOrder is not supported',
			'fairshare queues place SageMaker training jobs on service environments: use serviceEnvironmentOrder.');
	END IF;
END
$$;

-- The scheduling policy a queue's schedulingPolicyArn names, which must exist.
CREATE FUNCTION fairshare._api_existing_policy(policy_arn text)
RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	policy text := fairshare._api_resource_name('scheduling-policy', policy_arn, 'schedulingPolicyArn');
BEGIN
	IF NOT EXISTS (SELECT 1 FROM fairshare.scheduling_policies WHERE name = policy) THEN
		PERFORM fairshare._api_not_found('scheduling policy', policy);
	END IF;
	RETURN policy;
END
$$;

CREATE FUNCTION fairshare._api_create_job_queue(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	queue text := fairshare._api_string(r, 'jobQueueName', true);
	queue_state text := coalesce(fairshare._api_string(r, 'state'), 'ENABLED');
	policy_param text := fairshare._api_string(r, 'schedulingPolicyArn');
	policy text;
	prio integer := fairshare._api_integer(r, 'priority', true);
	queue_type text := fairshare._api_string(r, 'jobQueueType');
	envs jsonb := fairshare._api_json(r, 'serviceEnvironmentOrder', 'array');
	actions jsonb := fairshare._api_json(r, 'jobStateTimeLimitActions', 'array');
	tags jsonb := fairshare._api_json(r, 'tags', 'object');
BEGIN
	IF queue_type IS NOT NULL AND queue_type <> 'SAGEMAKER_TRAINING' THEN
		PERFORM fairshare._reject('22023', format('jobQueueType "%s" is not supported', queue_type),
			'fairshare runs SageMaker training jobs: the type is SAGEMAKER_TRAINING.');
	END IF;
	PERFORM fairshare._api_no_compute_environments(r);
	IF envs IS NULL THEN
		PERFORM fairshare._reject('22023', 'serviceEnvironmentOrder is required');
	END IF;
	PERFORM fairshare._api_check_state(queue_state);
	IF policy_param IS NOT NULL THEN
		policy := fairshare._api_existing_policy(policy_param);
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.job_queues WHERE name = queue) THEN
		PERFORM fairshare._reject('23505', 'Object already exists');
	END IF;
	INSERT INTO fairshare.job_queues (name, priority, scheduling_policy, accepts_jobs, tags)
	VALUES (queue, prio, policy, queue_state = 'ENABLED', tags);
	PERFORM fairshare._api_set_queue_environments(queue, envs);
	IF actions IS NOT NULL THEN
		PERFORM fairshare._api_set_time_limit_actions(queue, actions);
	END IF;
	RETURN jsonb_build_object('jobQueueName', queue, 'jobQueueArn', fairshare._api_arn('job-queue', queue));
END
$$;

CREATE FUNCTION fairshare._api_update_job_queue(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	queue text := fairshare._api_resource_name('job-queue', fairshare._api_string(r, 'jobQueue', true), 'jobQueue');
	queue_state text := fairshare._api_string(r, 'state');
	policy_param text := fairshare._api_string(r, 'schedulingPolicyArn');
	policy text;
	prio integer := fairshare._api_integer(r, 'priority');
	envs jsonb := fairshare._api_json(r, 'serviceEnvironmentOrder', 'array');
	actions jsonb := fairshare._api_json(r, 'jobStateTimeLimitActions', 'array');
	q fairshare.job_queues;
BEGIN
	SELECT * INTO q FROM fairshare.job_queues WHERE name = queue FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('job queue', queue);
	END IF;
	IF q.deleting_since IS NOT NULL THEN
		PERFORM fairshare._reject('55000', format('job queue "%s" is being deleted', queue));
	END IF;
	PERFORM fairshare._api_no_compute_environments(r);
	PERFORM fairshare._api_check_state(queue_state);
	IF policy_param IS NOT NULL THEN
		policy := fairshare._api_existing_policy(policy_param);
		IF q.scheduling_policy IS NULL THEN
			PERFORM fairshare._reject('22023', format('job queue "%s" is FIFO: a scheduling policy cannot be added to it', queue),
				'As in AWS Batch, a queue created without a scheduling policy stays FIFO; create a new queue with one.');
		END IF;
		IF policy <> q.scheduling_policy THEN
			UPDATE fairshare.job_queues SET scheduling_policy = policy WHERE name = queue;
		END IF;
	END IF;
	IF prio IS NOT NULL THEN
		UPDATE fairshare.job_queues SET priority = prio WHERE name = queue AND priority <> prio;
	END IF;
	IF queue_state = 'ENABLED' THEN
		UPDATE fairshare.job_queues SET accepts_jobs = true, state = 'ENABLED'
		 WHERE name = queue AND NOT (accepts_jobs AND state = 'ENABLED');
	ELSIF queue_state = 'DISABLED' THEN
		UPDATE fairshare.job_queues SET accepts_jobs = false WHERE name = queue AND accepts_jobs;
	END IF;
	IF envs IS NOT NULL THEN
		PERFORM fairshare._api_set_queue_environments(queue, envs);
	END IF;
	IF actions IS NOT NULL THEN
		PERFORM fairshare._api_set_time_limit_actions(queue, actions);
	END IF;
	RETURN jsonb_build_object('jobQueueName', queue, 'jobQueueArn', fairshare._api_arn('job-queue', queue));
END
$$;

CREATE FUNCTION fairshare._api_delete_job_queue(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	queue text := fairshare._api_resource_name('job-queue', fairshare._api_string(r, 'jobQueue', true), 'jobQueue');
	q fairshare.job_queues;
BEGIN
	SELECT * INTO q FROM fairshare.job_queues WHERE name = queue FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('job queue', queue);
	END IF;
	IF q.accepts_jobs AND q.state = 'ENABLED' THEN
		PERFORM fairshare._reject('55000', format('job queue "%s" is ENABLED', queue),
			'Disable it first (UpdateJobQueue with state DISABLED).');
	END IF;
	IF q.deleting_since IS NULL THEN
		UPDATE fairshare.job_queues SET accepts_jobs = false, deleting_since = now() WHERE name = queue;
	END IF;
	PERFORM fairshare._api_terminate_for_deletion(queue, NULL);
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_describe_job_queues(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	wanted jsonb := fairshare._api_json(r, 'jobQueues', 'array');
	names text[];
	page record;
BEGIN
	SELECT * INTO page FROM fairshare._api_page(r);
	names := fairshare._api_wanted_names(wanted, 'job-queue', 'jobQueues', 'names');
	RETURN (SELECT fairshare._api_page_answer('jobQueues', page.max_results, array_agg((p.q).name ORDER BY (p.q).name),
											  array_agg(fairshare._api_job_queue_detail(p.q) ORDER BY (p.q).name))
			  FROM (SELECT q FROM fairshare.job_queues q
					 WHERE (names IS NULL OR q.name = ANY (names))
					   AND (page.after_key IS NULL OR q.name > page.after_key)
					 ORDER BY q.name LIMIT page.max_results + 1) p);
END
$$;

------------------------------------------------------------------------------
-- Scheduling policies
------------------------------------------------------------------------------

-- Apply a fairsharePolicy or quotaSharePolicy to policy `name` (created
-- with the right kind before).
CREATE FUNCTION fairshare._api_set_policy(name text, fair jsonb, quota jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	decay integer;
	reservation integer;
	dist jsonb;
	d jsonb;
	idle text;
	weight double precision;
BEGIN
	IF fair IS NOT NULL THEN
		-- AWS: 0 (the default) is the minimum window of 600 seconds.
		decay := coalesce(fairshare._api_integer(fair, 'shareDecaySeconds'), 0);
		IF decay NOT BETWEEN 0 AND 604800 THEN
			PERFORM fairshare._reject('22023', format('shareDecaySeconds %s is out of range', decay),
				'shareDecaySeconds is from 0 (the default window, 600 seconds) to 604800 (one week).');
		END IF;
		decay := greatest(decay, 600);
		reservation := coalesce(fairshare._api_integer(fair, 'computeReservation'), 0);
		dist := fairshare._api_json(fair, 'shareDistribution', 'array');
		UPDATE fairshare.scheduling_policies p SET share_decay_seconds = decay, compute_reservation = reservation
		 WHERE p.name = _api_set_policy.name
		   AND (p.share_decay_seconds, p.compute_reservation) IS DISTINCT FROM (decay, reservation);
		DELETE FROM fairshare.share_distribution sd WHERE sd.scheduling_policy = _api_set_policy.name;
		FOR d IN SELECT * FROM jsonb_array_elements(coalesce(dist, '[]')) LOOP
			IF jsonb_typeof(d) <> 'object' THEN
				PERFORM fairshare._reject('22023', 'each of shareDistribution must be an object {"shareIdentifier": "...", "weightFactor": n}');
			END IF;
			IF jsonb_typeof(d -> 'weightFactor') NOT IN ('number', 'null') THEN
				PERFORM fairshare._reject('22023', format('weightFactor must be a number, not %s', jsonb_typeof(d -> 'weightFactor')));
			END IF;
			weight := coalesce((d ->> 'weightFactor')::double precision, 1.0);
			IF weight NOT BETWEEN 0.0001 AND 999.9999 THEN
				PERFORM fairshare._reject('22023', format('weightFactor %s is out of range', weight),
					'weightFactor is from 0.0001 to 999.9999; lower gets more.');
			END IF;
			IF EXISTS (SELECT 1 FROM fairshare.share_distribution sd WHERE sd.scheduling_policy = _api_set_policy.name
						AND sd.share_identifier = fairshare._api_string(d, 'shareIdentifier', true)) THEN
				PERFORM fairshare._reject('22023', format('shareDistribution names %s twice', d -> 'shareIdentifier'));
			END IF;
			INSERT INTO fairshare.share_distribution (scheduling_policy, share_identifier, weight_factor)
			VALUES (_api_set_policy.name, fairshare._api_string(d, 'shareIdentifier', true), weight::numeric(8, 4));
		END LOOP;
	ELSIF quota IS NOT NULL THEN
		idle := fairshare._api_string(quota, 'idleResourceAssignmentStrategy', true);
		IF idle <> 'FIFO' THEN
			PERFORM fairshare._reject('22023', format('idleResourceAssignmentStrategy "%s" is not supported', idle),
				'The API knows FIFO, as AWS Batch does; FAIR is set in SQL (scheduling_policies.idle_assignment).');
		END IF;
		UPDATE fairshare.scheduling_policies p SET idle_assignment = idle
		 WHERE p.name = _api_set_policy.name AND p.idle_assignment <> idle;
	END IF;
END
$$;

CREATE FUNCTION fairshare._api_create_scheduling_policy(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	policy text := fairshare._api_string(r, 'name', true);
	fair jsonb := fairshare._api_json(r, 'fairsharePolicy', 'object');
	quota jsonb := fairshare._api_json(r, 'quotaSharePolicy', 'object');
	tags jsonb := fairshare._api_json(r, 'tags', 'object');
BEGIN
	IF fair IS NOT NULL AND quota IS NOT NULL THEN
		PERFORM fairshare._reject('22023', 'only one of fairsharePolicy and quotaSharePolicy may be set');
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.scheduling_policies WHERE name = policy) THEN
		PERFORM fairshare._reject('23505', 'Object already exists');
	END IF;
	INSERT INTO fairshare.scheduling_policies (name, kind, tags)
	VALUES (policy, CASE WHEN quota IS NOT NULL THEN 'QUOTA_SHARE' ELSE 'FAIR_SHARE' END, tags);
	PERFORM fairshare._api_set_policy(policy, CASE WHEN quota IS NULL THEN coalesce(fair, '{}') END, quota);
	RETURN jsonb_build_object('name', policy, 'arn', fairshare._api_arn('scheduling-policy', policy));
END
$$;

CREATE FUNCTION fairshare._api_update_scheduling_policy(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	policy text := fairshare._api_resource_name('scheduling-policy', fairshare._api_string(r, 'arn', true), 'arn');
	fair jsonb := fairshare._api_json(r, 'fairsharePolicy', 'object');
	quota jsonb := fairshare._api_json(r, 'quotaSharePolicy', 'object');
	policy_kind text;
BEGIN
	SELECT kind INTO policy_kind FROM fairshare.scheduling_policies WHERE name = policy FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('scheduling policy', policy);
	END IF;
	IF fair IS NOT NULL AND quota IS NOT NULL THEN
		PERFORM fairshare._reject('22023', 'only one of fairsharePolicy and quotaSharePolicy may be set');
	END IF;
	IF (fair IS NOT NULL AND policy_kind <> 'FAIR_SHARE') OR (quota IS NOT NULL AND policy_kind <> 'QUOTA_SHARE') THEN
		PERFORM fairshare._reject('22023', format('scheduling policy "%s" is %s: its kind cannot change', policy, policy_kind),
			'Create a new policy of the other kind.');
	END IF;
	PERFORM fairshare._api_set_policy(policy, fair, quota);
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_delete_scheduling_policy(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	policy text := fairshare._api_resource_name('scheduling-policy', fairshare._api_string(r, 'arn', true), 'arn');
	queue text;
BEGIN
	PERFORM 1 FROM fairshare.scheduling_policies WHERE name = policy FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('scheduling policy', policy);
	END IF;
	SELECT name INTO queue FROM fairshare.job_queues WHERE scheduling_policy = policy ORDER BY name LIMIT 1;
	IF FOUND THEN
		PERFORM fairshare._reject('2BP01', format('scheduling policy "%s" is used by job queue "%s"', policy, queue),
			'Delete the queues that use it first.');
	END IF;
	DELETE FROM fairshare.scheduling_policies WHERE name = policy;
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_describe_scheduling_policies(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	wanted jsonb := fairshare._api_json(r, 'arns', 'array', true);
	names text[];
BEGIN
	names := fairshare._api_wanted_names(wanted, 'scheduling-policy', 'arns', 'ARNs');
	RETURN jsonb_build_object('schedulingPolicies', coalesce(
		(SELECT jsonb_agg(fairshare._api_scheduling_policy_detail(p) ORDER BY p.name)
		   FROM fairshare.scheduling_policies p WHERE p.name = ANY (names)), '[]'));
END
$$;

CREATE FUNCTION fairshare._api_list_scheduling_policies(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	page record;
BEGIN
	SELECT * INTO page FROM fairshare._api_page(r);
	RETURN (SELECT fairshare._api_page_answer('schedulingPolicies', page.max_results, array_agg(p.name ORDER BY p.name),
											  array_agg(jsonb_build_object('arn', fairshare._api_arn('scheduling-policy', p.name))
														ORDER BY p.name))
			  FROM (SELECT p.name FROM fairshare.scheduling_policies p
					 WHERE page.after_key IS NULL OR p.name > page.after_key
					 ORDER BY p.name LIMIT page.max_results + 1) p);
END
$$;

------------------------------------------------------------------------------
-- Quota shares
------------------------------------------------------------------------------

CREATE FUNCTION fairshare._api_set_quota_share(queue text, share text, r jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	limits jsonb := fairshare._api_json(r, 'capacityLimits', 'array');
	sharing jsonb := fairshare._api_json(r, 'resourceSharingConfiguration', 'object');
	preemption jsonb := fairshare._api_json(r, 'preemptionConfiguration', 'object');
	share_state text := fairshare._api_string(r, 'state');
	new_strategy text;
	in_share text;
BEGIN
	IF sharing IS NOT NULL THEN
		new_strategy := fairshare._api_string(sharing, 'strategy', true);
		UPDATE fairshare.quota_shares s
		   SET strategy = new_strategy,
			   borrow_limit = CASE WHEN new_strategy = 'LEND_AND_BORROW'
								   THEN coalesce(fairshare._api_integer(sharing, 'borrowLimit'), -1)
								   ELSE fairshare._api_integer(sharing, 'borrowLimit') END
		 WHERE s.job_queue = queue AND s.name = share;
	END IF;
	IF preemption IS NOT NULL THEN
		in_share := fairshare._api_string(preemption, 'inSharePreemption', true);
		IF in_share NOT IN ('ENABLED', 'DISABLED') THEN
			PERFORM fairshare._reject('22023', format('invalid inSharePreemption "%s"', in_share), 'It is ENABLED or DISABLED.');
		END IF;
		UPDATE fairshare.quota_shares s SET in_share_preemption = (in_share = 'ENABLED')
		 WHERE s.job_queue = queue AND s.name = share AND s.in_share_preemption <> (in_share = 'ENABLED');
	END IF;
	PERFORM fairshare._api_check_state(share_state);
	IF share_state = 'ENABLED' THEN
		UPDATE fairshare.quota_shares s SET accepts_jobs = true, state = 'ENABLED'
		 WHERE s.job_queue = queue AND s.name = share AND NOT (s.accepts_jobs AND s.state = 'ENABLED');
	ELSIF share_state = 'DISABLED' THEN
		UPDATE fairshare.quota_shares s SET accepts_jobs = false
		 WHERE s.job_queue = queue AND s.name = share AND s.accepts_jobs;
	END IF;
	IF limits IS NOT NULL THEN
		IF jsonb_array_length(limits) = 0 THEN
			PERFORM fairshare._reject('22023', 'capacityLimits must name at least one limit');
		END IF;
		DELETE FROM fairshare.quota_share_limits l WHERE l.job_queue = queue AND l.quota_share = share
		   AND l.capacity_unit NOT IN (SELECT c.capacity_unit FROM fairshare._api_capacity_limits(limits, 'capacityLimits', true) c);
		INSERT INTO fairshare.quota_share_limits AS l (job_queue, quota_share, capacity_unit, max_capacity)
		SELECT queue, share, c.capacity_unit, c.max_capacity
		  FROM fairshare._api_capacity_limits(limits, 'capacityLimits', true) c
		ON CONFLICT (job_queue, quota_share, capacity_unit) DO UPDATE SET max_capacity = excluded.max_capacity
		 WHERE l.max_capacity IS DISTINCT FROM excluded.max_capacity;
	END IF;
END
$$;

CREATE FUNCTION fairshare._api_create_quota_share(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	share text := fairshare._api_string(r, 'quotaShareName', true);
	queue text := fairshare._api_resource_name('job-queue', fairshare._api_string(r, 'jobQueue', true), 'jobQueue');
	tags jsonb := fairshare._api_json(r, 'tags', 'object');
	q fairshare.job_queues;
BEGIN
	PERFORM fairshare._api_json(r, 'capacityLimits', 'array', true);
	PERFORM fairshare._api_json(r, 'resourceSharingConfiguration', 'object', true);
	PERFORM fairshare._api_json(r, 'preemptionConfiguration', 'object', true);
	SELECT * INTO q FROM fairshare.job_queues WHERE name = queue FOR SHARE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('job queue', queue);
	END IF;
	IF q.deleting_since IS NOT NULL THEN
		PERFORM fairshare._reject('55000', format('job queue "%s" is being deleted', queue));
	END IF;
	IF EXISTS (SELECT 1 FROM fairshare.quota_shares WHERE job_queue = queue AND name = share) THEN
		PERFORM fairshare._reject('23505', format('quota share "%s" of job queue "%s" already exists', share, queue));
	END IF;
	INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit, tags)
	VALUES (queue, share, 'RESERVE', NULL, tags);
	PERFORM fairshare._api_set_quota_share(queue, share, r);
	RETURN jsonb_build_object('quotaShareName', share, 'quotaShareArn', fairshare._api_arn('quota-share', queue || '/' || share));
END
$$;

CREATE FUNCTION fairshare._api_update_quota_share(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	k record;
	s fairshare.quota_shares;
BEGIN
	SELECT * INTO k FROM fairshare._api_quota_share_key(fairshare._api_string(r, 'quotaShareArn', true), 'quotaShareArn');
	SELECT * INTO s FROM fairshare.quota_shares WHERE job_queue = k.job_queue AND name = k.name FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('quota share', k.job_queue || '/' || k.name);
	END IF;
	IF s.deleting_since IS NOT NULL THEN
		PERFORM fairshare._reject('55000', format('quota share "%s" of job queue "%s" is being deleted', k.name, k.job_queue));
	END IF;
	PERFORM fairshare._api_set_quota_share(k.job_queue, k.name, r);
	RETURN jsonb_build_object('quotaShareName', k.name,
							  'quotaShareArn', fairshare._api_arn('quota-share', k.job_queue || '/' || k.name));
END
$$;

CREATE FUNCTION fairshare._api_delete_quota_share(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	k record;
	s fairshare.quota_shares;
BEGIN
	SELECT * INTO k FROM fairshare._api_quota_share_key(fairshare._api_string(r, 'quotaShareArn', true), 'quotaShareArn');
	SELECT * INTO s FROM fairshare.quota_shares WHERE job_queue = k.job_queue AND name = k.name FOR UPDATE;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('quota share', k.job_queue || '/' || k.name);
	END IF;
	IF s.accepts_jobs AND s.state = 'ENABLED' THEN
		PERFORM fairshare._reject('55000', format('quota share "%s" of job queue "%s" is ENABLED', k.name, k.job_queue),
			'Disable it first (UpdateQuotaShare with state DISABLED).');
	END IF;
	IF s.deleting_since IS NULL THEN
		UPDATE fairshare.quota_shares SET accepts_jobs = false, deleting_since = now()
		 WHERE job_queue = k.job_queue AND name = k.name;
	END IF;
	PERFORM fairshare._api_terminate_for_deletion(k.job_queue, k.name);
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_describe_quota_share(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	k record;
	s fairshare.quota_shares;
BEGIN
	SELECT * INTO k FROM fairshare._api_quota_share_key(fairshare._api_string(r, 'quotaShareArn', true), 'quotaShareArn');
	SELECT * INTO s FROM fairshare.quota_shares WHERE job_queue = k.job_queue AND name = k.name;
	IF NOT FOUND THEN
		PERFORM fairshare._api_not_found('quota share', k.job_queue || '/' || k.name);
	END IF;
	RETURN fairshare._api_quota_share_detail(s);
END
$$;

CREATE FUNCTION fairshare._api_list_quota_shares(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	queue text := fairshare._api_resource_name('job-queue', fairshare._api_string(r, 'jobQueue', true), 'jobQueue');
	page record;
BEGIN
	SELECT * INTO page FROM fairshare._api_page(r);
	IF NOT EXISTS (SELECT 1 FROM fairshare.job_queues WHERE name = queue) THEN
		PERFORM fairshare._api_not_found('job queue', queue);
	END IF;
	RETURN (SELECT fairshare._api_page_answer('quotaShares', page.max_results, array_agg((p.s).name ORDER BY (p.s).name),
											  array_agg(fairshare._api_quota_share_detail(p.s) - 'tags' ORDER BY (p.s).name))
			  FROM (SELECT s FROM fairshare.quota_shares s
					 WHERE s.job_queue = queue AND (page.after_key IS NULL OR s.name > page.after_key)
					 ORDER BY s.name LIMIT page.max_results + 1) p);
END
$$;

------------------------------------------------------------------------------
-- Tags
------------------------------------------------------------------------------

-- The tags of an admin resource (NULL: no such resource).
CREATE FUNCTION fairshare._api_resource_tags(kind text, name text)
RETURNS jsonb LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	t jsonb;
BEGIN
	CASE kind
		WHEN 'service-environment' THEN SELECT coalesce(e.tags, '{}') INTO t FROM fairshare.service_environments e WHERE e.name = _api_resource_tags.name;
		WHEN 'job-queue' THEN SELECT coalesce(q.tags, '{}') INTO t FROM fairshare.job_queues q WHERE q.name = _api_resource_tags.name;
		WHEN 'scheduling-policy' THEN SELECT coalesce(p.tags, '{}') INTO t FROM fairshare.scheduling_policies p WHERE p.name = _api_resource_tags.name;
		WHEN 'quota-share' THEN SELECT coalesce(s.tags, '{}') INTO t FROM fairshare.quota_shares s
								 WHERE s.job_queue = split_part(_api_resource_tags.name, '/', 1) AND s.name = split_part(_api_resource_tags.name, '/', 2);
		ELSE t := NULL;
	END CASE;
	RETURN t;
END
$$;

CREATE FUNCTION fairshare._api_list_tags_for_resource(request jsonb)
RETURNS jsonb LANGUAGE plpgsql STABLE SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	res record;
	t jsonb;
BEGIN
	SELECT * INTO res FROM fairshare._api_parse_arn(fairshare._api_string(r, 'resourceArn', true), 'resourceArn');
	IF res.kind = 'service-job' THEN
		-- As the caller: row-level security decides which jobs it sees.
		SELECT coalesce(j.tags, '{}') INTO t FROM fairshare.jobs j
		 WHERE j.job_id = CASE WHEN res.name ~ '^[0-9]{1,19}$' AND res.name::numeric <= 9223372036854775807
							   THEN res.name::bigint END;
	ELSE
		t := fairshare._api_resource_tags(res.kind, res.name);
	END IF;
	IF t IS NULL THEN
		PERFORM fairshare._api_not_found(replace(res.kind, '-', ' '), res.name);
	END IF;
	RETURN jsonb_build_object('tags', t);
END
$$;

-- Lock an admin resource for a change of its tags, and return them.
CREATE FUNCTION fairshare._api_lock_tags(kind text, name text)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	t jsonb;
BEGIN
	CASE kind
		WHEN 'service-environment' THEN SELECT coalesce(e.tags, '{}') INTO t FROM fairshare.service_environments e WHERE e.name = _api_lock_tags.name FOR UPDATE;
		WHEN 'job-queue' THEN SELECT coalesce(q.tags, '{}') INTO t FROM fairshare.job_queues q WHERE q.name = _api_lock_tags.name FOR UPDATE;
		WHEN 'scheduling-policy' THEN SELECT coalesce(p.tags, '{}') INTO t FROM fairshare.scheduling_policies p WHERE p.name = _api_lock_tags.name FOR UPDATE;
		WHEN 'quota-share' THEN SELECT coalesce(s.tags, '{}') INTO t FROM fairshare.quota_shares s
								 WHERE s.job_queue = split_part(_api_lock_tags.name, '/', 1) AND s.name = split_part(_api_lock_tags.name, '/', 2) FOR UPDATE;
		ELSE
			PERFORM fairshare._reject('0A000', 'the tags of a service job are set when it is submitted',
				'Submit it with tags; they cannot change afterwards.');
	END CASE;
	IF t IS NULL THEN
		PERFORM fairshare._api_not_found(replace(kind, '-', ' '), name);
	END IF;
	RETURN t;
END
$$;

CREATE FUNCTION fairshare._api_store_tags(kind text, name text, tags jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	t jsonb := nullif(tags, '{}');
BEGIN
	CASE kind
		WHEN 'service-environment' THEN UPDATE fairshare.service_environments e SET tags = t WHERE e.name = _api_store_tags.name;
		WHEN 'job-queue' THEN UPDATE fairshare.job_queues q SET tags = t WHERE q.name = _api_store_tags.name;
		WHEN 'scheduling-policy' THEN UPDATE fairshare.scheduling_policies p SET tags = t WHERE p.name = _api_store_tags.name;
		WHEN 'quota-share' THEN UPDATE fairshare.quota_shares s SET tags = t
								 WHERE s.job_queue = split_part(_api_store_tags.name, '/', 1) AND s.name = split_part(_api_store_tags.name, '/', 2);
	END CASE;
END
$$;

CREATE FUNCTION fairshare._api_tag_resource(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	res record;
	tags jsonb;
BEGIN
	SELECT * INTO res FROM fairshare._api_parse_arn(fairshare._api_string(r, 'resourceArn', true), 'resourceArn');
	tags := fairshare._api_json(r, 'tags', 'object', true);
	-- As botocore's model says (TagrisTagsMap: 1 to 50 tags).
	IF tags = '{}' THEN
		PERFORM fairshare._reject('22023', 'tags must hold at least one tag',
			'TagResource adds or replaces 1 to 50 tags; UntagResource removes them.');
	END IF;
	PERFORM fairshare._check_tags(replace(res.kind, '-', ' '), tags);
	PERFORM fairshare._api_store_tags(res.kind, res.name, fairshare._api_lock_tags(res.kind, res.name) || tags);
	RETURN '{}'::jsonb;
END
$$;

CREATE FUNCTION fairshare._api_untag_resource(request jsonb)
RETURNS jsonb LANGUAGE plpgsql SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	r jsonb := fairshare._api_request(request);
	res record;
	keys jsonb;
	k jsonb;
BEGIN
	SELECT * INTO res FROM fairshare._api_parse_arn(fairshare._api_string(r, 'resourceArn', true), 'resourceArn');
	-- tagKeys comes from the query string: one key is a string, several an array.
	keys := r -> 'tagKeys';
	IF keys IS NULL OR jsonb_typeof(keys) = 'null' THEN
		PERFORM fairshare._reject('22023', 'tagKeys is required');
	ELSIF jsonb_typeof(keys) = 'string' THEN
		keys := jsonb_build_array(keys);
	ELSIF jsonb_typeof(keys) <> 'array' THEN
		PERFORM fairshare._reject('22023', format('tagKeys must be a list of strings, not %s', jsonb_typeof(keys)));
	END IF;
	FOR k IN SELECT * FROM jsonb_array_elements(keys) LOOP
		IF jsonb_typeof(k) <> 'string' THEN
			PERFORM fairshare._reject('22023', 'tagKeys must be a list of strings');
		END IF;
	END LOOP;
	-- As botocore's model says (TagKeysList: 1 to 50).
	IF jsonb_array_length(keys) > 50 THEN
		PERFORM fairshare._reject('22023', format('tagKeys lists at most 50 tag keys, not %s', jsonb_array_length(keys)));
	END IF;
	PERFORM fairshare._api_store_tags(res.kind, res.name,
		fairshare._api_lock_tags(res.kind, res.name) - ARRAY(SELECT jsonb_array_elements_text(keys)));
	RETURN '{}'::jsonb;
END
$$;

------------------------------------------------------------------------------
-- Who may call what: by grants.
------------------------------------------------------------------------------

-- Nothing of this file is for PUBLIC.
REVOKE ALL ON FUNCTION fairshare._check_tags(text, jsonb), fairshare._validate_resource_tags(),
	fairshare._validate_time_limit_action(),
	fairshare._api_string(jsonb, text, boolean), fairshare._api_integer(jsonb, text, boolean),
	fairshare._api_json(jsonb, text, text, boolean), fairshare._api_request(jsonb), fairshare._api_page(jsonb),
	fairshare._api_next_token(text), fairshare._api_page_answer(text, integer, text[], jsonb[]),
	fairshare._api_wanted_names(jsonb, text, text, text),
	fairshare._api_parse_arn(text, text), fairshare._api_quota_share_key(text, text),
	fairshare._api_not_found(text, text), fairshare._api_capacity_limits(jsonb, text, boolean),
	fairshare._api_no_compute_environments(jsonb), fairshare._api_existing_policy(text),
	fairshare._api_check_state(text), fairshare._api_terminate_for_deletion(text, text),
	fairshare._api_set_capacity_limits(text, jsonb), fairshare._api_set_queue_environments(text, jsonb),
	fairshare._api_set_time_limit_actions(text, jsonb), fairshare._api_set_policy(text, jsonb, jsonb),
	fairshare._api_set_quota_share(text, text, jsonb), fairshare._api_lock_tags(text, text),
	fairshare._api_store_tags(text, text, jsonb), fairshare._api_resource_tags(text, text),
	fairshare._api_create_service_environment(jsonb), fairshare._api_update_service_environment(jsonb),
	fairshare._api_delete_service_environment(jsonb), fairshare._api_describe_service_environments(jsonb),
	fairshare._api_create_job_queue(jsonb), fairshare._api_update_job_queue(jsonb), fairshare._api_delete_job_queue(jsonb),
	fairshare._api_describe_job_queues(jsonb),
	fairshare._api_create_scheduling_policy(jsonb), fairshare._api_update_scheduling_policy(jsonb),
	fairshare._api_delete_scheduling_policy(jsonb), fairshare._api_describe_scheduling_policies(jsonb),
	fairshare._api_list_scheduling_policies(jsonb),
	fairshare._api_create_quota_share(jsonb), fairshare._api_update_quota_share(jsonb), fairshare._api_delete_quota_share(jsonb),
	fairshare._api_describe_quota_share(jsonb), fairshare._api_list_quota_shares(jsonb),
	fairshare._api_tag_resource(jsonb), fairshare._api_untag_resource(jsonb), fairshare._api_list_tags_for_resource(jsonb)
	FROM PUBLIC;

-- The helpers every operation calls, for every role that may call one.
GRANT EXECUTE ON FUNCTION fairshare._api_string(jsonb, text, boolean), fairshare._api_integer(jsonb, text, boolean),
	fairshare._api_json(jsonb, text, text, boolean), fairshare._api_request(jsonb), fairshare._api_page(jsonb),
	fairshare._api_next_token(text), fairshare._api_page_answer(text, integer, text[], jsonb[]),
	fairshare._api_wanted_names(jsonb, text, text, text),
	fairshare._api_parse_arn(text, text), fairshare._api_quota_share_key(text, text),
	fairshare._api_not_found(text, text), fairshare._check_tags(text, jsonb)
	TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- Reading the configuration: every role (as in the views).
GRANT EXECUTE ON FUNCTION fairshare._api_describe_service_environments(jsonb), fairshare._api_describe_job_queues(jsonb),
	fairshare._api_describe_scheduling_policies(jsonb), fairshare._api_list_scheduling_policies(jsonb),
	fairshare._api_describe_quota_share(jsonb), fairshare._api_list_quota_shares(jsonb),
	fairshare._api_list_tags_for_resource(jsonb), fairshare._api_resource_tags(text, text)
	TO fairshare_admin, fairshare_submitter, fairshare_viewer;

-- Changing it: admins only.
GRANT EXECUTE ON FUNCTION fairshare._api_capacity_limits(jsonb, text, boolean),
	fairshare._api_no_compute_environments(jsonb), fairshare._api_existing_policy(text),
	fairshare._api_check_state(text), fairshare._api_terminate_for_deletion(text, text),
	fairshare._api_set_capacity_limits(text, jsonb), fairshare._api_set_queue_environments(text, jsonb),
	fairshare._api_set_time_limit_actions(text, jsonb), fairshare._api_set_policy(text, jsonb, jsonb),
	fairshare._api_set_quota_share(text, text, jsonb), fairshare._api_lock_tags(text, text),
	fairshare._api_store_tags(text, text, jsonb),
	fairshare._api_create_service_environment(jsonb), fairshare._api_update_service_environment(jsonb),
	fairshare._api_delete_service_environment(jsonb),
	fairshare._api_create_job_queue(jsonb), fairshare._api_update_job_queue(jsonb), fairshare._api_delete_job_queue(jsonb),
	fairshare._api_create_scheduling_policy(jsonb), fairshare._api_update_scheduling_policy(jsonb),
	fairshare._api_delete_scheduling_policy(jsonb),
	fairshare._api_create_quota_share(jsonb), fairshare._api_update_quota_share(jsonb), fairshare._api_delete_quota_share(jsonb),
	fairshare._api_tag_resource(jsonb), fairshare._api_untag_resource(jsonb)
	TO fairshare_admin;
