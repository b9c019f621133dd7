-- Submitting jobs with INSERT: defaults taken from the request, and every
-- bad input rejected with its own message and SQLSTATE, writing nothing.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
-- A fixed installation id, so that training job names read the same every run.
UPDATE fairshare.installation SET installation_id = '5e7e57ed-0000-4000-8000-000000000001';
RESET client_min_messages;
\set SHOW_CONTEXT never

-- A SageMaker CreateTrainingJob body, with ResourceConfig replaced by rc.
CREATE FUNCTION pg_temp.req(rc jsonb DEFAULT '{"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 15, "VolumeSizeInGB": 100}')
RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object(
		'RoleArn', 'arn:aws:iam::123456789012:role/SageMakerRole',
		'AlgorithmSpecification', jsonb_build_object('TrainingImage', '123.dkr.ecr.us-east-1.amazonaws.com/train:1', 'TrainingInputMode', 'File'),
		'OutputDataConfig', jsonb_build_object('S3OutputPath', 's3://bucket/out'),
		'StoppingCondition', jsonb_build_object('MaxRuntimeInSeconds', 86400),
		'ResourceConfig', rc)
$$;

INSERT INTO fairshare.service_environments (name) VALUES ('p4'), ('p5');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 100), ('p5', 'NUM_INSTANCES', 16);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('fair', 'FAIR_SHARE'), ('quota', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('fifo', NULL), ('fair', 'fair'), ('quota', 'quota');
INSERT INTO fairshare.job_queues (name, state) VALUES ('paused', 'DISABLED');
INSERT INTO fairshare.queue_environments VALUES
	('fifo', 'p4', 1), ('fair', 'p4', 1), ('fair', 'p5', 2), ('quota', 'p4', 1), ('paused', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES ('quota', 'ProdExp1', 'LEND_AND_BORROW');

-- Good submissions.  instance_types and instance_count come from the request
-- unless given; the job starts SUBMITTED, unplaced, owned by its submitter.
INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('fifo-1', 'fifo', pg_temp.req());
INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, scheduling_priority, request, instance_types)
	VALUES ('fair-1', 'fair', 'team-a', 9999, pg_temp.req(), ARRAY['ml.p5.48xlarge', 'ml.p4d.24xlarge']);
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request, instance_count, retry_attempts,
							evaluate_on_exit, preemption_retries, attempt_duration_seconds, tags)
	VALUES ('quota-1', 'quota', 'ProdExp1', pg_temp.req(), 4, 3,
			'[{"action": "EXIT", "on_status_reason": "Received status from SageMaker: AlgorithmError*"}, {"action": "retry", "on_status_reason": "*"}]',
			2, 3600, '{"team": "search", "cost-center": "42"}');
INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('paused-1', 'paused', pg_temp.req());
SELECT job_id, job_name, job_queue, share_identifier, quota_share, scheduling_priority, instance_types,
	   instance_count, retry_attempts, status, attempts, preemptions, submitted_by = current_user AS mine,
	   runnable_at IS NULL AND service_environment IS NULL AND training_job_name IS NULL AS unplaced
  FROM fairshare.jobs ORDER BY job_id;
-- Submission is not a transition: no event yet.
SELECT count(*) AS events FROM fairshare.job_events;

-- Every bad submission: the error, and that no job was written.
CREATE TEMP TABLE bad_job (n serial, what text, stmt text);
INSERT INTO bad_job (what, stmt) VALUES
('unknown queue',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'nope', pg_temp.req())$$),
('NULL queue',						$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', NULL, pg_temp.req())$$),
('fair-share queue without share',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fair', pg_temp.req())$$),
('share identifier malformed',		$$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request) VALUES ('j', 'fair', 'team*', pg_temp.req())$$),
('share identifier on FIFO queue',	$$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request) VALUES ('j', 'fifo', 'a', pg_temp.req())$$),
('share identifier on quota queue',	$$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, share_identifier, request) VALUES ('j', 'quota', 'ProdExp1', 'a', pg_temp.req())$$),
('quota queue without quota share',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'quota', pg_temp.req())$$),
('unknown quota share',				$$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request) VALUES ('j', 'quota', 'ProdExp9', pg_temp.req())$$),
('quota share on FIFO queue',		$$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request) VALUES ('j', 'fifo', 'ProdExp1', pg_temp.req())$$),
('quota share on fair-share queue',	$$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, quota_share, request) VALUES ('j', 'fair', 'a', 'ProdExp1', pg_temp.req())$$),
('priority negative',				$$INSERT INTO fairshare.jobs (job_name, job_queue, scheduling_priority, request) VALUES ('j', 'fifo', -1, pg_temp.req())$$),
('priority 10000',					$$INSERT INTO fairshare.jobs (job_name, job_queue, scheduling_priority, request) VALUES ('j', 'fifo', 10000, pg_temp.req())$$),
('priority NULL',					$$INSERT INTO fairshare.jobs (job_name, job_queue, scheduling_priority, request) VALUES ('j', 'fifo', NULL, pg_temp.req())$$),
('request NULL',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', NULL)$$),
('request an array',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', '[1, 2]')$$),
('request a string',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', '"train"')$$),
('request without RoleArn',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() - 'RoleArn')$$),
('request with empty RoleArn',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"RoleArn": ""}')$$),
('request without OutputDataConfig', $$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() - 'OutputDataConfig')$$),
('request naming the training job',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"TrainingJobName": "mine"}')$$),
('request over 10 KiB',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || jsonb_build_object('HyperParameters', jsonb_build_object('blob', repeat('x', 10300))))$$),
('instance count zero',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 0}'))$$),
('instance count negative column',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_count) VALUES ('j', 'fifo', pg_temp.req(), -3)$$),
('instance count fractional',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 1.5}'))$$),
('instance count a string',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "ml.p4d.24xlarge", "InstanceCount": "4"}'))$$),
('instance count missing',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "ml.p4d.24xlarge"}'))$$),
('instance type missing',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceCount": 2}'))$$),
('instance type malformed',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "p4d", "InstanceCount": 2}'))$$),
('ResourceConfig not an object',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('[]'))$$),
('heterogeneous InstanceGroups',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceGroups": [{"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "InstanceGroupName": "a"}]}'))$$),
('instance type no environment runs', $$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req('{"InstanceType": "ml.p5.48xlarge", "InstanceCount": 1}'))$$),
('fallback type no environment runs', $$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types) VALUES ('j', 'fifo', pg_temp.req(), ARRAY['ml.p4d.24xlarge', 'ml.g5.xlarge'])$$),
('instance_types empty',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types) VALUES ('j', 'fifo', pg_temp.req(), '{}')$$),
('instance_types with NULL',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types) VALUES ('j', 'fifo', pg_temp.req(), ARRAY['ml.p4d.24xlarge', NULL])$$),
('instance_types two-dimensional',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types) VALUES ('j', 'fifo', pg_temp.req(), '{{ml.p4d.24xlarge}}')$$),
('instance_types duplicate',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types) VALUES ('j', 'fifo', pg_temp.req(), ARRAY['ml.p4d.24xlarge', 'ml.p4d.24xlarge'])$$),
('job name with a space',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('my job', 'fifo', pg_temp.req())$$),
('job name too long',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES (repeat('j', 129), 'fifo', pg_temp.req())$$),
('job name empty',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('', 'fifo', pg_temp.req())$$),
('job name NULL',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES (NULL, 'fifo', pg_temp.req())$$),
('retry_attempts 0',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request, retry_attempts) VALUES ('j', 'fifo', pg_temp.req(), 0)$$),
('retry_attempts 11',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request, retry_attempts) VALUES ('j', 'fifo', pg_temp.req(), 11)$$),
('evaluate_on_exit not an array',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request, evaluate_on_exit) VALUES ('j', 'fifo', pg_temp.req(), '{"action": "EXIT"}')$$),
('evaluate_on_exit bad action',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, evaluate_on_exit) VALUES ('j', 'fifo', pg_temp.req(), '[{"action": "RESTART", "on_status_reason": "*"}]')$$),
('evaluate_on_exit unknown key',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request, evaluate_on_exit) VALUES ('j', 'fifo', pg_temp.req(), '[{"action": "EXIT", "on_exit_code": "1"}]')$$),
('evaluate_on_exit control char',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request, evaluate_on_exit) VALUES ('j', 'fifo', pg_temp.req(), jsonb_build_array(jsonb_build_object('action', 'EXIT', 'on_status_reason', 'a' || chr(10) || 'b')))$$),
('evaluate_on_exit six rules',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, evaluate_on_exit) VALUES ('j', 'fifo', pg_temp.req(), (SELECT jsonb_agg('{"action": "EXIT", "on_status_reason": "x"}'::jsonb) FROM generate_series(1, 6)))$$),
('preemption_retries negative',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, preemption_retries) VALUES ('j', 'fifo', pg_temp.req(), -1)$$),
('attempt duration zero',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request, attempt_duration_seconds) VALUES ('j', 'fifo', pg_temp.req(), 0)$$),
('tags not an object',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo', pg_temp.req(), '["a"]')$$),
('tag value not a string',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo', pg_temp.req(), '{"n": 1}')$$),
('status set',						$$INSERT INTO fairshare.jobs (job_name, job_queue, request, status) VALUES ('j', 'fifo', pg_temp.req(), 'RUNNING')$$),
('status_reason set',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request, status_reason) VALUES ('j', 'fifo', pg_temp.req(), 'because')$$),
('placement set',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request, service_environment, instance_type) VALUES ('j', 'fifo', pg_temp.req(), 'p4', 'ml.p4d.24xlarge')$$),
('training job name set',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request, training_job_name) VALUES ('j', 'fifo', pg_temp.req(), 'x-1-1')$$),
('attempts set',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request, attempts) VALUES ('j', 'fifo', pg_temp.req(), 1)$$),
('runnable_at set',					$$INSERT INTO fairshare.jobs (job_name, job_queue, request, runnable_at) VALUES ('j', 'fifo', pg_temp.req(), now() - interval '1 day')$$),
('submitted_by someone else',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, submitted_by) VALUES ('j', 'fifo', pg_temp.req(), 'mallory')$$),
('job_id given',					$$INSERT INTO fairshare.jobs (job_id, job_name, job_queue, request) VALUES (1000, 'j', 'fifo', pg_temp.req())$$),
('one bad row in a batch',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('ok-1', 'fifo', pg_temp.req()), ('bad one', 'fifo', pg_temp.req())$$),
-- fairshare's own tags prove a training job belongs to this installation and job
('request tag fairshare:job-id',	$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": [{"Key": "team", "Value": "a"}, {"Key": "fairshare:job-id", "Value": "7"}]}')$$),
('request tag FAIRSHARE:installation', $$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": [{"Key": "FAIRSHARE:installation", "Value": "x"}]}')$$),
('request tag aws:',				$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": [{"Key": "aws:cloudformation:stack", "Value": "x"}]}')$$),
('request Tags not a list',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": {"Key": "a"}}')$$),
('request tag key twice',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": [{"Key": "team", "Value": "a"}, {"Key": "env", "Value": "x"}, {"Key": "team", "Value": "b"}]}')$$),
('tag fairshare:job-queue',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo', pg_temp.req(), '{"fairshare:job-queue": "other"}')$$),
-- SageMaker allows a training job 50 tags, and fairshare adds 4 of its own
('47 tags',							$$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo', pg_temp.req(), (SELECT jsonb_object_agg('k' || i, 'v') FROM generate_series(1, 47) i))$$),
('46 tags and 1 request Tag',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo', pg_temp.req() || '{"Tags": [{"Key": "other", "Value": "x"}]}', (SELECT jsonb_object_agg('k' || i, 'v') FROM generate_series(1, 46) i))$$),
-- nothing SageMaker could accept nests this deep (it answers 500, forever)
('request nested 11 deep',			$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || jsonb_build_object('HyperParameters', '{"a": [[[[[[[[["x"]]]]]]]]]}'::jsonb))$$),
('request nested 4000 deep',		$$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || jsonb_build_object('VpcConfig', (repeat('[', 4000) || repeat(']', 4000))::jsonb))$$),
('request 10241 bytes written compactly', $$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo', pg_temp.req() || '{"VpcConfig": {"SecurityGroupIds": ["sg-1", "sg-2"], "Subnets": [["s-1"], []]}, "Tags": [{"Key": "a", "Value": "b"}, {"Key": "c", "Value": "d"}]}' || jsonb_build_object('HyperParameters', jsonb_build_object('blob', repeat('x', 9712))))$$);

CREATE TEMP TABLE before AS SELECT count(*) AS n FROM fairshare.jobs;
\pset format unaligned
SELECT n, what, public.regress_try_hint(stmt) AS result, (SELECT count(*) FROM fairshare.jobs) = (SELECT n FROM before) AS nothing_written
  FROM bad_job ORDER BY n;
\pset format aligned
-- A key in both the job's tags and the request's Tags is one tag (the
-- training job gets the job's value): 46 keys in all are accepted.
BEGIN;
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request, tags) VALUES ('j', 'fifo',
	pg_temp.req() || '{"Tags": [{"Key": "k1", "Value": "request"}]}', (SELECT jsonb_object_agg('k' || i, 'v') FROM generate_series(1, 46) i))$$) AS forty_six_keys;
-- 10240 bytes written compactly (as boto3 sends JSON) are accepted, though
-- PostgreSQL's text of it, with a space after each colon and comma, is longer.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request) VALUES ('j', 'fifo',
	pg_temp.req() || jsonb_build_object('HyperParameters', jsonb_build_object('blob', repeat('x', 9840))))$$) AS compact_10240_bytes;
SELECT length(request::text) AS as_postgresql_prints_it FROM fairshare.jobs WHERE job_name = 'j' ORDER BY job_id DESC LIMIT 1;
ROLLBACK;
SELECT count(*) AS jobs, (SELECT count(*) FROM fairshare.job_attempts) AS attempts,
	   (SELECT count(*) FROM fairshare.job_events) AS events FROM fairshare.jobs;

-- With the triggers off (session_replication_role = replica), the CHECK
-- still holds job names to 1-128 of [A-Za-z0-9_-].
SET session_replication_role = replica;
SELECT left(name, 12) AS name, length(name), public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request, instance_types, instance_count)
	VALUES ($$ || quote_literal(name) || $$, 'fifo', pg_temp.req(), ARRAY['ml.p4d.24xlarge'], 1)$$) AS result
  FROM (VALUES ('replica-ok_1'), (repeat('n', 128)), (repeat('n', 129)), (''), ('with space'), ('dot.ted')) v (name)
 ORDER BY length(name), name;
DELETE FROM fairshare.jobs WHERE job_name ~ '^(replica-ok_1|n+)$';
RESET session_replication_role;

-- The request keeps what was submitted, byte for byte in meaning.
SELECT request -> 'ResourceConfig' AS resource_config FROM fairshare.jobs WHERE job_name = 'fifo-1';

SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
