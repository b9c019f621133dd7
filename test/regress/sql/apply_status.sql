-- fairshare.apply_status(): SageMaker DescribeTrainingJob answers applied to
-- jobs — state mapping, retries and evaluate_on_exit, capacity fallback,
-- preemption, terminate and timeout outcomes, stale answers.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
-- A fixed installation id, so that training job names read the same every run.
UPDATE fairshare.installation SET installation_id = '5e7e57ed-0000-4000-8000-000000000001';
RESET client_min_messages;
\set SHOW_CONTEXT never

INSERT INTO fairshare.service_environments (name) VALUES ('p4'), ('p5');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100), ('p5', 'ml.p5.48xlarge', 10);
INSERT INTO fairshare.job_queues (name) VALUES ('fifo');
INSERT INTO fairshare.queue_environments VALUES ('fifo', 'p5', 1), ('fifo', 'p4', 2);

CREATE FUNCTION pg_temp.submit(name text, retries integer DEFAULT 1, on_exit jsonb DEFAULT NULL,
							   preemption_retries integer DEFAULT NULL) RETURNS bigint LANGUAGE sql AS $$
	INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types, retry_attempts,
								evaluate_on_exit, preemption_retries)
	VALUES (name, 'fifo', '{"RoleArn": "arn:aws:iam::1:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
							"ResourceConfig": {"InstanceType": "ml.p5.48xlarge", "InstanceCount": 2}}',
			'{ml.p5.48xlarge,ml.p4d.24xlarge}', retries, on_exit, preemption_retries)
	RETURNING job_id
$$;
-- What a pass would do: make the job RUNNABLE once and place it.
CREATE FUNCTION pg_temp.place(id bigint, env text DEFAULT 'p5', type text DEFAULT 'ml.p5.48xlarge')
RETURNS text LANGUAGE sql AS $$
	UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_id = id AND status = 'SUBMITTED';
	UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = env, instance_type = type
	 WHERE job_id = id RETURNING training_job_name
$$;
-- A DescribeTrainingJob answer for the job's current attempt.
CREATE FUNCTION pg_temp.answer(id bigint, sm_status text, secondary text DEFAULT NULL, failure text DEFAULT NULL)
RETURNS fairshare.job_status LANGUAGE sql AS $$
	SELECT fairshare.apply_status(id, jsonb_strip_nulls(jsonb_build_object(
		'TrainingJobName', j.training_job_name,
		'TrainingJobArn', 'arn:aws:sagemaker:us-east-1:123456789012:training-job/' || j.training_job_name,
		'TrainingJobStatus', sm_status, 'SecondaryStatus', secondary, 'FailureReason', failure)))
	  FROM fairshare.jobs j WHERE j.job_id = id
$$;
CREATE FUNCTION pg_temp.show(id bigint) RETURNS TABLE (status fairshare.job_status, attempts int, preemptions int, status_reason text)
LANGUAGE sql AS $$ SELECT status, attempts, preemptions, status_reason FROM fairshare.jobs WHERE job_id = id $$;

-- The happy path: Starting keeps SCHEDULED, Downloading is STARTING,
-- Training is RUNNING, never backwards, Completed is SUCCEEDED.
SELECT pg_temp.submit('happy') AS j \gset
SELECT pg_temp.place(:j);
SELECT pg_temp.answer(:j, 'InProgress', 'Starting');
SELECT training_job_arn FROM fairshare.jobs WHERE job_id = :j;
SELECT pg_temp.answer(:j, 'InProgress', 'Downloading');
SELECT pg_temp.answer(:j, 'InProgress', 'Training');
SELECT pg_temp.answer(:j, 'InProgress', 'Downloading') AS not_backwards;
SELECT pg_temp.answer(:j, 'InProgress', 'Uploading');
SELECT pg_temp.answer(:j, 'Completed', 'Completed');
SELECT * FROM pg_temp.show(:j);
SELECT attempt, training_job_arn IS NOT NULL AS has_arn, outcome FROM fairshare.job_attempts WHERE job_id = :j;
SELECT old_status, new_status FROM fairshare.job_events WHERE job_id = :j ORDER BY event_id;
-- Straight to Training from SCHEDULED is fine too.
SELECT pg_temp.submit('fast') AS f \gset
SELECT pg_temp.place(:f);
SELECT pg_temp.answer(:f, 'InProgress', 'Training');

-- Retries: three attempts, each failure back to RUNNABLE until none are left.
SELECT pg_temp.submit('flaky', 3) AS r \gset
SELECT pg_temp.place(:r);
SELECT pg_temp.answer(:r, 'Failed', 'Failed', 'AlgorithmError: CUDA out of memory');
SELECT * FROM pg_temp.show(:r);
SELECT pg_temp.place(:r);
SELECT pg_temp.answer(:r, 'Failed', 'Failed', 'AlgorithmError: CUDA out of memory');
SELECT pg_temp.place(:r);
SELECT pg_temp.answer(:r, 'Failed', 'Failed', 'AlgorithmError: CUDA out of memory');
SELECT * FROM pg_temp.show(:r);
SELECT attempt, training_job_name, outcome FROM fairshare.job_attempts WHERE job_id = :r ORDER BY attempt;

-- evaluate_on_exit: the first matching rule decides; EXIT fails at once,
-- RETRY retries while attempts remain; no match retries.
SELECT pg_temp.submit('exit-on-client-error', 5,
	'[{"action": "EXIT", "on_status_reason": "Received status from SageMaker: ClientError*"},
	  {"action": "RETRY", "on_status_reason": "*"}]') AS e \gset
SELECT pg_temp.place(:e);
SELECT pg_temp.answer(:e, 'Failed', 'Failed', 'ClientError: bad S3 path');
SELECT * FROM pg_temp.show(:e);
SELECT pg_temp.submit('retry-only-internal', 2,
	'[{"action": "RETRY", "on_status_reason": "Received status from SageMaker: InternalServerError*"},
	  {"action": "exit", "on_status_reason": "*"}]') AS e2 \gset
SELECT pg_temp.place(:e2);
SELECT pg_temp.answer(:e2, 'Failed', 'Failed', 'InternalServerError: we encountered an internal error');
SELECT pg_temp.place(:e2);
SELECT pg_temp.answer(:e2, 'Failed', 'Failed', 'AlgorithmError: loss is NaN');
SELECT * FROM pg_temp.show(:e2);
SELECT fairshare.exit_action('[{"action": "EXIT", "on_status_reason": "Exact reason"}]', 'Exact reason') AS exact,
	   fairshare.exit_action('[{"action": "EXIT", "on_status_reason": "Exact reason"}]', 'Exact reason!') AS not_exact,
	   fairshare.exit_action(NULL, 'anything') AS no_rules;
-- Only a last * is a wildcard: one inside matches itself.
SELECT fairshare.exit_action('[{"action": "EXIT", "on_status_reason": "*Capacity*"}]', '*Capacity: none') AS literal_star,
	   fairshare.exit_action('[{"action": "EXIT", "on_status_reason": "*Capacity*"}]', 'No Capacity: none') AS not_a_wildcard;

-- A capacity failure spends no attempt: the pair backs off and the job is
-- RUNNABLE again, to land on its next (environment, type).
SELECT pg_temp.submit('needs-p5', 1) AS c \gset
SELECT pg_temp.place(:c);
SELECT pg_temp.answer(:c, 'InProgress', 'Starting');
SELECT pg_temp.answer(:c, 'Failed', 'Failed', 'CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type.');
SELECT * FROM pg_temp.show(:c);
SELECT service_environment, instance_type, until > now() + interval '9 minutes' AS backs_off_ten_minutes, reason
  FROM fairshare.capacity_backoffs WHERE job_id = :c;
SELECT pg_temp.place(:c, 'p4', 'ml.p4d.24xlarge');
SELECT pg_temp.answer(:c, 'Completed', 'Completed');
SELECT attempt, service_environment, instance_type, outcome FROM fairshare.job_attempts WHERE job_id = :c ORDER BY attempt;
-- ResourceLimitExceeded and InsufficientCapacity count as capacity too,
-- by how the reason begins: not further in, where the text may be the
-- job's own (an AlgorithmError's is the training script's, a ClientError
-- quotes the request's S3 URIs).
SELECT fairshare.is_capacity_failure('ResourceLimitExceeded: account-level service limit') AS limit_exceeded,
	   fairshare.is_capacity_failure('InsufficientCapacityError: no capacity') AS insufficient,
	   fairshare.is_capacity_failure('AlgorithmError: capacity of my model') AS algorithm,
	   fairshare.is_capacity_failure('AlgorithmError: ExecuteUserScriptError: my_cluster.InsufficientCapacityError: no GPUs left') AS script_says_so,
	   fairshare.is_capacity_failure('ClientError: Data download failed: s3://bucket/InsufficientCapacity/train.csv does not exist') AS request_says_so;

-- A preempted job goes back to RUNNABLE with preemptions + 1; past
-- preemption_retries it fails instead.
SELECT pg_temp.submit('victim', 1, NULL, 1) AS v \gset
SELECT pg_temp.place(:v);
SELECT pg_temp.answer(:v, 'InProgress', 'Training');
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_requested_at = now(), preempted_for = 99,
		stop_reason = 'Preempted for job 99 of ProdExp2, which reclaims its guarantee' WHERE job_id = :v;
SELECT pg_temp.answer(:v, 'Stopping', 'Stopping');
SELECT pg_temp.answer(:v, 'Stopped', 'Stopped');
SELECT * FROM pg_temp.show(:v);
SELECT pg_temp.place(:v);
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_requested_at = now(), preempted_for = 98,
		stop_reason = 'Preempted for job 98 (priority 90) of its own share' WHERE job_id = :v;
SELECT pg_temp.answer(:v, 'Stopped', 'Stopped');
SELECT * FROM pg_temp.show(:v);
SELECT attempt, outcome, status_reason FROM fairshare.job_attempts WHERE job_id = :v ORDER BY attempt;

-- Terminated and timed-out jobs fail once stopped; a stop nobody asked for
-- fails too, saying so.
SELECT pg_temp.submit('terminated') AS t \gset
SELECT pg_temp.place(:t);
SELECT pg_temp.answer(:t, 'InProgress', 'Training');
SELECT fairshare.terminate_job(:t, 'wrong hyperparameters');
SELECT pg_temp.answer(:t, 'Stopped', 'Stopped');
SELECT * FROM pg_temp.show(:t);
SELECT pg_temp.submit('slow') AS s \gset
SELECT pg_temp.place(:s);
UPDATE fairshare.jobs SET stop_kind = 'TIMEOUT', stop_requested_at = now(),
		stop_reason = 'Attempt timed out after 3600 seconds (attempt_duration_seconds)' WHERE job_id = :s;
SELECT pg_temp.answer(:s, 'Stopped', 'MaxRuntimeExceeded');
SELECT * FROM pg_temp.show(:s);
SELECT pg_temp.submit('console-stop') AS cs \gset
SELECT pg_temp.place(:cs);
SELECT pg_temp.answer(:cs, 'Stopped', 'MaxRuntimeExceeded');
SELECT * FROM pg_temp.show(:cs);
SELECT outcome FROM fairshare.job_attempts WHERE job_id IN (:t, :s, :cs) ORDER BY job_id;
-- A terminate or timeout is not forgotten when the attempt fails before
-- the stop takes effect (its create refused for lack of capacity, or the
-- training job failing on its own): no capacity fallback, no retry.
SELECT pg_temp.submit('terminated-in-flight', 3) AS tf \gset
SELECT pg_temp.place(:tf);
SELECT fairshare.terminate_job(:tf, 'wrong dataset');
SELECT pg_temp.answer(:tf, 'Failed', 'Failed', 'ResourceLimitExceeded: account quota for ml.p5.48xlarge');
SELECT * FROM pg_temp.show(:tf);
SELECT count(*) AS no_backoff FROM fairshare.capacity_backoffs WHERE job_id = :tf;
SELECT pg_temp.submit('timed-out-failing', 3) AS tof \gset
SELECT pg_temp.place(:tof);
SELECT pg_temp.answer(:tof, 'InProgress', 'Training');
UPDATE fairshare.jobs SET stop_kind = 'TIMEOUT', stop_requested_at = now(),
		stop_reason = 'Attempt timed out after 60 seconds (attempt_duration_seconds)' WHERE job_id = :tof;
SELECT pg_temp.answer(:tof, 'Failed', 'Failed', 'AlgorithmError: killed');
SELECT * FROM pg_temp.show(:tof);
SELECT outcome FROM fairshare.job_attempts WHERE job_id IN (:tf, :tof) ORDER BY job_id;

-- Stale answers change nothing: an earlier attempt's name, or a job no
-- longer placed.
SELECT pg_temp.submit('stale', 2) AS st \gset
SELECT pg_temp.place(:st);
SELECT pg_temp.answer(:st, 'Failed', 'Failed', 'AlgorithmError: x');
SELECT pg_temp.place(:st);
SELECT fairshare.apply_status(:st, jsonb_build_object('TrainingJobName', fairshare.training_job_name(:st, 1),
													   'TrainingJobStatus', 'Completed')) AS earlier_attempt;
SELECT fairshare.apply_status(:j, '{"TrainingJobStatus": "Failed", "FailureReason": "late"}') AS finished_job;
SELECT * FROM pg_temp.show(:st);

-- A training job of the same name made before the job was submitted (by
-- another installation with the same prefix, or by the job of this id in
-- the database a backup was taken of) is not adopted: the job fails,
-- saying why, and the stranger's outcome is never reported as its own.
SELECT pg_temp.submit('stranger') AS sg \gset
SELECT pg_temp.place(:sg);
SELECT fairshare.apply_status(:sg, jsonb_build_object('TrainingJobName', fairshare.training_job_name(:sg, 1),
	'TrainingJobStatus', 'Completed', 'CreationTime', extract(epoch FROM now() - interval '2 days'))) AS stranger;
SELECT status, training_job_arn IS NULL AS not_adopted,
	   status_reason LIKE 'training job name fairshare-%-1 is taken in SageMaker by a training job made before this job was submitted%' AS says_why
  FROM fairshare.jobs WHERE job_id = :sg;
-- One made after the placement (a create whose answer was lost) is ours.
SELECT pg_temp.submit('lost-answer') AS la \gset
SELECT pg_temp.place(:la);
SELECT fairshare.apply_status(:la, jsonb_build_object('TrainingJobName', fairshare.training_job_name(:la, 1),
	'TrainingJobArn', 'arn:aws:sagemaker:us-east-1:1:training-job/x', 'TrainingJobStatus', 'InProgress',
	'SecondaryStatus', 'Training', 'CreationTime', extract(epoch FROM now()))) AS adopted;
-- One made after the job was submitted but long before this placement (a
-- failover lost the placement that made it, and the job was placed again an
-- hour later) is this job's too.
CREATE FUNCTION public.placed_later() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW.created_at := NEW.created_at + interval '1 hour';
	RETURN NEW;
END
$$;
CREATE TRIGGER placed_later BEFORE INSERT ON fairshare.job_attempts FOR EACH ROW EXECUTE FUNCTION public.placed_later();
SELECT pg_temp.submit('placed-again') AS pa \gset
SELECT pg_temp.place(:pa);
DROP TRIGGER placed_later ON fairshare.job_attempts;
DROP FUNCTION public.placed_later();
SELECT created_at - (SELECT created_at FROM fairshare.jobs WHERE job_id = :pa) > interval '59 minutes' AS placed_an_hour_later
  FROM fairshare.job_attempts WHERE job_id = :pa;
SELECT fairshare.apply_status(:pa, jsonb_build_object('TrainingJobName', fairshare.training_job_name(:pa, 1),
	'TrainingJobArn', 'arn:aws:sagemaker:us-east-1:1:training-job/pa', 'TrainingJobStatus', 'InProgress',
	'SecondaryStatus', 'Training', 'CreationTime', extract(epoch FROM now() + interval '1 minute'))) AS placed_again;
SELECT status, training_job_arn IS NOT NULL AS adopted FROM fairshare.jobs WHERE job_id = :pa;
-- A CreationTime no timestamp holds (a broken or hostile endpoint) is no
-- answer to when it was made: the answer is applied as if it had none,
-- not refused at every poll.
SELECT pg_temp.submit('odd-time-1') AS ot1 \gset
SELECT pg_temp.submit('odd-time-2') AS ot2 \gset
SELECT pg_temp.place(:ot1), pg_temp.place(:ot2);
SELECT fairshare.apply_status(:ot1, '{"TrainingJobStatus": "InProgress", "SecondaryStatus": "Training",
	"TrainingJobArn": "arn:aws:sagemaker:us-east-1:1:training-job/ot1", "CreationTime": 1e400}') AS beyond_any_float;
SELECT fairshare.apply_status(:ot2, '{"TrainingJobStatus": "InProgress", "SecondaryStatus": "Training",
	"TrainingJobArn": "arn:aws:sagemaker:us-east-1:1:training-job/ot2", "CreationTime": 1e-400}') AS below_any_float;
SELECT job_name, status, training_job_arn FROM fairshare.jobs WHERE job_id IN (:ot1, :ot2) ORDER BY 1;

-- The CreateTrainingJob body the dispatcher sends: the request with the
-- attempt's name, the placement's type and count, tags (the job's and
-- fairshare's), and SageMaker's default StoppingCondition when the request
-- has none.
SELECT pg_temp.submit('body') AS bd \gset
SELECT pg_temp.place(:bd, 'p4', 'ml.p4d.24xlarge');
UPDATE fairshare.jobs SET status = 'RUNNING' WHERE job_id = :bd;
SELECT r ->> 'TrainingJobName' = fairshare.training_job_name(:bd, 1) AS named, r -> 'ResourceConfig' AS resources,
	   r -> 'StoppingCondition' AS stopping, jsonb_array_length(r -> 'Tags') AS tags, r ->> 'RoleArn' AS role
  FROM (SELECT fairshare.create_training_job_request(j) r FROM fairshare.jobs j WHERE job_id = :bd) s;
-- ... and its own StoppingCondition when it has one.
SELECT fairshare.create_training_job_request(jsonb_populate_record(j, jsonb_build_object('request',
		   j.request || '{"StoppingCondition": {"MaxRuntimeInSeconds": 7200}}'))) -> 'StoppingCondition' AS own_stopping
  FROM fairshare.jobs j WHERE job_id = :bd;
-- A key in both the request's Tags and the job's tags is sent once, with
-- the job's value: SageMaker refuses a key twice.
SELECT jsonb_agg(t ORDER BY n) FILTER (WHERE t ->> 'Key' NOT LIKE 'fairshare:%') AS tags_sent,
	   count(*) FILTER (WHERE t ->> 'Key' LIKE 'fairshare:%') AS fairshares_own
  FROM fairshare.jobs j,
	   jsonb_array_elements(fairshare.create_training_job_request(jsonb_populate_record(j, jsonb_build_object(
		   'request', j.request || '{"Tags": [{"Key": "team", "Value": "request"}, {"Key": "env", "Value": "dev"}]}',
		   'tags', '{"team": "job"}'::jsonb))) -> 'Tags') WITH ORDINALITY x (t, n)
 WHERE job_id = :bd;
-- Tags that are not a list (0.1.0 took them) go as they are, for SageMaker
-- to refuse that one job, rather than fail every create of the turn.
SELECT r -> 'Tags' -> 0 AS sent_as_it_was, jsonb_array_length(r -> 'Tags') AS with_fairshares_own
  FROM (SELECT fairshare.create_training_job_request(jsonb_populate_record(j, jsonb_build_object('request',
		   j.request || '{"Tags": {"team": "a"}}'))) r
		  FROM fairshare.jobs j WHERE job_id = :bd) s;

-- A preemption of an attempt that never reached SageMaker (what the
-- dispatcher calls _cancel_unsent for) costs nothing: back to RUNNABLE,
-- preemptions unchanged even with preemption_retries 0, outcome REQUEUED.
-- A terminate of one ends the job as a Stopped answer would; a stale name
-- or an attempt that has an ARN is not "unsent".
SELECT pg_temp.submit('unsent', 1, NULL, 0) AS un \gset
SELECT pg_temp.place(:un) AS first_name \gset
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_requested_at = now(), preempted_for = 97,
		stop_reason = 'Preempted for job 97 of ProdExp2, which reclaims its guarantee' WHERE job_id = :un;
SELECT fairshare._cancel_unsent(:un, :'first_name');
SELECT * FROM pg_temp.show(:un);
SELECT pg_temp.place(:un);
SELECT fairshare._cancel_unsent(:un, :'first_name') AS stale_name;
SELECT pg_temp.answer(:un, 'InProgress', 'Training');
UPDATE fairshare.jobs SET stop_kind = 'PREEMPT', stop_requested_at = now(), preempted_for = 97,
		stop_reason = 'Preempted for job 97 of ProdExp2, which reclaims its guarantee' WHERE job_id = :un;
SELECT fairshare._cancel_unsent(j.job_id, j.training_job_name) AS sent_one FROM fairshare.jobs j WHERE job_id = :un;
SELECT * FROM pg_temp.show(:un);
SELECT attempt, outcome FROM fairshare.job_attempts WHERE job_id = :un ORDER BY attempt;
SELECT pg_temp.submit('unsent-terminated') AS ut \gset
SELECT pg_temp.place(:ut) AS ut_name \gset
SELECT fairshare.terminate_job(:ut, 'not needed after all');
SELECT fairshare._cancel_unsent(:ut, :'ut_name');
SELECT * FROM pg_temp.show(:ut);
SELECT public.regress_try_hint('SELECT fairshare._cancel_unsent(424242, ''x'')');

-- Bad input.
SELECT public.regress_try_hint('SELECT fairshare.apply_status(1, ''[]'')');
SELECT public.regress_try_hint('SELECT fairshare.apply_status(1, ''{"TrainingJobStatus": "Exploded"}'')');
SELECT public.regress_try_hint('SELECT fairshare.apply_status(424242, ''{"TrainingJobStatus": "Completed"}'')');

SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
