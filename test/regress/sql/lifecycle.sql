-- The job state machine: only docs/lifecycle.md's transitions, one event per
-- transition, timestamps and attempts kept; terminate_job and
-- update_job_priority.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
-- A fixed installation id, so that training job names read the same every run.
UPDATE fairshare.installation SET installation_id = '5e7e57ed-0000-4000-8000-000000000001';
RESET client_min_messages;
\set SHOW_CONTEXT never

INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100);
INSERT INTO fairshare.job_queues (name) VALUES ('fifo');
INSERT INTO fairshare.queue_environments VALUES ('fifo', 'p4', 1);

CREATE FUNCTION pg_temp.submit(name text) RETURNS bigint LANGUAGE sql AS $$
	INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES (name, 'fifo', '{"RoleArn": "arn:aws:iam::1:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
							"ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 4}}')
	RETURNING job_id
$$;

-- Move a job along a path of states (each step a real transition).
CREATE FUNCTION pg_temp.walk(id bigint, path fairshare.job_status[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	s fairshare.job_status;
BEGIN
	FOREACH s IN ARRAY path LOOP
		IF s = 'SCHEDULED' THEN
			UPDATE fairshare.jobs SET status = s, service_environment = 'p4', instance_type = 'ml.p4d.24xlarge'
			 WHERE job_id = id;
		ELSE
			UPDATE fairshare.jobs SET status = s WHERE job_id = id;
		END IF;
	END LOOP;
END
$$;

-- One life: runnable, placed, started, preempted back to RUNNABLE, placed
-- again, finished.
SELECT pg_temp.submit('life') AS life \gset
SELECT pg_temp.walk(:life, '{RUNNABLE}');
SELECT status, runnable_at IS NOT NULL AS has_runnable_at FROM fairshare.jobs WHERE job_id = :life;
CREATE TEMP TABLE first_runnable AS SELECT runnable_at FROM fairshare.jobs WHERE job_id = :life;
SELECT pg_temp.walk(:life, '{SCHEDULED}');
SELECT status, attempts, training_job_name, service_environment, instance_type, scheduled_at IS NOT NULL AS scheduled,
	   started_at IS NULL AS not_started FROM fairshare.jobs WHERE job_id = :life;
SELECT pg_temp.walk(:life, '{STARTING}');
UPDATE fairshare.jobs SET training_job_arn = 'arn:aws:sagemaker:us-east-1:1:training-job/x-1' WHERE job_id = :life;
SELECT pg_temp.walk(:life, '{RUNNING}');
SELECT status, started_at IS NOT NULL AS started FROM fairshare.jobs WHERE job_id = :life;
-- While a job is placed on p4, p4's endpoint and region stay: its training
-- job is described and stopped where it was created.  Other columns change.
UPDATE fairshare.service_environments SET endpoint_url = 'https://sagemaker.eu-west-1.amazonaws.com' WHERE name = 'p4';
UPDATE fairshare.service_environments SET region = 'eu-west-1' WHERE name = 'p4';
UPDATE fairshare.service_environments SET state = 'ENABLED' WHERE name = 'p4';
UPDATE fairshare.jobs SET status = 'RUNNABLE', status_reason = 'preempted for job 99' WHERE job_id = :life;
SELECT status, status_reason, service_environment, instance_type, training_job_name, training_job_arn, attempts,
	   runnable_at = (SELECT runnable_at FROM first_runnable) AS kept_its_place
  FROM fairshare.jobs WHERE job_id = :life;
SELECT pg_temp.walk(:life, '{SCHEDULED,RUNNING}');
UPDATE fairshare.jobs SET status = 'SUCCEEDED', status_reason = NULL WHERE job_id = :life;
SELECT status, attempts, training_job_name, stopped_at IS NOT NULL AS stopped FROM fairshare.jobs WHERE job_id = :life;
SELECT attempt, training_job_name, training_job_arn, service_environment, instance_type, instance_count,
	   started_at IS NOT NULL AS started, stopped_at IS NOT NULL AS stopped, outcome, status_reason
  FROM fairshare.job_attempts WHERE job_id = :life ORDER BY attempt;
SELECT old_status, new_status, reason FROM fairshare.job_events WHERE job_id = :life ORDER BY event_id;

-- Every (from, to) pair: accepted exactly when docs/lifecycle.md allows it,
-- with exactly one event when accepted and none when rejected.
CREATE TEMP TABLE paths (state fairshare.job_status, path fairshare.job_status[]);
INSERT INTO paths VALUES
	('SUBMITTED', '{}'), ('PENDING', '{PENDING}'), ('RUNNABLE', '{RUNNABLE}'),
	('SCHEDULED', '{RUNNABLE,SCHEDULED}'), ('STARTING', '{RUNNABLE,SCHEDULED,STARTING}'),
	('RUNNING', '{RUNNABLE,SCHEDULED,STARTING,RUNNING}'), ('SUCCEEDED', '{RUNNABLE,SCHEDULED,RUNNING,SUCCEEDED}'),
	('FAILED', '{FAILED}');
CREATE TEMP TABLE matrix (from_state fairshare.job_status, to_state fairshare.job_status, allowed boolean,
						  result text, events_written bigint);
DO $$
DECLARE
	p record; t fairshare.job_status; id bigint; n_before bigint; res text;
BEGIN
	FOR p IN SELECT * FROM paths LOOP
		FOREACH t IN ARRAY enum_range(NULL::fairshare.job_status) LOOP
			CONTINUE WHEN t = p.state;
			id := pg_temp.submit('m');
			PERFORM pg_temp.walk(id, p.path);
			SELECT count(*) INTO n_before FROM fairshare.job_events WHERE job_id = id;
			res := public.regress_try_hint(format('SELECT pg_temp.walk(%s, ARRAY[%L]::fairshare.job_status[])', id, t));
			INSERT INTO matrix
			SELECT p.state, t, fairshare.valid_transition(p.state, t), res,
				   (SELECT count(*) FROM fairshare.job_events WHERE job_id = id) - n_before;
		END LOOP;
	END LOOP;
END
$$;
SELECT from_state,
	   string_agg(to_state::text, ' ' ORDER BY to_state) FILTER (WHERE result = 'ok') AS accepted,
	   string_agg(to_state::text, ' ' ORDER BY to_state) FILTER (WHERE result <> 'ok') AS rejected
  FROM matrix GROUP BY from_state ORDER BY from_state;
SELECT count(*) AS pairs,
	   count(*) FILTER (WHERE (result = 'ok') <> allowed) AS disagreements,
	   count(*) FILTER (WHERE result = 'ok' AND events_written <> 1) AS accepted_without_one_event,
	   count(*) FILTER (WHERE result <> 'ok' AND events_written <> 0) AS rejected_with_events,
	   count(*) FILTER (WHERE result <> 'ok' AND result NOT LIKE '55000: job % cannot go from % to %') AS other_errors
  FROM matrix;
\pset format unaligned
SELECT result FROM matrix WHERE from_state IN ('SUCCEEDED', 'RUNNING') AND to_state = 'PENDING' ORDER BY from_state;
\pset format aligned

-- A transition rolled back leaves no event.
SELECT pg_temp.submit('rolled-back') AS rb \gset
BEGIN;
SELECT pg_temp.walk(:rb, '{RUNNABLE}');
ROLLBACK;
SELECT status, (SELECT count(*) FROM fairshare.job_events WHERE job_id = :rb) AS events FROM fairshare.jobs WHERE job_id = :rb;

-- Placed without a placement, and changing what was submitted: rejected.
SELECT pg_temp.walk(:rb, '{RUNNABLE}');
SELECT public.regress_try_hint(format('UPDATE fairshare.jobs SET status = %L WHERE job_id = %s', 'SCHEDULED', :rb));
SELECT public.regress_try_hint(format('UPDATE fairshare.jobs SET job_queue = %L WHERE job_id = %s', 'other', :rb));
SELECT public.regress_try_hint(format('UPDATE fairshare.jobs SET request = request || %L WHERE job_id = %s', '{"x": 1}', :rb));
SELECT public.regress_try_hint(format('UPDATE fairshare.jobs SET instance_count = 8 WHERE job_id = %s', :rb));
SELECT public.regress_try_hint(format('UPDATE fairshare.jobs SET scheduling_priority = 10000 WHERE job_id = %s', :rb));

-- terminate_job: a job not yet placed fails at once ...
SELECT fairshare.terminate_job(:rb, 'wrong dataset');
SELECT status, status_reason, stopped_at IS NOT NULL AS stopped FROM fairshare.jobs WHERE job_id = :rb;
-- ... a finished one is left alone ...
SELECT fairshare.terminate_job(:rb, 'again');
-- ... a placed one gets a stop request and keeps running (and its capacity)
-- until SageMaker reports it stopped.
SELECT pg_temp.submit('running') AS run \gset
SELECT pg_temp.walk(:run, '{RUNNABLE,SCHEDULED,STARTING,RUNNING}');
SELECT fairshare.terminate_job(:run, 'budget exhausted');
SELECT fairshare.terminate_job(:run, 'asked twice');
SELECT status, stop_kind, stop_reason, stop_requested_at IS NOT NULL AS requested FROM fairshare.jobs WHERE job_id = :run;
SELECT public.regress_try_hint(format('SELECT fairshare.terminate_job(%s, %L)', :run, '  '));
SELECT public.regress_try_hint('SELECT fairshare.terminate_job(424242, ''gone'')');

-- A terminate overrides a preemption in progress.
SELECT pg_temp.submit('victim') AS victim \gset
SELECT pg_temp.walk(:victim, '{RUNNABLE,SCHEDULED,RUNNING}');
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_reason = 'preempted for job 1', preempted_for = 1,
						  stop_requested_at = now() WHERE job_id = :victim;
SELECT fairshare.terminate_job(:victim, 'not needed');
SELECT stop_kind, stop_reason, preempted_for FROM fairshare.jobs WHERE job_id = :victim;

-- update_job_priority returns the previous priority; the next pass sees the new one.
SELECT pg_temp.submit('prio') AS prio \gset
SELECT fairshare.update_job_priority(:prio, 70);
SELECT fairshare.update_job_priority(:prio, 90);
SELECT scheduling_priority FROM fairshare.jobs WHERE job_id = :prio;
SELECT fairshare.update_job_priority(:run, 5) AS running_job_old_priority;
SELECT public.regress_try_hint(format('SELECT fairshare.update_job_priority(%s, 10000)', :prio));
SELECT public.regress_try_hint(format('SELECT fairshare.update_job_priority(%s, -1)', :prio));
SELECT public.regress_try_hint(format('SELECT fairshare.update_job_priority(%s, 1)', :rb));
SELECT public.regress_try_hint('SELECT fairshare.update_job_priority(424242, 1)');
SELECT old_status, new_status FROM fairshare.job_events WHERE job_id = :prio;

-- The start of a pass takes new jobs into their queue, oldest first; the
-- dispatcher bounds how many (max_new) and learns whether some were left.
UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE status = 'SUBMITTED';
SELECT count(pg_temp.submit('new' || i)) AS submitted FROM generate_series(1, 5) i;
SELECT fairshare._prepare_pass(2) AS new_jobs_left;
SELECT job_name, status FROM fairshare.jobs WHERE job_name LIKE 'new%' ORDER BY job_id;
SELECT fairshare._prepare_pass(3) AS new_jobs_left;
SELECT count(*) AS runnable FROM fairshare.jobs WHERE job_name LIKE 'new%' AND status = 'RUNNABLE';
-- A disabled queue holds new and waiting jobs as PENDING, whatever max_new;
-- enabled again, they come back.
UPDATE fairshare.job_queues SET state = 'DISABLED' WHERE name = 'fifo';
SELECT pg_temp.submit('held') AS held \gset
SELECT fairshare._prepare_pass() AS new_jobs_left;
SELECT status, status_reason FROM fairshare.jobs WHERE job_id = :held;
SELECT count(*) AS pending FROM fairshare.jobs WHERE job_name LIKE 'new%' AND status = 'PENDING';
UPDATE fairshare.job_queues SET state = 'ENABLED' WHERE name = 'fifo';
SELECT fairshare._prepare_pass(1) AS new_jobs_left;
SELECT status, status_reason FROM fairshare.jobs WHERE job_id = :held;
SELECT count(*) AS runnable FROM fairshare.jobs WHERE job_name LIKE 'new%' AND status = 'RUNNABLE';
SELECT public.regress_try('SELECT fairshare._prepare_pass(0)');
-- The same for a quota share; with both its queue and its share disabled,
-- the reason names the queue.
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('qq', 'quota');
INSERT INTO fairshare.queue_environments VALUES ('qq', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name) VALUES ('qq', 'Q1');
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
SELECT 'quota-held', 'qq', 'Q1', request FROM fairshare.jobs WHERE job_id = :held RETURNING job_id AS qheld \gset
SELECT fairshare._prepare_pass() AS new_jobs_left;
UPDATE fairshare.quota_shares SET state = 'DISABLED' WHERE name = 'Q1';
SELECT fairshare._prepare_pass() AS new_jobs_left;
SELECT status, status_reason FROM fairshare.jobs WHERE job_id = :qheld;
UPDATE fairshare.jobs SET status = 'RUNNABLE', status_reason = NULL WHERE job_id = :qheld;
UPDATE fairshare.job_queues SET state = 'DISABLED' WHERE name = 'qq';
SELECT fairshare._prepare_pass() AS new_jobs_left;
SELECT status, status_reason FROM fairshare.jobs WHERE job_id = :qheld;

SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
