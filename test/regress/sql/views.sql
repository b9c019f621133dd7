-- The dashboard views: what they show for the reference borrow-and-reclaim
-- scenario, a fair-share queue and a FIFO queue sharing an environment
-- with a NUM_INSTANCES limit; wait and run time percentiles, failures and
-- throughput by hour; and who may read them.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_obs_viewer, regress_obs_admin, regress_obs_submitter;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- Submit a job and make it RUNNABLE, as the first pass would.
CREATE FUNCTION pg_temp.submit(queue text, name text, n integer, itype text,
							   quota text DEFAULT NULL, share text DEFAULT NULL,
							   types text[] DEFAULT NULL, retries integer DEFAULT 1) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	id bigint;
BEGIN
	INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, share_identifier, request, instance_types,
								retry_attempts)
	VALUES (name, queue, quota, share,
			jsonb_build_object('RoleArn', 'arn:aws:iam::1:role/r',
							   'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://b/o'),
							   'ResourceConfig', jsonb_build_object('InstanceType', itype, 'InstanceCount', n)),
			coalesce(types, ARRAY[itype]), retries)
	RETURNING job_id INTO id;
	UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_id = id;
	RETURN id;
END
$$;
-- Place a RUNNABLE job and move it on to status.
CREATE FUNCTION pg_temp.run(id bigint, env text, itype text, status fairshare.job_status DEFAULT 'RUNNING')
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = env, instance_type = itype
	 WHERE job_id = id;
	IF status <> 'SCHEDULED' THEN
		UPDATE fairshare.jobs j SET status = run.status WHERE j.job_id = id;
	END IF;
END
$$;

-- Reference scenario 1: 100 x p4d; ProdExp1 (limit 60, LEND_AND_BORROW),
-- ProdExp2 (limit 40, LEND).
INSERT INTO fairshare.service_environments (name) VALUES ('p4'), ('mixed');
INSERT INTO fairshare.capacity_limits VALUES
	('p4', 'ml.p4d.24xlarge', 100),
	('mixed', 'NUM_INSTANCES', 10), ('mixed', 'ml.g5.xlarge', 4);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('quota', 'QUOTA_SHARE'), ('fair', 'FAIR_SHARE');
INSERT INTO fairshare.share_distribution VALUES ('fair', 'HIGHPRI', 1), ('fair', 'MIDPRI', 3), ('fair', 'team*', 5);
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES
	('p4-queue', 10, 'quota'), ('fair-queue', 5, 'fair'), ('fifo', 1, NULL);
INSERT INTO fairshare.queue_environments VALUES ('p4-queue', 'p4', 1), ('fair-queue', 'mixed', 1), ('fifo', 'mixed', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES
	('p4-queue', 'ProdExp1', 'LEND_AND_BORROW', -1), ('p4-queue', 'ProdExp2', 'LEND', NULL);
INSERT INTO fairshare.quota_share_limits VALUES
	('p4-queue', 'ProdExp1', 'ml.p4d.24xlarge', 60), ('p4-queue', 'ProdExp2', 'ml.p4d.24xlarge', 40);

-- ProdExp2 runs 25; ProdExp1 borrows up to 75 and has a backlog of two.
SELECT pg_temp.run(pg_temp.submit('p4-queue', 'e2-a', 25, 'ml.p4d.24xlarge', 'ProdExp2'), 'p4', 'ml.p4d.24xlarge');
SELECT pg_temp.run(pg_temp.submit('p4-queue', 'e1-' || i, 15, 'ml.p4d.24xlarge', 'ProdExp1'), 'p4', 'ml.p4d.24xlarge',
				   (ARRAY['RUNNING', 'RUNNING', 'RUNNING', 'STARTING', 'SCHEDULED'])[i]::fairshare.job_status)
  FROM generate_series(1, 5) i;
SELECT pg_temp.submit('p4-queue', 'e1-backlog-' || i, 15, 'ml.p4d.24xlarge', 'ProdExp1') IS NOT NULL AS submitted
  FROM generate_series(1, 2) i;

SELECT service_environment, capacity_unit, capacity, in_use, stopping, free, utilization, running_jobs,
	   waiting_jobs, waiting_instances, smallest_waiting_job
  FROM fairshare.environment_utilization WHERE service_environment = 'p4';
SELECT quota_share, strategy, capacity_unit, share_limit, max_share, held, borrowed, lent,
	   waiting_jobs, waiting_instances, guaranteed_waiting_jobs
  FROM fairshare.quota_share_status ORDER BY quota_share;

-- ProdExp2 submits 15 more: its guarantee is lent out, so the scheduler
-- preempts one of ProdExp1's jobs; while that stops it still counts.
SELECT pg_temp.submit('p4-queue', 'e2-b', 15, 'ml.p4d.24xlarge', 'ProdExp2') IS NOT NULL AS submitted;
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_reason = 'Preempted for job e2-b', stop_requested_at = now()
 WHERE job_name = 'e1-3';
SELECT service_environment, capacity_unit, capacity, in_use, stopping, free, utilization, running_jobs,
	   waiting_jobs, waiting_instances, smallest_waiting_job
  FROM fairshare.environment_utilization WHERE service_environment = 'p4';
SELECT quota_share, held, borrowed, lent, waiting_jobs, waiting_instances, guaranteed_waiting_jobs
  FROM fairshare.quota_share_status ORDER BY quota_share;

-- The preemption completes: ProdExp1 gives back 15 and the job waits again.
SELECT fairshare.apply_status(job_id, '{"TrainingJobStatus": "Stopped"}')
  FROM fairshare.jobs WHERE job_name = 'e1-3';
SELECT quota_share, held, borrowed, lent, waiting_jobs, guaranteed_waiting_jobs
  FROM fairshare.quota_share_status ORDER BY quota_share;
-- A shorter limit for ProdExp1's borrowing shows in max_share.
UPDATE fairshare.quota_shares SET borrow_limit = 50 WHERE name = 'ProdExp1';
SELECT quota_share, share_limit, max_share FROM fairshare.quota_share_status ORDER BY quota_share;

-- The mixed environment: 10 instances in total, at most 4 of them g5.xlarge;
-- g5.2xlarge has no limit of its own, only the total.
SELECT pg_temp.run(pg_temp.submit('fair-queue', 'high', 2, 'ml.g5.xlarge', NULL, 'HIGHPRI'), 'mixed', 'ml.g5.xlarge');
SELECT pg_temp.run(pg_temp.submit('fair-queue', 'team', 3, 'ml.g5.2xlarge', NULL, 'team-a'), 'mixed', 'ml.g5.2xlarge');
SELECT pg_temp.submit('fair-queue', 'mid', 2, 'ml.g5.xlarge', NULL, 'MIDPRI', '{ml.g5.xlarge,ml.g5.2xlarge}') IS NOT NULL AS submitted;
SELECT pg_temp.submit('fifo', 'big', 8, 'ml.g5.2xlarge') IS NOT NULL AS submitted;
INSERT INTO fairshare.share_usage VALUES ('fair-queue', 'HIGHPRI', 2.5, now());
SELECT service_environment, capacity_unit, capacity, in_use, free, utilization, running_jobs,
	   waiting_jobs, waiting_instances, smallest_waiting_job
  FROM fairshare.environment_utilization WHERE service_environment = 'mixed' ORDER BY capacity_unit;
SELECT job_queue, share_identifier, weight_factor, decayed_usage, usage_updated_at IS NOT NULL AS has_usage,
	   held, running_jobs, waiting_jobs, waiting_instances
  FROM fairshare.fair_share_status ORDER BY share_identifier;
-- A disabled queue places nothing, so its jobs are not demand for capacity.
UPDATE fairshare.job_queues SET state = 'DISABLED' WHERE name = 'fifo';
SELECT capacity_unit, waiting_jobs, waiting_instances
  FROM fairshare.environment_utilization WHERE service_environment = 'mixed' ORDER BY capacity_unit;
UPDATE fairshare.job_queues SET state = 'ENABLED' WHERE name = 'fifo';

SELECT job_queue, state, kind, submitted_jobs, pending_jobs, runnable_jobs, scheduled_jobs, starting_jobs,
	   running_jobs, instances_held, instances_waiting
  FROM fairshare.queue_status ORDER BY priority DESC;

-- Waits count from when a job last became RUNNABLE: the preempted job has
-- waited since its attempt stopped, not since its runnable_at.
UPDATE fairshare.jobs SET runnable_at = now() - interval '3 hours' WHERE job_name = 'e1-3';
UPDATE fairshare.job_attempts SET stopped_at = now() - interval '20 minutes'
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'e1-3');
UPDATE fairshare.jobs SET runnable_at = now() - interval '2 hours' WHERE job_name = 'big';
UPDATE fairshare.jobs SET runnable_at = now() - interval '10 minutes'
 WHERE status = 'RUNNABLE' AND job_name NOT IN ('e1-3', 'big');
SELECT job_queue, oldest_wait_seconds / 60 AS oldest_wait_minutes FROM fairshare.queue_status ORDER BY 1;
SELECT quota_share, oldest_wait_seconds / 60 AS oldest_wait_minutes FROM fairshare.quota_share_status ORDER BY 1;
SELECT capacity_unit, oldest_wait_seconds / 60 AS oldest_wait_minutes
  FROM fairshare.environment_utilization ORDER BY service_environment, capacity_unit;

------------------------------------------------------------------------------
-- Each attempt records the job's queue, share and priority, and since when
-- the job waited for it: runnable_at for the first, the end of the previous
-- attempt for a retry.
------------------------------------------------------------------------------
INSERT INTO fairshare.job_queues (name) VALUES ('checkq');
INSERT INTO fairshare.queue_environments VALUES ('checkq', 'mixed', 1);
DO $$
DECLARE
	id bigint := pg_temp.submit('checkq', 'requeued', 1, 'ml.g5.xlarge', retries => 2);
BEGIN
	PERFORM pg_temp.run(id, 'mixed', 'ml.g5.xlarge');
	PERFORM fairshare.apply_status(id, '{"TrainingJobStatus": "Failed", "FailureReason": "AlgorithmError: once"}');
	PERFORM pg_temp.run(id, 'mixed', 'ml.g5.xlarge');
END
$$;
SELECT j.job_name, a.attempt, a.job_queue, a.share, a.scheduling_priority,
	   a.queued_at = CASE WHEN a.attempt = 1 THEN j.runnable_at ELSE p.stopped_at END AS queued_at_as_expected
  FROM fairshare.job_attempts a
  JOIN fairshare.jobs j ON j.job_id = a.job_id
  LEFT JOIN fairshare.job_attempts p ON p.job_id = a.job_id AND p.attempt = a.attempt - 1
 WHERE j.job_name IN ('requeued', 'e2-a', 'high')
 ORDER BY a.job_id, a.attempt;
-- (a placed job cannot be deleted: it ends first)
UPDATE fairshare.jobs SET status = 'FAILED' WHERE job_name = 'requeued';
DELETE FROM fairshare.jobs WHERE job_name = 'requeued';
DELETE FROM fairshare.queue_environments WHERE job_queue = 'checkq';
DELETE FROM fairshare.job_queues WHERE name = 'checkq';

------------------------------------------------------------------------------
-- History: jobs that finished over the last few hours, on hour boundaries
-- so that the buckets are the same whenever the test runs.
------------------------------------------------------------------------------
CREATE TEMP TABLE base AS SELECT date_trunc('hour', now()) - interval '3 hours' AS t;

-- Ten FIFO jobs that waited 1 to 10 minutes and ran 10 to 100 minutes.
DO $$
DECLARE
	id bigint;
	b timestamptz := (SELECT t FROM base);
BEGIN
	FOR i IN 1..10 LOOP
		id := pg_temp.submit('fifo', 'done-' || i, 1, 'ml.g5.2xlarge');
		PERFORM pg_temp.run(id, 'mixed', 'ml.g5.2xlarge');
		UPDATE fairshare.jobs SET status = 'SUCCEEDED' WHERE job_id = id;
		UPDATE fairshare.jobs SET runnable_at = b, stopped_at = b + i * interval '11 minutes' WHERE job_id = id;
		UPDATE fairshare.job_attempts
		   SET queued_at = b, created_at = b + i * interval '1 minute', started_at = b + i * interval '1 minute',
			   stopped_at = b + i * interval '11 minutes'
		 WHERE job_id = id;
	END LOOP;
	-- A fair-share job whose first attempt failed after 5 minutes and whose
	-- retry succeeded after 30.
	id := pg_temp.submit('fair-queue', 'retried', 1, 'ml.g5.xlarge', NULL, 'MIDPRI', retries => 2);
	PERFORM pg_temp.run(id, 'mixed', 'ml.g5.xlarge');
	PERFORM fairshare.apply_status(id, '{"TrainingJobStatus": "Failed", "FailureReason": "AlgorithmError: boom"}');
	PERFORM pg_temp.run(id, 'mixed', 'ml.g5.xlarge');
	UPDATE fairshare.jobs SET status = 'SUCCEEDED' WHERE job_id = id;
	UPDATE fairshare.jobs SET runnable_at = b, stopped_at = b + interval '95 minutes' WHERE job_id = id;
	UPDATE fairshare.job_attempts SET queued_at = b, created_at = b + interval '2 minutes', started_at = b + interval '2 minutes',
			stopped_at = b + interval '7 minutes' WHERE job_id = id AND attempt = 1;
	UPDATE fairshare.job_attempts SET queued_at = b + interval '7 minutes', created_at = b + interval '65 minutes',
			started_at = b + interval '65 minutes', stopped_at = b + interval '95 minutes' WHERE job_id = id AND attempt = 2;
	-- A job that failed for good, and one preempted once, in the third hour.
	id := pg_temp.submit('fifo', 'broken', 2, 'ml.g5.2xlarge');
	PERFORM pg_temp.run(id, 'mixed', 'ml.g5.2xlarge');
	PERFORM fairshare.apply_status(id, '{"TrainingJobStatus": "Failed", "FailureReason": "ClientError: no data"}');
	UPDATE fairshare.jobs SET runnable_at = b, stopped_at = b + interval '130 minutes' WHERE job_id = id;
	UPDATE fairshare.job_attempts SET queued_at = b, created_at = b + interval '120 minutes', started_at = b + interval '121 minutes',
			stopped_at = b + interval '130 minutes' WHERE job_id = id;
	UPDATE fairshare.job_attempts SET created_at = b + interval '122 minutes', started_at = b + interval '123 minutes',
			stopped_at = b + interval '140 minutes'
	 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'e1-3');
END
$$;

-- (The jobs placed by this test itself waited a few milliseconds: left out.)
SELECT job_queue, share, scheduling_priority, jobs_placed, wait_p50_seconds, wait_p90_seconds,
	   round(wait_p99_seconds::numeric, 1) AS wait_p99_seconds, wait_max_seconds,
	   attempts_finished, run_p50_seconds, run_p90_seconds, round(run_p99_seconds::numeric, 1) AS run_p99_seconds,
	   run_max_seconds
  FROM fairshare.job_time_stats WHERE job_queue = 'fifo' OR share = 'MIDPRI' ORDER BY 1, 2;
-- Any window: only the first hour.
SELECT job_queue, share, jobs_placed, wait_max_seconds, attempts_finished, run_max_seconds
  FROM fairshare.job_time_stats((SELECT t FROM base), (SELECT t FROM base) + interval '1 hour')
 WHERE job_queue = 'fifo' OR share = 'MIDPRI' ORDER BY 1, 2;
SELECT public.regress_try($$SELECT * FROM fairshare.job_time_stats('2026-01-02 00:00Z', '2026-01-01 00:00Z')$$);

SELECT f.hour - b.t AS hour, job_queue, failed_jobs, failed_attempts, preemptions, capacity_failures, stopped_attempts
  FROM fairshare.failures_by_hour f, base b ORDER BY 1, 2;
SELECT f.hour - b.t AS hour, job_queue, succeeded_jobs, failed_jobs, attempts_finished, instance_hours
  FROM fairshare.throughput_by_hour f, base b ORDER BY 1, 2;
SELECT job_name, job_queue, share, failed_at - b.t AS failed_at, attempts, status_reason
  FROM fairshare.recent_failures, base b ORDER BY job_id;

-- Jobs older than the window are not counted.
UPDATE fairshare.jobs SET stopped_at = stopped_at - interval '2 days' WHERE job_name = 'broken';
UPDATE fairshare.job_attempts SET stopped_at = stopped_at - interval '2 days', created_at = created_at - interval '2 days'
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'broken');
SELECT count(*) AS recent_failures FROM fairshare.recent_failures;
SELECT sum(failed_jobs) AS failed_jobs, sum(failed_attempts) AS failed_attempts FROM fairshare.failures_by_hour;
-- ... though a window that reaches back that far finds them.
SELECT sum(failed_jobs) AS failed_jobs, sum(failed_attempts) AS failed_attempts
  FROM fairshare.failures_by_hour(now() - interval '3 days');

------------------------------------------------------------------------------
-- The views are cheap: current state reads only live jobs, history only the
-- window, through indexes (no sequential scan of fairshare.jobs).
------------------------------------------------------------------------------
SET enable_seqscan = off;	-- the tables are tiny here: make the planner show its index plan
CREATE FUNCTION pg_temp.seqscans(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	found text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
		IF line ~ 'Seq Scan on (jobs|job_attempts|job_events)\M' THEN
			found := found || substring(line FROM 'Seq Scan on \w+') || ' ';
		END IF;
	END LOOP;
	RETURN coalesce(nullif(found, ''), 'none');
END
$$;
-- (Each public view runs the internal view of the same name, as its owner.)
SELECT v, pg_temp.seqscans('SELECT * FROM fairshare.' || v) AS seq_scans
  FROM unnest(ARRAY['_environment_utilization', '_queue_status', '_quota_share_status',
					'_fair_share_status', '_recent_failures',
					'jobs WHERE job_name = ''control: no index on job_name''']) v;
RESET enable_seqscan;

------------------------------------------------------------------------------
-- lent when another queue shares the environment: the capacity no share's
-- limit covers is what the other queue holds, so the borrower's excess is
-- the lender's guarantee (the scheduler would reclaim it).
------------------------------------------------------------------------------
INSERT INTO fairshare.service_environments (name) VALUES ('shared');
INSERT INTO fairshare.capacity_limits VALUES ('shared', 'ml.p5.48xlarge', 100);
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES ('sq', 10, 'quota'), ('sfifo', 1, NULL);
INSERT INTO fairshare.queue_environments VALUES ('sq', 'shared', 1), ('sfifo', 'shared', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES
	('sq', 'A', 'LEND_AND_BORROW', -1), ('sq', 'B', 'LEND', NULL);
INSERT INTO fairshare.quota_share_limits VALUES ('sq', 'A', 'ml.p5.48xlarge', 40), ('sq', 'B', 'ml.p5.48xlarge', 40);
SELECT pg_temp.run(pg_temp.submit('sfifo', 'other-queue', 20, 'ml.p5.48xlarge'), 'shared', 'ml.p5.48xlarge');
SELECT pg_temp.run(pg_temp.submit('sq', 'a-' || i, 20, 'ml.p5.48xlarge', 'A'), 'shared', 'ml.p5.48xlarge')
  FROM generate_series(1, 3) i;
SELECT pg_temp.run(pg_temp.submit('sq', 'b-1', 20, 'ml.p5.48xlarge', 'B'), 'shared', 'ml.p5.48xlarge');
SELECT quota_share, share_limit, held, borrowed, lent FROM fairshare.quota_share_status
 WHERE job_queue = 'sq' ORDER BY quota_share;
SELECT pg_temp.submit('sq', 'b-2', 20, 'ml.p5.48xlarge', 'B') IS NOT NULL AS submitted;
SELECT action, reason LIKE '%reclaim the guaranteed capacity of quota share B%' AS reclaims_for_b
  FROM fairshare.schedule(true) WHERE service_environment = 'shared' OR action = 'PREEMPT';

------------------------------------------------------------------------------
-- Who may read them: viewers and admins, without any right on the tables;
-- not submitters (the views count every team's jobs).
------------------------------------------------------------------------------
CREATE ROLE regress_obs_viewer LOGIN IN ROLE fairshare_viewer;
CREATE ROLE regress_obs_admin LOGIN IN ROLE fairshare_admin;
CREATE ROLE regress_obs_submitter LOGIN IN ROLE fairshare_submitter;
\c - regress_obs_viewer
SELECT v, public.regress_try('SELECT * FROM fairshare.' || v) AS result
  FROM unnest(ARRAY['environment_utilization', 'queue_status', 'quota_share_status', 'fair_share_status',
					'job_time_stats', 'failures_by_hour', 'throughput_by_hour', 'recent_failures',
					'job_time_stats(now() - interval ''7 days'')', 'utilization_history', 'active_alerts',
					'jobs', 'job_attempts', 'job_events', '_waiting_jobs']) v;
SELECT sum(in_use) AS instances_in_use FROM fairshare.environment_utilization;
\c - regress_obs_admin
SELECT v, public.regress_try('SELECT * FROM fairshare.' || v) AS result
  FROM unnest(ARRAY['environment_utilization', 'quota_share_status', 'job_time_stats']) v;
\c - regress_obs_submitter
SELECT v, public.regress_try('SELECT * FROM fairshare.' || v) AS result
  FROM unnest(ARRAY['environment_utilization', 'quota_share_status', 'job_time_stats',
					'job_time_stats(now() - interval ''7 days'')']) v;
\c - postgres
DROP ROLE regress_obs_viewer, regress_obs_admin, regress_obs_submitter;
