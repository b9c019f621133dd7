-- Security and integrity: what no role below superuser may do, and the
-- settings that refuse what would hurt the dispatcher.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_sec_admin, regress_sec_carol, regress_sec_carol_old, regress_sec_carol_gone,
	regress_sec_reader;
RESET client_min_messages;
\set SHOW_CONTEXT never
CREATE ROLE regress_sec_admin LOGIN IN ROLE fairshare_admin;
CREATE ROLE regress_sec_carol LOGIN IN ROLE fairshare_submitter;

INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 10);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
CREATE TABLE public.sec_req AS SELECT
	'{"RoleArn": "arn:aws:iam::1:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
	  "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2}}'::jsonb AS request;
GRANT SELECT ON public.sec_req TO PUBLIC;

-- Carol submits two jobs; one runs, one finishes.
SET ROLE regress_sec_carol;
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'c-' || i, 'q', request
  FROM public.sec_req, generate_series(1, 2) i;
RESET ROLE;
SELECT count(*) AS placed FROM fairshare.schedule();
SELECT fairshare.apply_status(job_id, jsonb_build_object('TrainingJobName', training_job_name,
	'TrainingJobArn', 'arn:aws:sagemaker:us-east-1:1:training-job/' || training_job_name,
	'TrainingJobStatus', CASE job_name WHEN 'c-1' THEN 'InProgress' ELSE 'Completed' END,
	'SecondaryStatus', CASE job_name WHEN 'c-1' THEN 'Training' ELSE 'Completed' END))
  FROM fairshare.jobs ORDER BY job_id;

-- A job belongs to the role, not to its name: Carol renamed, and a new
-- role given her old name, neither sees nor acts on her jobs.
ALTER ROLE regress_sec_carol RENAME TO regress_sec_carol_old;
CREATE ROLE regress_sec_carol LOGIN IN ROLE fairshare_submitter;
SET ROLE regress_sec_carol;
SELECT count(*) AS jobs_the_new_role_sees FROM fairshare.jobs;
SELECT count(*) AS attempts_the_new_role_sees FROM fairshare.job_attempts;
SELECT public.regress_try('SELECT fairshare.terminate_job(1, ''not mine'')');
SELECT public.regress_try('SELECT fairshare.explain(1)');
SELECT job_id, job_name IS NOT NULL AS named FROM fairshare.queue_snapshot('q');
RESET ROLE;
SET ROLE regress_sec_carol_old;
SELECT count(*) AS jobs_the_renamed_role_sees FROM fairshare.jobs;
RESET ROLE;
-- Both the name and the role must match, and only the submission sets them.
SELECT job_name, submitted_by, submitter_oid = 'regress_sec_carol_old'::regrole AS by_the_first_carol
  FROM fairshare.jobs ORDER BY job_id;
SET ROLE regress_sec_carol;
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request, submitter_oid)
	SELECT 'forged', 'q', request, 'regress_sec_carol_old'::regrole FROM public.sec_req$$);
RESET ROLE;
-- After a restore into another cluster the jobs' OIDs are stale (simulated:
-- the first Carol is gone and another role has her submitting name); a
-- superuser hands the jobs to the roles that now have those names.
INSERT INTO fairshare.api_submissions (job_id, submitter_oid, request_hash)
	SELECT job_id, submitter_oid, 'h' FROM fairshare.jobs WHERE submitter_oid = 'regress_sec_carol_old'::regrole LIMIT 1;
-- A role with the jobs' OID but not their submitter's name (as a role
-- restored with a stale OID may be) sees neither the jobs nor their API
-- records (client tokens, payload names).
SET ROLE regress_sec_carol_old;
SELECT count(*) AS api_records_the_renamed_role_sees FROM fairshare.api_submissions;
RESET ROLE;
ALTER ROLE regress_sec_carol_old RENAME TO regress_sec_carol_gone;
SELECT fairshare.rebind_submitters() AS rebound;
SELECT s.submitter_oid = 'regress_sec_carol'::regrole AS api_record_rebound FROM fairshare.api_submissions s;
DELETE FROM fairshare.api_submissions;
SET ROLE regress_sec_carol;
SELECT count(*) AS jobs_after_rebind FROM fairshare.jobs;
RESET ROLE;
SET ROLE regress_sec_admin;
SELECT public.regress_try('SELECT fairshare.rebind_submitters()');
RESET ROLE;

-- History is kept as it happened: an admin cannot rewrite a finished job
-- or an ended attempt; the superuser can.
SET ROLE regress_sec_admin;
SELECT public.regress_try($$UPDATE fairshare.jobs SET training_job_arn = 'arn:aws:sagemaker:us-east-1:1:training-job/other' WHERE job_name = 'c-2'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET stopped_at = now() - interval '1 year' WHERE job_name = 'c-2'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET status_reason = 'never happened' WHERE job_name = 'c-2'$$);
SELECT public.regress_try($$UPDATE fairshare.job_attempts SET outcome = 'FAILED' WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'c-2')$$);
-- ... but may still reprioritise the running one, and touch nothing real
UPDATE fairshare.jobs SET scheduling_priority = 5 WHERE job_name = 'c-1';
UPDATE fairshare.jobs SET scheduling_priority = scheduling_priority WHERE job_name = 'c-2';
RESET ROLE;
UPDATE fairshare.jobs SET status_reason = 'corrected by the superuser' WHERE job_name = 'c-2';
SELECT job_name, status, scheduling_priority, status_reason FROM fairshare.jobs ORDER BY job_id;

-- The attempt number is fairshare's: set by hand it would point the
-- history at another attempt (an ended one), so no one may change it.
SET ROLE regress_sec_admin;
SELECT public.regress_try($$UPDATE fairshare.jobs SET attempts = 0 WHERE job_name = 'c-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET attempts = 2, status = 'RUNNABLE' WHERE job_name = 'c-1'$$);
RESET ROLE;
SELECT public.regress_try($$UPDATE fairshare.jobs SET attempts = 5 WHERE job_name = 'c-1'$$);
SELECT j.job_name, j.status, j.attempts, a.attempt, a.outcome
  FROM fairshare.jobs j JOIN fairshare.job_attempts a USING (job_id) ORDER BY j.job_id, a.attempt;

-- Only the owner may attach fairshare's trigger functions to a table: a
-- role attaching one to a temporary table of its own would have the
-- history trigger write that table's rows as the owner, or the C triggers
-- read its columns as the types of fairshare.jobs'.
SELECT count(*) > 0 AS has_trigger_functions,
	   count(*) FILTER (WHERE has_function_privilege('public', p.oid, 'EXECUTE')
						   OR has_function_privilege('fairshare_admin', p.oid, 'EXECUTE')
						   OR has_function_privilege('fairshare_submitter', p.oid, 'EXECUTE')
						   OR has_function_privilege('fairshare_viewer', p.oid, 'EXECUTE')) AS attachable_by_a_role
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = 'fairshare'::regnamespace
   AND p.prorettype IN ('trigger'::regtype, 'event_trigger'::regtype);
SET ROLE regress_sec_carol;
CREATE TEMP TABLE sec_mine (job_id bigint, status fairshare.job_status, status_reason text,
	started_at timestamptz, training_job_arn text, attempts integer);
SELECT public.regress_try($$CREATE TRIGGER t AFTER UPDATE ON sec_mine REFERENCING OLD TABLE AS old_jobs
	NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION fairshare._record_transitions()$$);
SELECT public.regress_try($$CREATE TRIGGER t BEFORE UPDATE ON sec_mine FOR EACH ROW EXECUTE FUNCTION fairshare._job_transition()$$);
SELECT public.regress_try($$CREATE TRIGGER t BEFORE INSERT ON sec_mine FOR EACH ROW EXECUTE FUNCTION fairshare._validate_job_submission()$$);
DROP TABLE sec_mine;
RESET ROLE;
-- Each also refuses any table but its own, even attached by the owner: a
-- copy of the jobs whose job_name is a number is not read as text.
CREATE TEMP TABLE sec_copy AS SELECT * FROM fairshare.jobs;
ALTER TABLE sec_copy ALTER job_name TYPE bigint USING 4096;
CREATE TRIGGER t_transition BEFORE UPDATE ON sec_copy FOR EACH ROW EXECUTE FUNCTION fairshare._job_transition();
CREATE TRIGGER t_submission BEFORE INSERT ON sec_copy FOR EACH ROW EXECUTE FUNCTION fairshare._validate_job_submission();
SELECT public.regress_try($$UPDATE sec_copy SET status = 'FAILED'$$);
SELECT public.regress_try($$INSERT INTO sec_copy SELECT * FROM sec_copy$$);
CREATE TEMP TABLE sec_copy2 AS SELECT * FROM fairshare.jobs;
CREATE TRIGGER t_record AFTER UPDATE ON sec_copy2 REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._record_transitions();
SELECT count(*) AS events_before FROM fairshare.job_events;
SELECT public.regress_try($$UPDATE sec_copy2 SET status = 'FAILED', status_reason = 'forged'$$);
SELECT count(*) AS events_after FROM fairshare.job_events;
CREATE TEMP TABLE sec_attempts AS SELECT * FROM fairshare.job_attempts;
INSERT INTO sec_attempts (job_id, attempt, training_job_name, training_job_arn, service_environment, instance_type, instance_count)
VALUES (1, 1, 'forged-name', 'arn:forged', 'e', 't', 1);
CREATE TRIGGER t_remember AFTER DELETE ON sec_attempts REFERENCING OLD TABLE AS deleted_attempts
	FOR EACH STATEMENT EXECUTE FUNCTION fairshare._remember_deleted_attempts();
SELECT public.regress_try($$DELETE FROM sec_attempts$$);
SELECT count(*) AS forged_remembered FROM fairshare.forgotten_training_jobs WHERE training_job_name = 'forged-name';
DROP TABLE sec_copy, sec_copy2;

-- TRUNCATE is refused while a job is placed (for the superuser too), also
-- through a CASCADE; a superuser may still do it on purpose in replica mode.
SET client_min_messages = warning;
SELECT public.regress_try('TRUNCATE fairshare.jobs CASCADE');
SELECT public.regress_try('TRUNCATE fairshare.job_queues CASCADE');
RESET client_min_messages;
SELECT count(*) AS jobs_left FROM fairshare.jobs;

-- So is dropping fairshare (the extension, or its schema with CASCADE):
-- the placed jobs' training jobs would run on, unwatched.  The test
-- cluster allows it (fairshare.drop_with_placed_jobs); off, it is refused.
SET fairshare.drop_with_placed_jobs = off;
SELECT count(*) > 0 AS some_placed FROM fairshare.jobs WHERE status IN ('SCHEDULED', 'STARTING', 'RUNNING');
SELECT public.regress_try('DROP EXTENSION fairshare CASCADE');
SELECT public.regress_try('DROP SCHEMA fairshare CASCADE');
SELECT count(*) > 0 AS extension_still_there FROM pg_extension WHERE extname = 'fairshare';
RESET fairshare.drop_with_placed_jobs;

-- API keys' secrets: pg_read_all_data, often given to backup and
-- analytics logins, reads every table as if granted SELECT, but row-level
-- security applies to it: it sees no key, and so no secret.  An admin
-- lists the keys, without their secrets.
CREATE ROLE regress_sec_reader LOGIN IN ROLE pg_read_all_data;
SELECT count(*) AS keys_made FROM fairshare.create_api_key('regress_sec_carol');
SET ROLE regress_sec_reader;
SELECT count(*) AS keys_the_reader_sees, count(secret_access_key) AS secrets_it_reads FROM fairshare.api_keys;
-- ... nor the key that signs the fairshare:job-submitted tag, while the
-- installation id stays everyone's.
SELECT count(*) AS installation_rows_the_reader_sees FROM fairshare.installation;
SELECT fairshare.installation_id() IS NOT NULL AS installation_id_readable;
RESET ROLE;
-- ANALYZE keeps no statistics of either secret, which pg_statistic would
-- show it past row-level security.
ANALYZE fairshare.installation, fairshare.api_keys;
SET ROLE regress_sec_reader;
SELECT count(*) AS secret_statistics FROM pg_catalog.pg_statistic s JOIN pg_catalog.pg_attribute a
	ON a.attrelid = s.starelid AND a.attnum = s.staattnum
 WHERE (s.starelid, a.attname) IN (('fairshare.installation'::regclass, 'tag_key'),
								   ('fairshare.api_keys'::regclass, 'secret_access_key'));
RESET ROLE;
SET ROLE regress_sec_admin;
SELECT count(*) AS keys_the_admin_lists FROM (SELECT access_key_id, role, created_at FROM fairshare.api_keys) k;
SELECT public.regress_try('SELECT secret_access_key FROM fairshare.api_keys');
RESET ROLE;

-- fairshare's locks (src/locks.c) are taken by fairshare alone: a
-- submitter may not call what takes them (that no login can take them with
-- pg_advisory_lock() is test/isolation's lock_squat); an admin takes the
-- pass lock (an environment's endpoint change does); only a superuser
-- holds the dispatcher's.
SET ROLE regress_sec_carol;
SELECT public.regress_try('SELECT fairshare._lock(''scheduling pass'')');
SELECT public.regress_try('SELECT fairshare.hold_dispatcher_lock(false)');
RESET ROLE;
SET ROLE regress_sec_admin;
SELECT public.regress_try('SELECT fairshare._lock(''scheduling pass'')');
SELECT public.regress_try('SELECT fairshare._lock(''vacuum'')');
SELECT public.regress_try('SELECT fairshare.hold_dispatcher_lock(false)');
RESET ROLE;
SELECT fairshare.hold_dispatcher_lock(false) AS held;
SELECT fairshare.hold_dispatcher_lock(false) AS held_again;
SELECT classid, objid, objsubid, mode FROM pg_locks
 WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted;
SELECT fairshare.release_dispatcher_lock() AS released;
SELECT count(*) AS locks_left FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();

-- Settings refuse values that would hurt: the check runs at ALTER SYSTEM
-- (which writes nothing when it fails).
\set VERBOSITY terse
ALTER SYSTEM SET fairshare.poll_interval = '10ms';
ALTER SYSTEM SET fairshare.region = 'mars';
ALTER SYSTEM SET fairshare.region = 'us-east-1; rm -rf';
ALTER SYSTEM SET fairshare.database = '';
ALTER SYSTEM SET fairshare.job_name_prefix = 'a-prefix-that-is-longer-than-32-chars';
ALTER SYSTEM SET fairshare.endpoint_url = 'https://user:secret@sagemaker.example.com';
ALTER SYSTEM SET fairshare.endpoint_url = 'https://sagemaker.example.com/#x';
ALTER SYSTEM SET fairshare.create_retry_limit = 0;

SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
DROP TABLE public.sec_req;
DROP ROLE regress_sec_admin, regress_sec_carol, regress_sec_carol_gone, regress_sec_reader;
