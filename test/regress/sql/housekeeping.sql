-- Housekeeping, called by hand as pg_cron would call it: the utilisation
-- snapshot, the alert rules (each kind, raised once per episode, resolved
-- when the condition ends, raised again when it returns), and retention in
-- bounded batches.  The pg_cron registration itself is tested with a real
-- pg_cron in test/housekeeping/cron.test.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_hk_admin, regress_hk_viewer;
RESET client_min_messages;
\set SHOW_CONTEXT never

CREATE FUNCTION pg_temp.submit(queue text, name text, n integer, itype text,
							   quota text DEFAULT NULL, retries integer DEFAULT 1) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	id bigint;
BEGIN
	INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request, retry_attempts)
	VALUES (name, queue, quota,
			jsonb_build_object('RoleArn', 'arn:aws:iam::1:role/r',
							   'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://b/o'),
							   'ResourceConfig', jsonb_build_object('InstanceType', itype, 'InstanceCount', n)),
			retries)
	RETURNING job_id INTO id;
	UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_id = id;
	RETURN id;
END
$$;
CREATE FUNCTION pg_temp.run(id bigint, env text, itype text) RETURNS void LANGUAGE sql AS $$
	UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = env, instance_type = itype WHERE job_id = id;
	UPDATE fairshare.jobs SET status = 'RUNNING' WHERE job_id = id;
$$;

------------------------------------------------------------------------------
-- Alert rules: the defaults, and what a rule may say
------------------------------------------------------------------------------
SELECT name, kind, threshold, min_count, severity, enabled FROM fairshare.alert_rules ORDER BY name;

INSERT INTO fairshare.service_environments (name) VALUES ('p4'), ('small');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100), ('small', 'NUM_INSTANCES', 10);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES ('p4-queue', 10, 'quota'), ('fifo', 1, NULL);
INSERT INTO fairshare.queue_environments VALUES ('p4-queue', 'p4', 1), ('fifo', 'small', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES
	('p4-queue', 'ProdExp1', 'LEND_AND_BORROW', -1), ('p4-queue', 'ProdExp2', 'LEND', NULL);
INSERT INTO fairshare.quota_share_limits VALUES
	('p4-queue', 'ProdExp1', 'ml.p4d.24xlarge', 60), ('p4-queue', 'ProdExp2', 'ml.p4d.24xlarge', 40);

SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('x', 'SOMETHING', '1 hour')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('bad name', 'JOB_WAITING', '1 hour')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('x', 'JOB_WAITING', '-1 hour')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('x', 'FAILURE_BURST', '0')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, min_count) VALUES ('x', 'JOB_WAITING', '1 hour', 3)$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, job_queue) VALUES ('x', 'IDLE_CAPACITY', '1 hour', 'fifo')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, service_environment) VALUES ('x', 'JOB_WAITING', '1 hour', 'p4')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, job_queue) VALUES ('x', 'SHARE_STARVED', '1 hour', 'fifo')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, job_queue) VALUES ('x', 'JOB_WAITING', '1 hour', 'nope')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, service_environment) VALUES ('x', 'IDLE_CAPACITY', '1 hour', 'nope')$$);
-- The shipped rules' names are their kinds' (pg_dump leaves those out):
-- another kind may not take one, even once the shipped rule is deleted.
BEGIN;
DELETE FROM fairshare.alert_rules WHERE name = 'job_waiting';
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('job_waiting', 'FAILURE_BURST', '1 hour')$$);
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold) VALUES ('job_waiting', 'JOB_WAITING', '2 hours')$$) AS same_kind;
ROLLBACK;
SELECT public.regress_try($$UPDATE fairshare.alert_rules SET kind = 'SHARE_STARVED' WHERE name = 'idle_capacity'$$);
SELECT count(*) AS rules FROM fairshare.alert_rules;
-- A FAILURE_BURST without min_count gets 5; a rule may be narrowed to one queue.
INSERT INTO fairshare.alert_rules (name, kind, threshold, job_queue) VALUES
	('p4_burst', 'FAILURE_BURST', '1 hour', 'p4-queue'), ('p4_waiting', 'JOB_WAITING', '30 minutes', 'p4-queue');
SELECT name, min_count, job_queue FROM fairshare.alert_rules WHERE job_queue IS NOT NULL ORDER BY name;

------------------------------------------------------------------------------
-- The world the alerts look at
------------------------------------------------------------------------------
-- Reference scenario 1 after ProdExp2 submitted 15 more: ProdExp1 holds 75
-- (15 borrowed from ProdExp2), ProdExp2 holds 25 of its 40 and waits.
SELECT pg_temp.run(pg_temp.submit('p4-queue', 'e2-a', 25, 'ml.p4d.24xlarge', 'ProdExp2'), 'p4', 'ml.p4d.24xlarge');
SELECT count(*) AS placed
  FROM (SELECT pg_temp.run(pg_temp.submit('p4-queue', 'e1-' || i, 15, 'ml.p4d.24xlarge', 'ProdExp1'), 'p4', 'ml.p4d.24xlarge')
		  FROM generate_series(1, 5) i) s;
SELECT pg_temp.submit('p4-queue', 'e2-b', 15, 'ml.p4d.24xlarge', 'ProdExp2');
-- In the small environment 4 of 10 instances run; a job of 2 has waited
-- two hours; and one job failed five times in a row (it waits for its
-- sixth attempt).
SELECT pg_temp.run(pg_temp.submit('fifo', 'busy', 4, 'ml.g5.xlarge'), 'small', 'ml.g5.xlarge');
SELECT pg_temp.submit('fifo', 'waiting', 2, 'ml.g5.xlarge');
UPDATE fairshare.jobs SET runnable_at = now() - interval '2 hours' WHERE job_name = 'waiting';
DO $$
DECLARE
	id bigint := pg_temp.submit('fifo', 'flaky', 1, 'ml.g5.xlarge', retries => 6);
BEGIN
	FOR i IN 1..5 LOOP
		PERFORM pg_temp.run(id, 'small', 'ml.g5.xlarge');
		PERFORM fairshare.apply_status(id, format('{"TrainingJobStatus": "Failed", "FailureReason": "AlgorithmError: attempt %s"}', i)::jsonb);
	END LOOP;
END
$$;
SELECT job_name, status, attempts FROM fairshare.jobs WHERE job_queue = 'fifo' ORDER BY job_id;

------------------------------------------------------------------------------
-- Utilisation history
------------------------------------------------------------------------------
SELECT fairshare.record_utilization() AS rows_written;
SELECT kind, service_environment, job_queue, share, capacity_unit, capacity, in_use, borrowed,
	   waiting_instances, queue_depth, oldest_wait_seconds / 60 AS oldest_wait_minutes
  FROM fairshare.utilization_history ORDER BY kind, service_environment, job_queue, share, capacity_unit;
SELECT fairshare.record_utilization() AS rows_written;
SELECT count(*) AS rows, count(DISTINCT sampled_at) AS samples FROM fairshare.utilization_history;

------------------------------------------------------------------------------
-- Alerts
------------------------------------------------------------------------------
-- First evaluation: JOB_WAITING and FAILURE_BURST are raised at once (their
-- threshold is part of the condition); IDLE_CAPACITY and SHARE_STARVED must
-- last their threshold first.
SELECT rule_name, kind, severity, subject, job_queue, share, service_environment, capacity_unit, message, details
  FROM fairshare.evaluate_alerts() ORDER BY rule_name;
SELECT rule_name, subject, alert_id IS NOT NULL AS raised FROM fairshare.alert_conditions ORDER BY 1, 2;
-- The same conditions a minute later raise nothing new.
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts();
-- Ten minutes in: idle capacity (5 minutes) is raised, starvation (10) too.
UPDATE fairshare.alert_conditions SET since = since - interval '10 minutes' WHERE alert_id IS NULL;
SELECT rule_name, kind, severity, subject, message, details FROM fairshare.evaluate_alerts() ORDER BY rule_name;
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts();
SELECT rule_name, subject FROM fairshare.active_alerts ORDER BY alert_id;
-- The payload of NOTIFY fairshare_alerts (ids and times left out here).
SELECT fairshare.alert_payload(a) - 'alert_id' - 'raised_at' - 'condition_since' AS payload
  FROM fairshare.alert_events a WHERE rule_name = 'idle_capacity';
SELECT length(fairshare.alert_payload(a)::text) < 8000 AS fits_in_a_notify FROM fairshare.alert_events a;
-- Anyone connected may LISTEN: a failure burst's payload leaves out the
-- reasons users' jobs failed with, which alert_events keeps.
SELECT a.message LIKE '%most common reason: Received status from SageMaker:%' AS event_has_reason,
	   a.details ? 'top_reason' AS event_details_have_it,
	   fairshare.alert_payload(a) ->> 'message' AS payload_message,
	   fairshare.alert_payload(a) -> 'details' ? 'top_reason' AS payload_has_it
  FROM fairshare.alert_events a WHERE a.kind = 'FAILURE_BURST' ORDER BY a.alert_id LIMIT 1;

-- A job backing off the only pair it could use is not idle capacity's demand.
INSERT INTO fairshare.capacity_backoffs
SELECT job_id, 'small', 'ml.g5.xlarge', now() + interval '10 minutes', 'CapacityError: test'
  FROM fairshare.jobs WHERE job_queue = 'fifo' AND status = 'RUNNABLE';
SELECT rule_name, subject FROM fairshare._alert_candidates() WHERE rule_name = 'idle_capacity';
DELETE FROM fairshare.capacity_backoffs;

-- The waiting jobs are placed: waiting and idle capacity end, their alerts
-- are resolved.  The burst and the starvation go on.
SELECT pg_temp.run(job_id, 'small', 'ml.g5.xlarge') FROM fairshare.jobs WHERE job_queue = 'fifo' AND status = 'RUNNABLE';
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts();
SELECT rule_name, resolved_at IS NOT NULL AS resolved FROM fairshare.alert_events ORDER BY alert_id;
-- A new job waiting too long is a new episode: a new alert.
SELECT pg_temp.submit('fifo', 'late', 2, 'ml.g5.xlarge') IS NOT NULL AS submitted;
UPDATE fairshare.jobs SET runnable_at = now() - interval '90 minutes' WHERE job_name = 'late';
SELECT alert_id, rule_name, message FROM fairshare.evaluate_alerts();
-- Idle capacity starts a new wait for its threshold: pending, not raised.
SELECT rule_name, subject, alert_id IS NOT NULL AS raised FROM fairshare.alert_conditions ORDER BY 1, 2;
-- Disabling a rule resolves its alert; ProdExp2 getting its guarantee back
-- resolves the starvation.
UPDATE fairshare.alert_rules SET enabled = false WHERE name = 'failure_burst';
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_reason = 'Preempted for job e2-b', stop_requested_at = now()
 WHERE job_name = 'e1-5';
SELECT fairshare.apply_status(job_id, '{"TrainingJobStatus": "Stopped"}') FROM fairshare.jobs WHERE job_name = 'e1-5';
SELECT pg_temp.run(job_id, 'p4', 'ml.p4d.24xlarge') FROM fairshare.jobs WHERE job_name = 'e2-b';
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts();
SELECT rule_name, subject FROM fairshare.active_alerts ORDER BY alert_id;

-- Idle capacity is room the scheduler would fill: not room of the
-- environment's NUM_INSTANCES limit while the waiting job's own type
-- limit is full, nor room a fair-share compute reservation keeps.
INSERT INTO fairshare.service_environments (name) VALUES ('mixed'), ('fe');
INSERT INTO fairshare.capacity_limits VALUES ('mixed', 'NUM_INSTANCES', 10), ('mixed', 'ml.g5.xlarge', 4),
	('fe', 'NUM_INSTANCES', 10);
INSERT INTO fairshare.job_queues (name) VALUES ('mixq');
INSERT INTO fairshare.queue_environments VALUES ('mixq', 'mixed', 1);
SELECT pg_temp.run(pg_temp.submit('mixq', 'g5-running', 4, 'ml.g5.xlarge'), 'mixed', 'ml.g5.xlarge');
SELECT pg_temp.submit('mixq', 'g5-waiting', 2, 'ml.g5.xlarge') IS NOT NULL AS submitted;
SELECT subject FROM fairshare._alert_candidates() WHERE rule_name = 'idle_capacity' AND service_environment = 'mixed';
-- ... a job of another type fits the NUM_INSTANCES room: that is idle.
SELECT pg_temp.submit('mixq', 'm5-waiting', 2, 'ml.m5.xlarge') IS NOT NULL AS submitted;
SELECT subject, details ->> 'waiting_jobs' AS waiting_jobs FROM fairshare._alert_candidates()
 WHERE rule_name = 'idle_capacity' AND service_environment = 'mixed';
UPDATE fairshare.jobs SET status = 'FAILED' WHERE job_queue = 'mixq';
INSERT INTO fairshare.scheduling_policies (name, kind, compute_reservation) VALUES ('fair-reserve', 'FAIR_SHARE', 50);
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('fq', 'fair-reserve');
INSERT INTO fairshare.queue_environments VALUES ('fq', 'fe', 1);
INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
SELECT 'fe-' || i, 'fq', 'team', jsonb_build_object('RoleArn', 'arn:aws:iam::1:role/r',
	'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://b/o'),
	'ResourceConfig', jsonb_build_object('InstanceType', 'ml.m5.xlarge', 'InstanceCount', 1))
  FROM generate_series(1, 8) i;
UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_queue = 'fq';
SELECT pg_temp.run(job_id, 'fe', 'ml.m5.xlarge') FROM fairshare.jobs WHERE job_name IN ('fe-1', 'fe-2', 'fe-3', 'fe-4', 'fe-5');
SELECT count(*) AS a_pass_would_place FROM fairshare.schedule(true) WHERE action = 'PLACE' AND service_environment = 'fe';
SELECT subject FROM fairshare._alert_candidates() WHERE rule_name = 'idle_capacity' AND service_environment = 'fe';
UPDATE fairshare.jobs SET status = 'FAILED' WHERE job_queue = 'fq';

-- Who may evaluate: admins (the function runs as the extension owner),
-- not viewers, who may read the alerts.
CREATE ROLE regress_hk_admin IN ROLE fairshare_admin;
CREATE ROLE regress_hk_viewer IN ROLE fairshare_viewer;
SET ROLE regress_hk_admin;
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts();
SELECT fairshare.record_utilization() > 0 AS recorded;
SET ROLE regress_hk_viewer;
SELECT public.regress_try('SELECT fairshare.evaluate_alerts()');
SELECT public.regress_try('SELECT fairshare.record_utilization()');
SELECT public.regress_try('CALL fairshare.apply_retention()');
SELECT count(*) > 0 AS sees_alerts FROM fairshare.alert_events;
SELECT public.regress_try('SELECT fairshare.schedule_housekeeping()');
RESET ROLE;
SET ROLE regress_hk_admin;
SELECT public.regress_try('SELECT fairshare.unschedule_housekeeping()');
RESET ROLE;

------------------------------------------------------------------------------
-- Retention
------------------------------------------------------------------------------
SET fairshare.retention = '1d';
SELECT now() - fairshare.retention_cutoff() AS retention;
-- Five jobs that finished two days ago, two recent ones (one of which ran
-- for three days: its events are old), and a job still running whose
-- first events are three days old.
DO $$
DECLARE
	id bigint;
BEGIN
	FOR i IN 1..7 LOOP
		id := pg_temp.submit('fifo', 'old-' || i, 1, 'ml.g5.xlarge');
		PERFORM pg_temp.run(id, 'small', 'ml.g5.xlarge');
		UPDATE fairshare.jobs SET status = 'SUCCEEDED' WHERE job_id = id;
		IF i <= 5 THEN
			UPDATE fairshare.jobs SET stopped_at = now() - interval '2 days' WHERE job_id = id;
			UPDATE fairshare.job_events SET at = now() - interval '2 days' WHERE job_id = id;
		ELSIF i = 6 THEN
			UPDATE fairshare.job_events SET at = now() - interval '3 days' WHERE job_id = id AND new_status <> 'SUCCEEDED';
		END IF;
	END LOOP;
	UPDATE fairshare.job_events SET at = now() - interval '3 days'
	 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'busy');
END
$$;
UPDATE fairshare.utilization_history SET sampled_at = now() - interval '2 days'
 WHERE ctid IN (SELECT ctid FROM fairshare.utilization_history LIMIT 5);
-- A resolved alert of two days ago goes; one still firing stays.
UPDATE fairshare.alert_events SET raised_at = now() - interval '3 days', resolved_at = now() - interval '2 days'
 WHERE rule_name = 'failure_burst';
UPDATE fairshare.alert_events SET raised_at = now() - interval '3 days' WHERE rule_name = 'p4_waiting' OR resolved_at IS NULL;

CREATE TEMP VIEW counts AS
SELECT (SELECT count(*) FROM fairshare.jobs WHERE status IN ('SUCCEEDED', 'FAILED')) AS finished_jobs,
	   (SELECT count(*) FROM fairshare.jobs) AS jobs,
	   (SELECT count(*) FROM fairshare.job_attempts) AS attempts,
	   (SELECT count(*) FROM fairshare.job_events) AS events,
	   (SELECT count(*) FROM fairshare.job_events WHERE at < fairshare.retention_cutoff()) AS old_events,
	   (SELECT count(*) FROM fairshare.utilization_history) AS history,
	   (SELECT count(*) FROM fairshare.alert_events) AS alerts,
	   (SELECT count(*) FROM fairshare.alert_events WHERE resolved_at IS NULL) AS firing;
SELECT * FROM counts;
SELECT public.regress_try('SELECT fairshare.apply_retention_batch(0)');
-- In a transaction, one batch of at most two rows of each kind.
BEGIN;
SELECT * FROM fairshare.apply_retention_batch(2);
ROLLBACK;
-- The daily procedure: batches of two, each committed, until nothing old is left.
CALL fairshare.apply_retention(batch_size => 2);
SELECT * FROM counts;
SELECT job_name FROM fairshare.jobs WHERE job_name LIKE 'old-%' ORDER BY 1;
-- The running job keeps its three-day-old events: a pass reads from them
-- when its training began (the work a preemption would lose).
SELECT count(*) AS busy_old_events_kept FROM fairshare.job_events
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'busy') AND at < fairshare.retention_cutoff();
-- The finished one that ran for three days keeps only its recent event.
SELECT string_agg(new_status::text, ' ') AS old_6_events FROM fairshare.job_events
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'old-6');
SELECT rule_name, resolved_at IS NULL AS firing FROM fairshare.alert_events ORDER BY alert_id;
-- Nothing left to do the second time.
CALL fairshare.apply_retention();
-- Admins may run it by hand.
SET ROLE regress_hk_admin;
CALL fairshare.apply_retention();
BEGIN;
SELECT * FROM fairshare.apply_retention_batch(10, now() + interval '1 minute');
ROLLBACK;
RESET ROLE;
-- It commits between batches, so it cannot run inside a transaction block.
BEGIN;
CALL fairshare.apply_retention();
ROLLBACK;
RESET fairshare.retention;
SELECT fairshare._human_duration(d) FROM unnest(ARRAY[interval '5 seconds', '90 seconds', '1 hour', '2 hours 5 minutes 30 seconds',
													  '1 day', '3 days 4 hours 59 minutes']) d;

-- ORPHANED_TRAINING_JOBS: each training job the orphan sweep found that no
-- job knows raises an alert at once; the rule cannot be narrowed; the alert
-- resolves once the sweep no longer finds it.  (The sweep itself, against
-- SageMaker, is in test/worker/standby.test and test/ha/patroni_async.test.)
SELECT public.regress_try($$INSERT INTO fairshare.alert_rules (name, kind, threshold, job_queue)
						   VALUES ('orphans_of_q', 'ORPHANED_TRAINING_JOBS', '0', 'q')$$);
INSERT INTO fairshare.orphan_sweep VALUES ('fairshare-0123abcd-77-1',
	'arn:aws:sagemaker:us-east-1:123456789012:training-job/fairshare-0123abcd-77-1', 'InProgress', '77',
	'2026-01-01 00:00:00+00', now(), now());
SELECT training_job_name, training_job_status, job_id_tag FROM fairshare.orphaned_training_jobs;
SELECT rule_name, kind, severity, subject, message, details - 'first_seen' AS details
  FROM fairshare.evaluate_alerts() WHERE kind = 'ORPHANED_TRAINING_JOBS';
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts() WHERE kind = 'ORPHANED_TRAINING_JOBS';
DELETE FROM fairshare.orphan_sweep;
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts() WHERE kind = 'ORPHANED_TRAINING_JOBS';
SELECT rule_name, subject, resolved_at IS NOT NULL AS resolved FROM fairshare.alert_events
 WHERE kind = 'ORPHANED_TRAINING_JOBS';
-- Finished jobs an admin deletes before the retention cutoff reaches them:
-- the sweep lists training jobs back to the cutoff, and finds their
-- training jobs.  One whose attempt recorded its ARN is remembered and is
-- no orphan; an attempt that recorded none never had a training job, so
-- one of its name is another's, an orphan.
UPDATE fairshare.job_attempts SET training_job_arn = 'arn:aws:sagemaker:us-east-1:123456789012:training-job/' || training_job_name
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'old-7');
CREATE TEMP TABLE deleted_early AS
SELECT j.job_name, a.training_job_name, a.training_job_arn
  FROM fairshare.job_attempts a JOIN fairshare.jobs j USING (job_id)
 WHERE j.job_name IN ('old-6', 'old-7');
SET ROLE regress_hk_admin;
DELETE FROM fairshare.jobs WHERE job_name IN ('old-6', 'old-7');
RESET ROLE;
SELECT d.job_name, d.training_job_arn IS NOT NULL AS had_arn,
	   EXISTS (SELECT 1 FROM fairshare.forgotten_training_jobs f
				WHERE f.training_job_name = d.training_job_name AND f.training_job_arn = d.training_job_arn) AS remembered
  FROM deleted_early d ORDER BY 1;
INSERT INTO fairshare.orphan_sweep
SELECT training_job_name, coalesce(training_job_arn, 'arn:aws:sagemaker:us-east-1:123456789012:training-job/' || training_job_name),
	   'InProgress', NULL, now() - interval '1 hour', now(), now()
  FROM deleted_early;
SELECT d.job_name AS orphan_of FROM fairshare.orphaned_training_jobs o JOIN deleted_early d USING (training_job_name);
SELECT count(*) AS new_alerts FROM fairshare.evaluate_alerts() WHERE kind = 'ORPHANED_TRAINING_JOBS';
-- The remembered name with another ARN is another training job: an orphan.
UPDATE fairshare.orphan_sweep SET training_job_arn = training_job_arn || '-other';
SELECT count(*) AS orphans FROM fairshare.orphaned_training_jobs;
DELETE FROM fairshare.orphan_sweep;
-- Viewers see the view; only admins may sweep.
SET ROLE regress_hk_viewer;
SELECT count(*) FROM fairshare.orphaned_training_jobs;
SELECT public.regress_try('SELECT fairshare.sweep_orphaned_training_jobs()');
RESET ROLE;

DROP ROLE regress_hk_admin, regress_hk_viewer;
