-- The six reference scenarios of docs/scheduling.md, driven through INSERT,
-- fairshare.schedule() and fairshare.apply_status() (playing SageMaker),
-- checking placements, victims, reasons, queue_snapshot order and explain()
-- at each step.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- submit(queue, share, name, instances, priority, types): one job.
CREATE FUNCTION pg_temp.submit(queue text, share text, name text, n integer, priority integer DEFAULT 0,
							   types text[] DEFAULT NULL) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	kind text;
	id bigint;
BEGIN
	SELECT p.kind INTO kind FROM fairshare.job_queues q LEFT JOIN fairshare.scheduling_policies p
		ON p.name = q.scheduling_policy WHERE q.name = queue;
	INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, quota_share, scheduling_priority,
								request, instance_types, instance_count)
	VALUES (name, queue, CASE WHEN kind = 'FAIR_SHARE' THEN share END,
			CASE WHEN kind = 'QUOTA_SHARE' THEN share END, priority,
			jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
				'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
				'ResourceConfig', jsonb_build_object('InstanceType', coalesce(types[1], 'ml.p4d.24xlarge'),
													 'InstanceCount', n)),
			types, n)
	RETURNING job_id INTO id;
	RETURN id;
END
$$;
-- SageMaker says: the job's current attempt is in this state.
CREATE FUNCTION pg_temp.sagemaker(name text, sm_status text, secondary text DEFAULT NULL, failure text DEFAULT NULL)
RETURNS fairshare.job_status LANGUAGE sql AS $$
	SELECT fairshare.apply_status(j.job_id, jsonb_strip_nulls(jsonb_build_object(
		'TrainingJobName', j.training_job_name, 'TrainingJobStatus', sm_status,
		'SecondaryStatus', secondary, 'FailureReason', failure)))
	  FROM fairshare.jobs j WHERE j.job_name = name
$$;
-- Every placed job is now training.
CREATE FUNCTION pg_temp.all_training() RETURNS void LANGUAGE sql AS $$
	SELECT fairshare.apply_status(j.job_id, jsonb_build_object('TrainingJobName', j.training_job_name,
		'TrainingJobStatus', 'InProgress', 'SecondaryStatus', 'Training'))
	  FROM fairshare.jobs j WHERE j.status IN ('SCHEDULED', 'STARTING')
$$;
-- SageMaker finishes every stop that was asked for.
CREATE FUNCTION pg_temp.stops_finish() RETURNS SETOF text LANGUAGE sql AS $$
	SELECT j.job_name || ' -> ' || fairshare.apply_status(j.job_id, jsonb_build_object(
		'TrainingJobName', j.training_job_name, 'TrainingJobStatus', 'Stopped', 'SecondaryStatus', 'Stopped'))
	  FROM fairshare.jobs j WHERE j.stop_kind IS NOT NULL AND j.status IN ('SCHEDULED', 'STARTING', 'RUNNING')
	 ORDER BY j.job_id
$$;
-- One pass, as rows that name jobs rather than ids.
CREATE FUNCTION pg_temp.pass() RETURNS TABLE (job text, action text, placement text, reason text)
LANGUAGE sql AS $$
	SELECT j.job_name, s.action, s.service_environment || '/' || s.instance_type, s.reason
	  FROM fairshare.schedule() s JOIN fairshare.jobs j USING (job_id)
$$;
-- Instances held per share (SCHEDULED, STARTING, RUNNING, stopping or not).
CREATE FUNCTION pg_temp.held(queue text) RETURNS TABLE (share text, held bigint, stopping bigint)
LANGUAGE sql AS $$
	SELECT coalesce(share_identifier, quota_share, job_queue), sum(instance_count),
		   coalesce(sum(instance_count) FILTER (WHERE stop_kind IS NOT NULL), 0)
	  FROM fairshare.jobs WHERE job_queue = queue AND status IN ('SCHEDULED', 'STARTING', 'RUNNING')
	 GROUP BY 1 ORDER BY 1
$$;
CREATE FUNCTION pg_temp.snapshot(queue text) RETURNS TABLE ("position" int, job text, share text, priority int, pending_reason text)
LANGUAGE sql AS $$
	SELECT s.position, j.job_name, s.share, s.scheduling_priority, s.pending_reason
	  FROM fairshare.queue_snapshot(queue) s JOIN fairshare.jobs j USING (job_id) ORDER BY s.position
$$;
-- forget_jobs(): the jobs of the scenarios before run nowhere: forget them
-- (replica mode skips the trigger that refuses to truncate placed jobs).
CREATE FUNCTION pg_temp.forget_jobs() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('client_min_messages', 'warning', true);
	PERFORM set_config('session_replication_role', 'replica', true);
	TRUNCATE fairshare.jobs CASCADE;
	PERFORM set_config('session_replication_role', 'origin', true);
END
$$;
-- queue_world(name, instances, policy): no jobs, and a queue NAME-queue
-- of scheduling policy POLICY on its own environment NAME of INSTANCES x
-- ml.p4d.24xlarge.
CREATE FUNCTION pg_temp.queue_world(name text, instances integer, policy text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.forget_jobs();
	INSERT INTO fairshare.service_environments (name) VALUES (name);
	INSERT INTO fairshare.capacity_limits VALUES (name, 'ml.p4d.24xlarge', instances);
	INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES (name || '-queue', 100, policy);
	INSERT INTO fairshare.queue_environments VALUES (name || '-queue', name, 1);
END
$$;
-- borrow_world(name, instances): no jobs, and a quota-share queue
-- name-queue on its own environment `name' of `instances' x
-- ml.p4d.24xlarge, shared by quota shares Borrower (LEND_AND_BORROW, a
-- guarantee of 0) and Owner (LEND, a guarantee of all of it).
CREATE FUNCTION pg_temp.borrow_world(name text, instances integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_temp.queue_world(name, instances, 'quota');
	INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES
		(name || '-queue', 'Borrower', 'LEND_AND_BORROW'), (name || '-queue', 'Owner', 'LEND');
	INSERT INTO fairshare.quota_share_limits VALUES
		(name || '-queue', 'Borrower', 'ml.p4d.24xlarge', 0), (name || '-queue', 'Owner', 'ml.p4d.24xlarge', instances);
END
$$;
-- borrowers_training(name, n, instances): in borrow_world NAME, Borrower
-- submits n jobs of that many instances (NAME-b1 ...), a pass places
-- them, and they train; returns how many the pass placed.
CREATE FUNCTION pg_temp.borrowers_training(name text, n integer, instances integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	placed bigint;
BEGIN
	PERFORM pg_temp.submit(name || '-queue', 'Borrower', name || '-b' || i, instances) FROM generate_series(1, n) i;
	SELECT count(*) INTO placed FROM pg_temp.pass() WHERE action = 'PLACE';
	PERFORM pg_temp.all_training();
	RETURN placed;
END
$$;
-- A fair-share queue NAME-queue (policy NAME-fair) on environment NAME of
-- INSTANCES ml.p4d.24xlarge, after forgetting the jobs before.
CREATE FUNCTION pg_temp.fair_world(name text, instances integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO fairshare.scheduling_policies (name, kind) VALUES (name || '-fair', 'FAIR_SHARE');
	PERFORM pg_temp.queue_world(name, instances, name || '-fair');
END
$$;
CREATE FUNCTION pg_temp.why(name text) RETURNS text LANGUAGE sql AS $$
	SELECT fairshare.explain(job_id) ->> 'summary' FROM fairshare.jobs WHERE job_name = name
$$;

-------------------------------------------------------------------------------
-- 1. Borrow and reclaim.  One environment of 100 x ml.p4d.24xlarge; quota
-- shares ProdExp1 (60, LEND_AND_BORROW) and ProdExp2 (40, LEND).
-------------------------------------------------------------------------------
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES ('prod', 10, 'quota');
INSERT INTO fairshare.queue_environments VALUES ('prod', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, in_share_preemption) VALUES
	('prod', 'ProdExp1', 'LEND_AND_BORROW', true), ('prod', 'ProdExp2', 'LEND', false);
INSERT INTO fairshare.quota_share_limits VALUES
	('prod', 'ProdExp1', 'ml.p4d.24xlarge', 60), ('prod', 'ProdExp2', 'ml.p4d.24xlarge', 40);

-- ProdExp2 runs 25 instances; ProdExp1 has a backlog of 8 x 15.
SELECT count(*) FROM (SELECT pg_temp.submit('prod', 'ProdExp2', 'e2-' || i, 5) FROM generate_series(1, 5) i) s;
SELECT count(*) FROM (SELECT pg_temp.submit('prod', 'ProdExp1', 'e1-' || i, 15) FROM generate_series(1, 8) i) s;
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
-- ProdExp1 borrowed ProdExp2's idle 15: it runs 75.
SELECT * FROM pg_temp.held('prod');
SELECT * FROM pg_temp.snapshot('prod');
SELECT pg_temp.why('e1-6');
-- Nothing changes while nothing changes.
SELECT * FROM pg_temp.pass();

-- ProdExp2 submits 15 more: ProdExp1's borrowed 15 are reclaimed.
SELECT count(*) FROM (SELECT pg_temp.submit('prod', 'ProdExp2', 'e2-late-' || i, 5) FROM generate_series(1, 3) i) s;
SELECT * FROM pg_temp.pass();
SELECT job_name, status, stop_kind, stop_reason FROM fairshare.jobs WHERE stop_kind IS NOT NULL;
-- The victim still holds its capacity while it stops; the room is held for
-- the job it was preempted for, and nothing else takes it.
SELECT * FROM pg_temp.held('prod');
SELECT pg_temp.why('e2-late-1');
SELECT fairshare.explain(job_id) -> 'nomination' ->> 'kind' AS nomination FROM fairshare.jobs WHERE job_name = 'e2-late-1';
SELECT * FROM pg_temp.pass();
-- SageMaker reports the victim stopped: it goes back to its queue, and the
-- next pass places ProdExp2's jobs.
SELECT * FROM pg_temp.stops_finish();
SELECT job_name, status, preemptions, status_reason FROM fairshare.jobs WHERE job_name = 'e1-5';
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT * FROM pg_temp.held('prod');
-- The preempted job waits at the head of ProdExp1, which is at its limit
-- while ProdExp2 uses all of its own.
SELECT * FROM pg_temp.snapshot('prod');

-------------------------------------------------------------------------------
-- 2. In-share priority preemption.  ProdExp2 is busy with its own 40;
-- ProdExp1 (60, in-share preemption on) runs A (80), B (50), C (30), D (10),
-- 15 instances each.  A priority-90 job of 15 arrives: D is preempted.
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
SELECT count(*) FROM (SELECT pg_temp.submit('prod', 'ProdExp2', 'own-' || i, 10) FROM generate_series(1, 4) i) s;
SELECT pg_temp.submit('prod', 'ProdExp1', 'A', 15, 80), pg_temp.submit('prod', 'ProdExp1', 'B', 15, 50),
	   pg_temp.submit('prod', 'ProdExp1', 'C', 15, 30), pg_temp.submit('prod', 'ProdExp1', 'D', 15, 10);
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT * FROM pg_temp.held('prod');
SELECT pg_temp.submit('prod', 'ProdExp1', 'urgent', 15, 90);
-- With young jobs spared (fairshare.preemption_min_runtime, off by default),
-- D is still the victim, and its reason says that no older job frees the room.
SET fairshare.preemption_min_runtime = '5min';
SELECT * FROM pg_temp.pass();
RESET fairshare.preemption_min_runtime;
SELECT pg_temp.why('urgent');
SELECT * FROM pg_temp.stops_finish();
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
-- ProdExp1 still holds 60: A, B, C and the new job.
SELECT * FROM pg_temp.held('prod');
SELECT job_name, scheduling_priority, status FROM fairshare.jobs WHERE quota_share = 'ProdExp1' ORDER BY scheduling_priority DESC;
SELECT pg_temp.why('D');

-- Had idle capacity been there to borrow, the job would have borrowed it:
-- preemption is the last resort.
SELECT pg_temp.forget_jobs();
SELECT pg_temp.submit('prod', 'ProdExp2', 'own-half', 20);
SELECT pg_temp.submit('prod', 'ProdExp1', 'A', 15, 80), pg_temp.submit('prod', 'ProdExp1', 'B', 15, 50),
	   pg_temp.submit('prod', 'ProdExp1', 'C', 15, 30), pg_temp.submit('prod', 'ProdExp1', 'D', 15, 10);
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT pg_temp.submit('prod', 'ProdExp1', 'urgent', 15, 90);
SELECT * FROM pg_temp.pass();
SELECT count(*) AS stops_requested FROM fairshare.jobs WHERE stop_kind IS NOT NULL;
SELECT * FROM pg_temp.held('prod');

-------------------------------------------------------------------------------
-- 3. Share weights.  A fair-share queue whose policy has HIGHPRI (1),
-- MIDPRI (3), LOWPRI (5), on an environment of 1 instance.
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
INSERT INTO fairshare.service_environments (name) VALUES ('one');
INSERT INTO fairshare.capacity_limits VALUES ('one', 'NUM_INSTANCES', 1);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('weights', 'FAIR_SHARE');
INSERT INTO fairshare.share_distribution VALUES ('weights', 'HIGHPRI', 1), ('weights', 'MIDPRI', 3), ('weights', 'LOWPRI', 5);
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('research', 'weights');
INSERT INTO fairshare.queue_environments VALUES ('research', 'one', 1);
-- LOWPRI and MIDPRI together: MIDPRI runs first.
SELECT pg_temp.submit('research', 'LOWPRI', 'low', 1), pg_temp.submit('research', 'MIDPRI', 'mid', 1);
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT * FROM pg_temp.snapshot('research');
-- HIGHPRI submitted later runs before LOWPRI: first in the queue order ...
SELECT pg_temp.submit('research', 'HIGHPRI', 'high', 1);
SELECT * FROM pg_temp.pass();
SELECT * FROM pg_temp.snapshot('research');
SELECT pg_temp.why('low');
-- ... and first to run when the instance frees up.
SELECT pg_temp.sagemaker('mid', 'Completed');
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT pg_temp.sagemaker('high', 'Completed');
SELECT * FROM pg_temp.pass();

-------------------------------------------------------------------------------
-- 4. Steady-state proportions: weights 1/3/5 with saturated demand converge
-- to 15/23, 5/23, 3/23 of capacity (within one instance).
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
UPDATE fairshare.capacity_limits SET max_capacity = 46 WHERE service_environment = 'one';
SELECT count(*) FROM (SELECT pg_temp.submit('research', s, s || '-' || i, 1)
						FROM unnest(ARRAY['HIGHPRI', 'MIDPRI', 'LOWPRI']) s, generate_series(1, 300) i) jobs;
SELECT count(*) AS placed FROM fairshare.schedule();
SELECT pg_temp.all_training();
SELECT share, held, round(46 * CASE share WHEN 'HIGHPRI' THEN 15 WHEN 'MIDPRI' THEN 5 ELSE 3 END / 23.0, 1) AS target,
	   abs(held - 46 * CASE share WHEN 'HIGHPRI' THEN 15 WHEN 'MIDPRI' THEN 5 ELSE 3 END / 23.0) <= 1 AS within_one
  FROM pg_temp.held('research');
-- Jobs keep finishing and arriving; the proportions hold.
DO $$
BEGIN
	FOR round IN 1..10 LOOP
		PERFORM fairshare.apply_status(job_id, jsonb_build_object('TrainingJobName', training_job_name,
											   'TrainingJobStatus', 'Completed'))
		   FROM (SELECT job_id, training_job_name FROM fairshare.jobs WHERE status = 'RUNNING'
				  ORDER BY job_id LIMIT 10) done;
		PERFORM fairshare.schedule();
		PERFORM pg_temp.all_training();
	END LOOP;
END
$$;
SELECT share, held, abs(held - 46 * CASE share WHEN 'HIGHPRI' THEN 15 WHEN 'MIDPRI' THEN 5 ELSE 3 END / 23.0) <= 1 AS within_one
  FROM pg_temp.held('research');

-------------------------------------------------------------------------------
-- 5. Two queues on one environment: the higher-priority queue's jobs go first.
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
INSERT INTO fairshare.service_environments (name) VALUES ('shared');
INSERT INTO fairshare.capacity_limits VALUES ('shared', 'NUM_INSTANCES', 10);
INSERT INTO fairshare.job_queues (name, priority) VALUES ('batch-low', 1), ('batch-high', 100);
INSERT INTO fairshare.queue_environments VALUES ('batch-low', 'shared', 1), ('batch-high', 'shared', 1);
-- The low queue's jobs are older, but the high queue is served first.
SELECT pg_temp.submit('batch-low', NULL, 'low-' || i, 4) FROM generate_series(1, 2) i;
SELECT pg_temp.submit('batch-high', NULL, 'high-' || i, 4) FROM generate_series(1, 2) i;
SELECT * FROM pg_temp.pass();
SELECT pg_temp.why('low-1');

-------------------------------------------------------------------------------
-- 6. Fallback: a job listing p5 then p4d runs on p4d when p5 is full, and
-- moves to p4d when SageMaker answers its p5 attempt with a capacity failure.
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
INSERT INTO fairshare.service_environments (name) VALUES ('p5');
INSERT INTO fairshare.capacity_limits VALUES ('p5', 'ml.p5.48xlarge', 8);
INSERT INTO fairshare.job_queues (name) VALUES ('gpu');
INSERT INTO fairshare.queue_environments VALUES ('gpu', 'p5', 1), ('gpu', 'p4', 2);
SELECT pg_temp.submit('gpu', NULL, 'p5-filler', 8, 0, ARRAY['ml.p5.48xlarge']);
SELECT pg_temp.submit('gpu', NULL, 'flexible', 8, 0, ARRAY['ml.p5.48xlarge', 'ml.p4d.24xlarge']);
SELECT * FROM pg_temp.pass();
-- p5 frees up; the next flexible job goes to p5 first ...
SELECT pg_temp.sagemaker('p5-filler', 'Completed');
SELECT pg_temp.submit('gpu', NULL, 'flexible-2', 8, 0, ARRAY['ml.p5.48xlarge', 'ml.p4d.24xlarge']);
SELECT * FROM pg_temp.pass();
-- ... SageMaker has no p5 capacity after all: no attempt spent, p5 backs off,
-- and the job lands on p4d.
SELECT pg_temp.sagemaker('flexible-2', 'InProgress', 'Starting');
SELECT pg_temp.sagemaker('flexible-2', 'Failed', 'Failed',
	'CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type.');
SELECT job_name, status, attempts, retry_attempts FROM fairshare.jobs WHERE job_name = 'flexible-2';
SELECT pg_temp.why('flexible-2');
SELECT * FROM pg_temp.pass();
SELECT a.attempt, a.service_environment, a.instance_type, a.outcome FROM fairshare.job_attempts a
  JOIN fairshare.jobs j USING (job_id) WHERE j.job_name = 'flexible-2' ORDER BY a.attempt;

-- A job bigger than anything can hold stays RUNNABLE, says so, and does not
-- block the jobs behind it.
SELECT pg_temp.submit('gpu', NULL, 'too-big', 200, 0, ARRAY['ml.p5.48xlarge', 'ml.p4d.24xlarge']);
SELECT pg_temp.submit('gpu', NULL, 'small', 1, 0, ARRAY['ml.p4d.24xlarge']);
SELECT * FROM pg_temp.pass();
SELECT job_name, status, status_reason FROM fairshare.jobs WHERE job_name = 'too-big';

-- A dry run decides and changes nothing (it does not take new jobs in either).
SELECT pg_temp.submit('gpu', NULL, 'dry', 1, 0, ARRAY['ml.p4d.24xlarge']);
SELECT count(*) AS decisions FROM fairshare.schedule(true);
UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_name = 'dry';
SELECT j.job_name, s.action, s.service_environment FROM fairshare.schedule(true) s JOIN fairshare.jobs j USING (job_id);
SELECT job_name, status FROM fairshare.jobs WHERE job_name = 'dry';

-------------------------------------------------------------------------------
-- 7. Beyond the rules: room held for a starving job (docs/scheduling.md) is back-filled
-- by a job whose time limit (StoppingCondition.MaxRuntimeInSeconds, plus
-- fairshare.backfill_allowance) ends before that room is complete -- by the
-- running jobs' time limits -- and, as far as the jobs ending by then give
-- back more than the starving job needs, by a job of any length.
-------------------------------------------------------------------------------
SELECT pg_temp.forget_jobs();
-- submit_limited(queue, name, instances, MaxRuntimeInSeconds): one job with a time limit.
CREATE FUNCTION pg_temp.submit_limited(queue text, name text, n integer, seconds integer) RETURNS bigint
LANGUAGE sql AS $$
	INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES (name, queue, jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
		'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
		'ResourceConfig', jsonb_build_object('InstanceType', 'ml.p4d.24xlarge', 'InstanceCount', n),
		'StoppingCondition', jsonb_build_object('MaxRuntimeInSeconds', seconds)))
	RETURNING job_id
$$;
INSERT INTO fairshare.service_environments (name) VALUES ('bf');
INSERT INTO fairshare.capacity_limits VALUES ('bf', 'NUM_INSTANCES', 11);
INSERT INTO fairshare.job_queues (name) VALUES ('bf-queue');
INSERT INTO fairshare.queue_environments VALUES ('bf-queue', 'bf', 1);
SET fairshare.starvation_seconds = 1;
-- A (6) and B (3) run for an hour at most; big (10) waits, past starvation_seconds.
SELECT pg_temp.submit_limited('bf-queue', 'A', 6, 3600) > 0 AS a, pg_temp.submit_limited('bf-queue', 'B', 3, 3600) > 0 AS b;
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT pg_temp.submit_limited('bf-queue', 'big', 10, 3600) > 0 AS big;
SELECT * FROM pg_temp.pass();
SELECT pg_sleep(1.5);
-- A small job goes past it into a free instance: room is held for big.
SELECT pg_temp.submit_limited('bf-queue', 'small', 1, 600) > 0 AS small;
SELECT * FROM pg_temp.pass();
SELECT job_name, status, nomination_kind FROM fairshare.jobs WHERE job_name = 'big';
-- backfill_pass(): a pass, each back-fill's reason with the starving job's id
-- and the time in it masked, whether it names big, and how far ahead the time
-- is from now.
CREATE FUNCTION pg_temp.backfill_pass() RETURNS TABLE (job text, action text, reason text, names_big boolean, ahead interval)
LANGUAGE sql AS $$
	SELECT job, action,
		   regexp_replace(regexp_replace(reason, 'job [0-9]+', 'job big'), 'by [0-9]{4}-[^ ]+ [^ ,]+', 'by <time>'),
		   substring(reason from 'starving job ([0-9]+)')::bigint = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'big'),
		   date_trunc('minute', substring(reason from 'by ([0-9]{4}-[^ ]+ [^ ,]+)')::timestamptz - now() + interval '30 seconds')
	  FROM pg_temp.pass()
$$;
-- small is done; the two free instances are held for big, whose room is
-- complete once A and B are gone: at most an hour (+ 30 min for startup
-- and stop) after they started.  A and B give back nine by then, and big
-- needs only eight more than the one free: the other free instance may go
-- to a job of any length -- the first hour-long job.  Its reason says when
-- big's room is complete, an hour and a half from A's start.  The second
-- hour-long job waits for the room held.
SELECT pg_temp.sagemaker('small', 'Completed');
SELECT pg_temp.submit_limited('bf-queue', 'hour', 1, 3600) > 0 AS hour,
	   pg_temp.submit_limited('bf-queue', 'hour-2', 1, 3600) > 0 AS hour_2;
SELECT * FROM pg_temp.backfill_pass();
SELECT regexp_replace(pg_temp.why('hour-2'), 'job [0-9]+', 'job big', 'g') AS why;
-- A job of ten minutes (+ 30) is gone before A and B must be: it takes the
-- last free instance, and its reason says when its time limit ends it.
SELECT pg_temp.submit_limited('bf-queue', 'ten-minutes', 1, 600) > 0 AS ten_minutes;
SELECT * FROM pg_temp.backfill_pass();
-- explain() tells the same.
SELECT job_name, regexp_replace(regexp_replace(fairshare.explain(job_id)->>'status_reason', 'job [0-9]+', 'job big'),
					  'by [0-9]{4}-[^ ]+ [^ ,]+', 'by <time>') AS explained
  FROM fairshare.jobs WHERE job_name IN ('hour', 'ten-minutes') ORDER BY job_name;
-- With fairshare.backfill_allowance = -1, time limits are not used: nothing
-- takes the held room.
SELECT pg_temp.sagemaker('ten-minutes', 'Completed');
SELECT pg_temp.sagemaker('hour', 'Completed');
SET fairshare.backfill_allowance = -1;
SELECT pg_temp.submit_limited('bf-queue', 'ten-minutes-2', 1, 600) > 0 AS ten_minutes_2;
SELECT * FROM pg_temp.pass();
SELECT job_name, status FROM fairshare.jobs WHERE job_name IN ('big', 'hour-2', 'ten-minutes-2') ORDER BY job_name;
RESET fairshare.backfill_allowance;
RESET fairshare.starvation_seconds;

-------------------------------------------------------------------------------
-- Preemption that costs little (docs/preemption.md): among victims the rules leave
-- equal, the one that loses least work goes first.  A job whose request has
-- CheckpointConfig loses only what it trained since its last checkpoint
-- (one every fairshare.checkpoint_interval, counted from when SageMaker
-- said Training); one without loses all it ran.  Borrower runs two jobs of
-- 2 instances placed together, the one with CheckpointConfig first (the
-- old order, most recently started then the higher job_id, took the other);
-- Owner reclaims 2.
-------------------------------------------------------------------------------
SET fairshare.preemption_min_runtime = 0;
SET fairshare.checkpoint_interval = 1;
-- checkpoint_jobs(name, queue_interval): borrow_world NAME of 4 instances,
-- its queue's checkpoint_interval set, and Borrower's NAME-saves (with
-- CheckpointConfig) and NAME-none, 2 instances each.
CREATE FUNCTION pg_temp.checkpoint_jobs(name text, queue_interval interval) RETURNS void
LANGUAGE sql AS $$
	SELECT pg_temp.borrow_world(name, 4);
	UPDATE fairshare.job_queues SET checkpoint_interval = queue_interval WHERE job_queues.name = checkpoint_jobs.name || '-queue';
	INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request, instance_count)
	SELECT checkpoint_jobs.name || '-' || kind, checkpoint_jobs.name || '-queue', 'Borrower',
		   jsonb_build_object('RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
			   'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
			   'ResourceConfig', jsonb_build_object('InstanceType', 'ml.p4d.24xlarge', 'InstanceCount', 2))
		   || CASE WHEN kind = 'saves' THEN jsonb_build_object('CheckpointConfig',
				  jsonb_build_object('S3Uri', 's3://bucket/checkpoints/' || checkpoint_jobs.name || '-saves')) ELSE '{}' END,
		   2
	  FROM unnest(ARRAY['saves', 'none']) kind;
$$;
SELECT pg_temp.checkpoint_jobs('ck', NULL);
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT pg_sleep(1.5);
SELECT pg_temp.submit('ck-queue', 'Owner', 'ck-owner', 2) > 0 AS submitted;
SELECT job, action, regexp_replace(reason, 'work: [0-9]+ seconds?', 'work: N seconds') AS reason
  FROM pg_temp.pass() WHERE action = 'PREEMPT';
RESET fairshare.checkpoint_interval;

-- A queue's own checkpoint_interval overrides the setting: with none
-- counted by the setting but one a second by the queue, the job with
-- CheckpointConfig is stopped; with one a second by the setting but none
-- by the queue, the other (the old order's choice) is.
CREATE FUNCTION pg_temp.checkpoint_world(name text, queue_interval interval) RETURNS bigint
LANGUAGE sql AS $$
	SELECT pg_temp.checkpoint_jobs(name, queue_interval);
	SELECT count(*) FROM fairshare.schedule();
	SELECT pg_temp.all_training();
	SELECT pg_sleep(1.5);
	SELECT pg_temp.submit(name || '-queue', 'Owner', name || '-owner', 2);
$$;
SET fairshare.checkpoint_interval = 0;
SELECT pg_temp.checkpoint_world('cq', '1 second') > 0 AS submitted;
SELECT job, action, regexp_replace(reason, 'work: [0-9]+ seconds?', 'work: N seconds') AS reason
  FROM pg_temp.pass() WHERE action = 'PREEMPT';
SET fairshare.checkpoint_interval = 1;
SELECT pg_temp.checkpoint_world('cz', '0') > 0 AS submitted;
SELECT job, action, regexp_replace(reason, 'work: [0-9]+ seconds?', 'work: N seconds') AS reason
  FROM pg_temp.pass() WHERE action = 'PREEMPT';
RESET fairshare.checkpoint_interval;
SELECT public.regress_try($$UPDATE fairshare.job_queues SET checkpoint_interval = '8 days' WHERE name = 'cz-queue'$$);
SELECT public.regress_try($$UPDATE fairshare.job_queues SET checkpoint_interval = '-1 second' WHERE name = 'cz-queue'$$);
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- Young jobs are not spared by default (docs/preemption.md, 'Young jobs are
-- not spared'): Borrower runs a job placed an hour ago and one placed just
-- now, neither with CheckpointConfig; Owner reclaims 2.  By default the
-- young one, which loses least, is stopped; with preemption_min_runtime
-- '5min' it is spared and the old one loses its hour.
-------------------------------------------------------------------------------
CREATE FUNCTION pg_temp.young_and_old(name text) RETURNS bigint LANGUAGE sql AS $$
	SELECT pg_temp.borrow_world(name, 4);
	SELECT pg_temp.borrowers_training(name, 2, 2);
	SET LOCAL session_replication_role = replica;
	UPDATE fairshare.jobs SET started_at = now() - interval '1 hour' WHERE job_name = name || '-b1';
	SET LOCAL session_replication_role = origin;
	SELECT pg_temp.submit(name || '-queue', 'Owner', name || '-owner', 2);
$$;
SELECT pg_temp.young_and_old('yg') > 0 AS submitted;
SELECT job, action, reason FROM pg_temp.pass() WHERE action = 'PREEMPT';
SELECT pg_temp.young_and_old('yo') > 0 AS submitted;
SET fairshare.preemption_min_runtime = '5min';
SELECT job, action, reason FROM pg_temp.pass() WHERE action = 'PREEMPT';
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- fairshare.reclaim_wait (docs/preemption.md): a reclaim that victims could
-- make room for first waits, nominated and holding the room that frees by
-- itself; once it has waited it preempts what is still short.  Borrower
-- holds all 4 instances in two jobs; Owner asks for 2.  Then
-- fairshare.checkpoint_on_stop: the victim with CheckpointConfig is taken
-- to write a last checkpoint, and to lose only its startup.
-------------------------------------------------------------------------------
SET fairshare.preemption_min_runtime = 0;
SET fairshare.reclaim_wait = 3600;
SELECT pg_temp.checkpoint_jobs('rw', NULL);
SELECT * FROM pg_temp.pass();
SELECT pg_temp.all_training();
SELECT pg_temp.submit('rw-queue', 'Owner', 'rw-owner', 2) > 0 AS submitted;
-- it waits: nominated, nothing preempted
SELECT job, action, reason FROM pg_temp.pass();
SELECT job_name, status, nomination_kind, stop_kind FROM fairshare.jobs
 WHERE job_queue = 'rw-queue' ORDER BY job_name;
SELECT status_reason FROM fairshare.jobs WHERE job_name = 'rw-owner';
-- a later pass keeps the nomination while the wait lasts
SELECT job, action, reason FROM pg_temp.pass();
-- it has waited: it reclaims the 2 still short, from the job that loses least
SET fairshare.reclaim_wait = 1;
SET fairshare.checkpoint_on_stop = on;
SELECT pg_sleep(1.1);
SELECT job, action, regexp_replace(reason, 'work: [0-9]+ seconds?', 'work: N seconds') AS reason
  FROM pg_temp.pass();
SELECT job_name, status, nomination_kind, stop_kind FROM fairshare.jobs
 WHERE job_queue = 'rw-queue' ORDER BY job_name;
RESET fairshare.checkpoint_on_stop;
RESET fairshare.reclaim_wait;
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- A reclaim deeper than a share's head: a pass loads the first 64 waiting
-- jobs of each share, and its nominated jobs besides.  Borrower holds 100
-- instances in jobs of one; Owner's 80 jobs of one reclaim all 80 in one
-- call (a round loads deeper once every loaded job is nominated), and the
-- next call, with those 80 nominated, has nothing left to reclaim for.
-------------------------------------------------------------------------------
SET fairshare.preemption_min_runtime = 0;
SELECT pg_temp.borrow_world('deep', 100);
SELECT pg_temp.borrowers_training('deep', 100, 1) AS placed;
SELECT count(pg_temp.submit('deep-queue', 'Owner', 'deep-o' || i, 1)) AS owners FROM generate_series(1, 80) i;
SELECT action, count(*) FROM fairshare.schedule() GROUP BY 1;
SELECT nomination_kind, count(*) FROM fairshare.jobs WHERE quota_share = 'Owner' GROUP BY 1;
SELECT count(*) AS decisions FROM fairshare.schedule();
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- A bounded pass, fairshare.schedule(dry_run, max_jobs), as the dispatcher
-- runs them (docs/scheduling.md, 'A pass as implemented'): it writes the
-- core's decisions in their order up to max_jobs placed or preempted jobs,
-- a preemption's victims together, and leaves the rest to the next pass.
-- Borrower holds all 10 instances in five jobs of 2; Owner's two jobs of 4
-- have waited their reclaim_wait, nominated.  A pass drops both waited
-- nominations first and then reclaims for each: cut after the first
-- reclaim, the second job's drop is not written, so the next pass goes on
-- with its reclaim rather than starting its wait again.
-------------------------------------------------------------------------------
SET fairshare.preemption_min_runtime = 0;
SET fairshare.reclaim_wait = 3600;
SELECT pg_temp.borrow_world('bp', 10);
SELECT pg_temp.borrowers_training('bp', 5, 2) AS placed;
SELECT pg_temp.submit('bp-queue', 'Owner', 'bp-o1', 4) > 0 AND pg_temp.submit('bp-queue', 'Owner', 'bp-o2', 4) > 0 AS submitted;
SELECT job, action FROM pg_temp.pass() ORDER BY job;
SELECT job_name, nomination_kind FROM fairshare.jobs WHERE job_name LIKE 'bp-o%' ORDER BY job_name;
SET fairshare.reclaim_wait = 1;
SELECT pg_sleep(1.1);
-- max_jobs must be at least 1
SELECT count(*) FROM fairshare.schedule(false, 0);
-- a dry run shows the same cut: one reclaim of two victims, of four in all
SELECT count(*) AS limited, (SELECT count(*) FROM fairshare.schedule(true)) AS whole
  FROM fairshare.schedule(true, 1);
-- bp-o1's reclaim: both its victims, past max_jobs 1; bp-o2's is left
SELECT action, count(*) FROM fairshare.schedule(false, 1) GROUP BY 1;
SELECT j.job_name AS victim, p.job_name AS preempted_for
  FROM fairshare.jobs j JOIN fairshare.jobs p ON p.job_id = j.preempted_for
 WHERE j.stop_kind IS NOT NULL ORDER BY 1;
-- bp-o2 is still nominated since its wait: its nomination was not dropped
SELECT job_name, nomination_kind, nominated_at < now() - interval '1 second' AS waited
  FROM fairshare.jobs WHERE job_name LIKE 'bp-o%' ORDER BY job_name;
-- the next pass reclaims for bp-o2 at once
SELECT action, count(*) FROM fairshare.schedule(false, 1) GROUP BY 1;
SELECT j.job_name AS victim, p.job_name AS preempted_for
  FROM fairshare.jobs j JOIN fairshare.jobs p ON p.job_id = j.preempted_for
 WHERE j.stop_kind IS NOT NULL ORDER BY 1;
-- the victims stop: max_jobs 1 places bp-o1 and leaves bp-o2, still
-- nominated, to the next pass
SELECT count(*) AS stopped FROM pg_temp.stops_finish();
SELECT j.job_name, s.action FROM fairshare.schedule(false, 1) s JOIN fairshare.jobs j USING (job_id);
SELECT job_name, status, nomination_kind FROM fairshare.jobs WHERE job_name LIKE 'bp-o%' ORDER BY job_name;
SELECT j.job_name, s.action FROM fairshare.schedule(false, 1) s JOIN fairshare.jobs j USING (job_id);
RESET fairshare.reclaim_wait;
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- A bounded pass whose first round spent half its limit or more ends there,
-- with work left, rather than read the world again for a second round (that
-- costs as much as the next pass).  200 fair shares wait with one job each
-- and share rr-big with 300, on room for all: a pass loads each share's
-- head (at 200 shares, about 80 jobs of rr-big), places what it loaded and
-- stops short of max_jobs 300.  The next pass's first round places less
-- than half, so it goes on deeper into rr-big and takes in the rest.
-------------------------------------------------------------------------------
SELECT pg_temp.fair_world('rr', 1000);
SELECT count(pg_temp.submit('rr-queue', 'rr-s' || i, 'rr-s' || i, 1)) AS small FROM generate_series(1, 200) i;
SELECT count(pg_temp.submit('rr-queue', 'rr-big', 'rr-big' || i, 1)) AS big FROM generate_series(1, 300) i;
CREATE TEMP TABLE rr_passes AS SELECT 1 AS pass, count(*) AS placed FROM fairshare.schedule(false, 300);
INSERT INTO rr_passes SELECT 2, count(*) FROM fairshare.schedule(false, 300);
SELECT placed >= 150 AND placed < 300 AS first_pass_stopped_short FROM rr_passes WHERE pass = 1;
SELECT sum(placed) AS placed_by_both FROM rr_passes;
SELECT count(*) FILTER (WHERE status = 'RUNNABLE') AS waiting FROM fairshare.jobs WHERE job_queue = 'rr-queue';

-------------------------------------------------------------------------------
-- A reclaim spends max_jobs on its victims and on the job it is for, whose
-- nomination is written with them: each of Owner's four jobs of one
-- instance reclaims one borrower, so max_jobs 4 covers two reclaims (two
-- victims, two nominations) and leaves two for the next pass.
-------------------------------------------------------------------------------
SET fairshare.preemption_min_runtime = 0;
SELECT pg_temp.borrow_world('rc', 6);
SELECT pg_temp.borrowers_training('rc', 6, 1) AS placed;
SELECT count(pg_temp.submit('rc-queue', 'Owner', 'rc-o' || i, 1)) AS owners FROM generate_series(1, 4) i;
SELECT action, count(*) FROM fairshare.schedule(false, 4) GROUP BY 1;
SELECT count(*) FILTER (WHERE nomination_kind = 'PREEMPTION') AS nominated FROM fairshare.jobs WHERE quota_share = 'Owner';
SELECT action, count(*) FROM fairshare.schedule(false, 4) GROUP BY 1;
SELECT count(*) FILTER (WHERE nomination_kind = 'PREEMPTION') AS nominated FROM fairshare.jobs WHERE quota_share = 'Owner';
RESET fairshare.preemption_min_runtime;

-------------------------------------------------------------------------------
-- At 1,000 fair shares a bounded pass loads 4 jobs of each (4,096 / shares;
-- quota shares, and schedule() without a limit, keep 16): each pass gives
-- the next job to the share with the least usage, so many shares take one
-- or two each.  1,000 shares wait with 6 jobs of one instance, on room for
-- all: max_jobs 5,000 places the 4 of each share it loaded and stops where
-- the first share's fifth would be next (4,000; with 16 loaded it placed
-- 5,000), having spent more than half; the next pass places the rest.
-------------------------------------------------------------------------------
SELECT pg_temp.fair_world('fh', 10000);
SELECT count(pg_temp.submit('fh-queue', 'fh-s' || s, 'fh-' || s || '-' || i, 1))
  FROM generate_series(1, 1000) s, generate_series(1, 6) i;
SELECT count(*) AS placed FROM fairshare.schedule(false, 5000);
SELECT count(DISTINCT share_identifier) AS shares, max(n) AS most, min(n) AS least
  FROM (SELECT share_identifier, count(*) n FROM fairshare.jobs
		 WHERE job_queue = 'fh-queue' AND status = 'SCHEDULED' GROUP BY 1) p;
SELECT count(*) AS placed FROM fairshare.schedule(false, 5000);
SELECT count(*) FILTER (WHERE status = 'RUNNABLE') AS waiting FROM fairshare.jobs WHERE job_queue = 'fh-queue';

-------------------------------------------------------------------------------
-- A bounded pass reads a head only for the fair shares its turn serves
-- first; the others keep the first job that the skip scan finding the
-- shares lands on.  200 fair shares wait with 6 jobs of one instance, on
-- room for all.  The 190 first by name have used 50 instances, the last 10
-- none, so the last 10 are served first.  max_jobs 30 reads heads for 64
-- shares (at least 64, or max_jobs): those 10 and 54 others.  The pass
-- places 3 jobs of each of the 10 in one round.  Had it ranked the shares
-- by name, the 10 would have had one job each loaded: the turn would have
-- stopped after 10 and read the world again.  The indexes' counters show
-- what was read.
-------------------------------------------------------------------------------
SELECT pg_temp.fair_world('ff', 10000);
UPDATE fairshare.scheduling_policies SET share_decay_seconds = 3600 WHERE name = 'ff-fair';
SELECT count(pg_temp.submit('ff-queue', 'ff-s' || lpad(s::text, 3, '0'), 'ff-' || s || '-' || i, 1))
  FROM generate_series(1, 200) s, generate_series(1, 6) i;
INSERT INTO fairshare.share_usage (job_queue, share_identifier, usage, updated_at)
	SELECT 'ff-queue', 'ff-s' || lpad(s::text, 3, '0'), 50, now() FROM generate_series(1, 190) s;
-- taken in while the environment is off (a bounded pass takes in max_jobs)
UPDATE fairshare.service_environments SET state = 'DISABLED' WHERE name = 'ff';
SELECT count(*) AS placed FROM fairshare.schedule();
UPDATE fairshare.service_environments SET state = 'ENABLED' WHERE name = 'ff';
ANALYZE fairshare.jobs;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE ff_before AS SELECT sum(idx_scan) AS probes FROM pg_stat_user_indexes
 WHERE indexrelname IN ('jobs_runnable_fair_idx', 'jobs_runnable_idx');
SELECT count(*) AS placed FROM fairshare.schedule(false, 30);
SELECT pg_stat_force_next_flush();
-- 201 probes find the 200 shares and 64 read heads, whichever of the two
-- indexes the planner takes, and the pass's other reads take a few; when
-- every share's head was read, 401 and those few
SELECT i.probes - b.probes BETWEEN 201 + 64 AND 201 + 64 + 16 AS heads_of_64_shares
  FROM (SELECT sum(idx_scan) AS probes FROM pg_stat_user_indexes
		 WHERE indexrelname IN ('jobs_runnable_fair_idx', 'jobs_runnable_idx')) i, ff_before b;
SELECT share_identifier, count(*) AS placed FROM fairshare.jobs
 WHERE job_queue = 'ff-queue' AND status = 'SCHEDULED' GROUP BY 1 ORDER BY 1;


-- Jobs that can never fit do not take the places of the jobs behind them.
-- A FIFO queue with 3,000 of them at its front, far more than a head holds,
-- places the job behind them in one pass.
SELECT pg_temp.queue_world('nf', 8, NULL);
INSERT INTO fairshare.job_queues (name, priority) VALUES ('nf-low', 1);
INSERT INTO fairshare.queue_environments VALUES ('nf-low', 'nf', 1);
SELECT count(pg_temp.submit('nf-queue', NULL, 'nf-big-' || i, 9)) AS never_fit FROM generate_series(1, 3000) i;
SELECT pg_temp.submit('nf-queue', NULL, 'nf-small', 8) > 0 AS behind_them;
SELECT job, action FROM pg_temp.pass() WHERE job NOT LIKE 'nf-big-%';
SELECT count(*) AS said_misconfigured FROM fairshare.jobs
 WHERE job_name LIKE 'nf-big-%' AND status_reason LIKE 'MISCONFIGURATION:%';
-- Having met them, this backend (as the dispatcher's) reads past them from
-- the start of its next passes: a new job behind them goes before a job of
-- the lower queue that arrives with it, in a bounded pass as the
-- dispatcher runs it.
SELECT pg_temp.sagemaker('nf-small', 'Completed', 'Completed');
SELECT pg_temp.submit('nf-queue', NULL, 'nf-small-2', 8) > 0 AS behind_them;
SELECT pg_temp.submit('nf-low', NULL, 'nf-low-1', 8) > 0 AS lower_queue;
SELECT j.job_name, s.action FROM fairshare.schedule(false, 256) s JOIN fairshare.jobs j USING (job_id)
 WHERE j.job_name NOT LIKE 'nf-big-%';
SELECT job_name, status FROM fairshare.jobs WHERE job_name IN ('nf-small-2', 'nf-low-1') ORDER BY 1;

-- The same behind a job that waits (it fits the environment, not now):
-- the pass still reads past the 3,000 in its own next rounds.
SELECT pg_temp.queue_world('nfw', 8, NULL);
SELECT pg_temp.submit('nfw-queue', NULL, 'nfw-filler', 4) > 0 AS filler;
SELECT count(*) AS placed FROM fairshare.schedule(false, 256);
SELECT pg_temp.submit('nfw-queue', NULL, 'nfw-waits', 8) > 0 AS waits;
SELECT count(pg_temp.submit('nfw-queue', NULL, 'nfw-big-' || i, 9)) AS never_fit FROM generate_series(1, 3000) i;
SELECT pg_temp.submit('nfw-queue', NULL, 'nfw-small', 1) > 0 AS behind_them;
SELECT job, action FROM pg_temp.pass() WHERE job NOT LIKE 'nfw-big-%';

-- A bounded pass reads a head only for the fair shares its turn serves
-- first (256 here), the first job of the others.  A share of those whose
-- first job waits (it fits the environment, not now) is read a head by the
-- pass's next round, and its job behind may back-fill.
SELECT pg_temp.fair_world('fo', 8);
INSERT INTO fairshare.job_queues (name, priority) VALUES ('fo-fill', 200);
INSERT INTO fairshare.queue_environments VALUES ('fo-fill', 'fo', 1);
SELECT pg_temp.submit('fo-fill', NULL, 'fo-filler', 4) > 0 AS filler;
SELECT count(*) AS placed FROM fairshare.schedule(false, 256);
SELECT count(pg_temp.submit('fo-queue', 's' || lpad(i::text, 3, '0'), 'fo-big-' || i, 8)) AS shares
  FROM generate_series(1, 256) i;
SELECT pg_temp.submit('fo-queue', 'zz', 'fo-zz-big', 8) > 0 AS zz_big;
SELECT pg_temp.submit('fo-queue', 'zz', 'fo-zz-small', 1) > 0 AS zz_small;
SELECT count(*) AS decided FROM fairshare.schedule(false, 256);	-- takes in 256 of the 258
SELECT j.job_name, s.action FROM fairshare.schedule(false, 256) s JOIN fairshare.jobs j USING (job_id);

-- A bounded pass back-fills as deep as any pass (64 jobs into a share),
-- whatever its budget: 20 jobs that do not fit now (they fit the
-- environment) do not hide the small job behind them from passes of 16.
SELECT pg_temp.queue_world('bf16', 8, NULL);
SELECT pg_temp.submit('bf16-queue', NULL, 'bf16-filler', 4) > 0 AS filler;
SELECT count(*) AS placed FROM fairshare.schedule(false, 16);
SELECT count(pg_temp.submit('bf16-queue', NULL, 'bf16-big-' || i, 8)) AS waiting FROM generate_series(1, 20) i;
SELECT pg_temp.submit('bf16-queue', NULL, 'bf16-small', 1) > 0 AS behind_them;
SELECT count(*) AS decided FROM fairshare.schedule(false, 16);	-- takes in 16 of the 21
SELECT j.job_name, s.action FROM fairshare.schedule(false, 16) s JOIN fairshare.jobs j USING (job_id);
SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
