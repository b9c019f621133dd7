-- The administration operations of the AWS Batch API, called as the API
-- server calls them (fairshare._api_*(request jsonb)), as an admin, a
-- submitter and a viewer: happy paths, errors, pagination, ARNs.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_api_admin, regress_api_sub, regress_api_viewer;
RESET client_min_messages;
CREATE ROLE regress_api_admin LOGIN IN ROLE fairshare_admin;
CREATE ROLE regress_api_sub LOGIN IN ROLE fairshare_submitter;
CREATE ROLE regress_api_viewer LOGIN IN ROLE fairshare_viewer;

-- call(op, request): the answer, or the SQLSTATE and message of the error.
CREATE FUNCTION public.call(op text, request jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	answer jsonb;
	state text; msg text;
BEGIN
	EXECUTE format('SELECT fairshare.%I($1)', '_api_' || op) INTO answer USING request;
	RETURN answer::text;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
	RETURN state || ': ' || msg;
END
$$;

CREATE TABLE public.req AS SELECT '{"RoleArn": "arn:aws:iam::123456789012:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
	"AlgorithmSpecification": {"TrainingImage": "img", "TrainingInputMode": "File"},
	"ResourceConfig": {"InstanceType": "ml.g5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 10},
	"StoppingCondition": {"MaxRuntimeInSeconds": 60}}'::jsonb AS request;
GRANT SELECT ON public.req TO PUBLIC;

\c - regress_api_admin
\set SHOW_CONTEXT never

-- The notebook's resources (the AWS sample's create_resources.py).
SELECT call('create_service_environment', '{"serviceEnvironmentName": "ml-g6-12xlarge-fss",
	"serviceEnvironmentType": "SAGEMAKER_TRAINING", "state": "ENABLED",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "ml-c5-xlarge-fifo",
	"serviceEnvironmentType": "SAGEMAKER_TRAINING", "state": "ENABLED",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}], "tags": {"team": "ml"}}');
SELECT call('create_scheduling_policy', '{"name": "ml-g6-12xlarge-sp", "fairsharePolicy": {"shareDecaySeconds": 3600,
	"shareDistribution": [{"shareIdentifier": "HIGHPRI", "weightFactor": 1}, {"shareIdentifier": "MIDPRI", "weightFactor": 3},
						  {"shareIdentifier": "LOWPRI", "weightFactor": 5}]}}');
SELECT call('create_job_queue', '{"jobQueueName": "ml-g6-12xlarge-queue", "jobQueueType": "SAGEMAKER_TRAINING",
	"state": "ENABLED", "priority": 1, "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-g6-12xlarge-fss"}],
	"schedulingPolicyArn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/ml-g6-12xlarge-sp"}');
SELECT call('create_job_queue', '{"jobQueueName": "ml-c5-xlarge-queue", "jobQueueType": "SAGEMAKER_TRAINING",
	"state": "ENABLED", "priority": 2,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "arn:aws:batch:us-east-1:000000000000:service-environment/ml-c5-xlarge-fifo"}],
	"jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "state": "RUNNABLE",
								  "maxTimeSeconds": 600, "action": "TERMINATE"}]}');
-- ... as the tables hold them.
SELECT name, state, tags FROM fairshare.service_environments ORDER BY name;
SELECT * FROM fairshare.capacity_limits ORDER BY 1, 2;
SELECT name, kind, share_decay_seconds, compute_reservation FROM fairshare.scheduling_policies;
SELECT * FROM fairshare.share_distribution ORDER BY weight_factor;
SELECT name, state, accepts_jobs, priority, scheduling_policy FROM fairshare.job_queues ORDER BY name;
SELECT * FROM fairshare.queue_environments ORDER BY 1;
SELECT * FROM fairshare.job_state_time_limit_actions;

-- Describe, by name and by ARN; pagination.
SELECT jsonb_pretty(call('describe_service_environments', '{"serviceEnvironments": ["ml-c5-xlarge-fifo"]}')::jsonb);
SELECT call('describe_service_environments', '{"serviceEnvironments": ["arn:aws:batch:us-east-1:000000000000:service-environment/ml-g6-12xlarge-fss"]}')::jsonb
	-> 'serviceEnvironments' -> 0 ->> 'serviceEnvironmentName' AS by_arn;
SELECT call('describe_service_environments', '{"maxResults": 1}')::jsonb ? 'nextToken' AS has_next,
	   call('describe_service_environments', '{"maxResults": 1}')::jsonb -> 'serviceEnvironments' -> 0 ->> 'serviceEnvironmentName' AS first_page;
SELECT call('describe_service_environments', jsonb_build_object('maxResults', 1,
	'nextToken', call('describe_service_environments', '{"maxResults": 1}')::jsonb -> 'nextToken'))::jsonb AS second_page;
SELECT call('describe_service_environments', '{"nextToken": "garbage!"}');
SELECT call('describe_service_environments', '{"maxResults": 101}');
SELECT jsonb_pretty(call('describe_job_queues', '{"jobQueues": ["ml-c5-xlarge-queue"]}')::jsonb);
SELECT jsonb_pretty(call('describe_job_queues', '{"jobQueues": ["arn:aws:batch:us-east-1:000000000000:job-queue/ml-g6-12xlarge-queue"]}')::jsonb);
SELECT jsonb_pretty(call('describe_scheduling_policies', '{"arns": ["arn:aws:batch:us-east-1:000000000000:scheduling-policy/ml-g6-12xlarge-sp"]}')::jsonb);
SELECT call('list_scheduling_policies', '{}');

-- Errors of creation.
SELECT call('create_service_environment', '{"serviceEnvironmentName": "ml-c5-xlarge-fifo", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "e2", "serviceEnvironmentType": "ECS",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "e2", "serviceEnvironmentType": "SAGEMAKER_TRAINING"}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "e2", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": "ten", "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "e 2", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 1}]}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "e2", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "ml.p4d.24xlarge"}], "tags": {"aws:x": "y"}}');
SELECT call('create_service_environment', '[1]');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "nope"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "arn:aws:batch:us-east-1:123456789012:service-environment/ml-c5-xlarge-fifo"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "arn:aws:batch:us-east-1:000000000000:job-queue/ml-c5-xlarge-fifo"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"computeEnvironmentOrder": [{"order": 1, "computeEnvironment": "ce"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}],
	"jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "state": "RUNNABLE",
								  "maxTimeSeconds": 60, "action": "TERMINATE"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}],
	"jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "state": "RUNNABLE",
								  "maxTimeSeconds": 600, "action": "CANCEL"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}],
	"jobStateTimeLimitActions": [{"reason": "SOMETHING_ELSE", "state": "RUNNABLE", "maxTimeSeconds": 600, "action": "TERMINATE"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 1, "schedulingPolicyArn": "nope",
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "q2", "priority": 5000,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}]}');
SELECT call('create_scheduling_policy', '{"name": "p2", "fairsharePolicy": {"shareDistribution": [{"shareIdentifier": "A*"}, {"shareIdentifier": "AB"}]}}');
SELECT call('create_scheduling_policy', '{"name": "p2", "fairsharePolicy": {"shareDecaySeconds": 604801}}');
SELECT call('create_scheduling_policy', '{"name": "p2", "fairsharePolicy": {}, "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}}');
SELECT call('create_scheduling_policy', '{"name": "p2", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FAIR"}}');
SELECT count(*) AS nothing_written FROM fairshare.job_queues WHERE name = 'q2'
	UNION ALL SELECT count(*) FROM fairshare.scheduling_policies WHERE name = 'p2'
	UNION ALL SELECT count(*) FROM fairshare.service_environments WHERE name = 'e2';

-- shareDecaySeconds 0 (and none) is AWS's default 600-second window.
SELECT call('create_scheduling_policy', '{"name": "p-default", "fairsharePolicy": {"shareDecaySeconds": 0}}');
SELECT call('create_scheduling_policy', '{"name": "p-none"}');
SELECT name, kind, share_decay_seconds FROM fairshare.scheduling_policies WHERE name LIKE 'p-%' ORDER BY name;

-- Updates.
SELECT call('update_service_environment', '{"serviceEnvironment": "ml-c5-xlarge-fifo",
	"capacityLimits": [{"maxCapacity": 4, "capacityUnit": "NUM_INSTANCES"}, {"maxCapacity": 2, "capacityUnit": "ml.g5.xlarge"}]}');
SELECT * FROM fairshare.capacity_limits WHERE service_environment = 'ml-c5-xlarge-fifo' ORDER BY 2;
SELECT call('update_service_environment', '{"serviceEnvironment": "nope", "state": "DISABLED"}');
SELECT call('update_service_environment', '{"serviceEnvironment": "ml-c5-xlarge-fifo", "state": "PAUSED"}');
SELECT call('update_scheduling_policy', '{"arn": "ml-g6-12xlarge-sp", "fairsharePolicy": {"shareDecaySeconds": 7200, "computeReservation": 10,
	"shareDistribution": [{"shareIdentifier": "HIGHPRI", "weightFactor": 0.5}, {"shareIdentifier": "LOWPRI", "weightFactor": 5}]}}');
SELECT call('describe_scheduling_policies', '{"arns": ["ml-g6-12xlarge-sp"]}')::jsonb -> 'schedulingPolicies' -> 0 -> 'fairsharePolicy';
SELECT call('update_scheduling_policy', '{"arn": "ml-g6-12xlarge-sp", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}}');
SELECT call('update_job_queue', '{"jobQueue": "ml-c5-xlarge-queue", "schedulingPolicyArn": "p-default"}');
SELECT call('update_job_queue', '{"jobQueue": "arn:aws:batch:us-east-1:000000000000:job-queue/ml-g6-12xlarge-queue",
	"priority": 7, "schedulingPolicyArn": "p-default",
	"jobStateTimeLimitActions": [{"reason": "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY", "state": "RUNNABLE", "maxTimeSeconds": 14400, "action": "TERMINATE"}],
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-c5-xlarge-fifo"}, {"order": 2, "serviceEnvironment": "ml-g6-12xlarge-fss"}]}');
SELECT (call('describe_job_queues', '{"jobQueues": ["ml-g6-12xlarge-queue"]}')::jsonb -> 'jobQueues' -> 0)
	- 'jobQueueArn' - 'statusReason' - 'computeEnvironmentOrder';

-- DISABLED as AWS means it: new jobs refused, queued ones still run.
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'before', 'ml-c5-xlarge-queue', request FROM req;
SELECT call('update_job_queue', '{"jobQueue": "ml-c5-xlarge-queue", "state": "DISABLED"}');
SELECT state, accepts_jobs FROM fairshare.job_queues WHERE name = 'ml-c5-xlarge-queue';
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'after', 'ml-c5-xlarge-queue', request FROM req$$);
SELECT job_id, action FROM fairshare.schedule() ORDER BY job_id;
SELECT job_name, status FROM fairshare.jobs ORDER BY job_id;
SELECT call('describe_job_queues', '{"jobQueues": ["ml-c5-xlarge-queue"]}')::jsonb -> 'jobQueues' -> 0 -> 'state' AS api_state;
SELECT call('update_job_queue', '{"jobQueue": "ml-c5-xlarge-queue", "state": "ENABLED"}');
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'after', 'ml-c5-xlarge-queue', request FROM req;
-- SQL's DISABLED (jobs held back as PENDING) shows as DISABLED too, and says why.
UPDATE fairshare.job_queues SET state = 'DISABLED' WHERE name = 'ml-c5-xlarge-queue';
SELECT call('describe_job_queues', '{"jobQueues": ["ml-c5-xlarge-queue"]}')::jsonb -> 'jobQueues' -> 0 -> 'state' AS api_state,
	   call('describe_job_queues', '{"jobQueues": ["ml-c5-xlarge-queue"]}')::jsonb -> 'jobQueues' -> 0 -> 'statusReason' AS reason;
UPDATE fairshare.job_queues SET state = 'ENABLED' WHERE name = 'ml-c5-xlarge-queue';

-- Quota shares.
SELECT call('create_scheduling_policy', '{"name": "quota-sp", "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"}}');
SELECT call('create_service_environment', '{"serviceEnvironmentName": "p4", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 100, "capacityUnit": "ml.p4d.24xlarge"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "quota-q", "priority": 10, "schedulingPolicyArn": "quota-sp",
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "p4"}]}');
SELECT call('create_quota_share', '{"quotaShareName": "ProdExp1", "jobQueue": "quota-q",
	"capacityLimits": [{"maxCapacity": 60, "capacityUnit": "ml.p4d.24xlarge"}],
	"resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
	"preemptionConfiguration": {"inSharePreemption": "ENABLED"}, "tags": {"owner": "exp1"}}');
SELECT call('create_quota_share', '{"quotaShareName": "ProdExp2", "jobQueue": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q",
	"capacityLimits": [{"maxCapacity": 40, "capacityUnit": "ml.p4d.24xlarge"}],
	"resourceSharingConfiguration": {"strategy": "LEND"}, "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}');
SELECT call('create_quota_share', '{"quotaShareName": "ProdExp3", "jobQueue": "quota-q",
	"capacityLimits": [{"maxCapacity": 40, "capacityUnit": "ml.p4d.24xlarge"}],
	"resourceSharingConfiguration": {"strategy": "LEND", "borrowLimit": 50}, "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}');
SELECT call('create_quota_share', '{"quotaShareName": "X", "jobQueue": "ml-c5-xlarge-queue",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "ml.p4d.24xlarge"}],
	"resourceSharingConfiguration": {"strategy": "LEND"}, "preemptionConfiguration": {"inSharePreemption": "DISABLED"}}');
SELECT call('create_quota_share', '{"quotaShareName": "X", "jobQueue": "quota-q"}');
SELECT job_queue, name, state, strategy, borrow_limit, in_share_preemption, accepts_jobs, tags FROM fairshare.quota_shares ORDER BY name;
SELECT * FROM fairshare.quota_share_limits ORDER BY 2;
SELECT jsonb_pretty(call('describe_quota_share', '{"quotaShareArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q/quota-share/ProdExp1"}')::jsonb);
SELECT call('describe_quota_share', '{"quotaShareArn": "quota-q/ProdExp2"}')::jsonb ->> 'quotaShareName' AS short_form;
SELECT call('describe_quota_share', '{"quotaShareArn": "quota-q/Nope"}');
SELECT call('describe_quota_share', '{"quotaShareArn": "ProdExp2"}');
SELECT call('list_quota_shares', '{"jobQueue": "quota-q", "maxResults": 1}')::jsonb -> 'quotaShares' -> 0 ->> 'quotaShareName' AS page1,
	   call('list_quota_shares', jsonb_build_object('jobQueue', 'quota-q', 'maxResults', 1,
			'nextToken', call('list_quota_shares', '{"jobQueue": "quota-q", "maxResults": 1}')::jsonb -> 'nextToken'))::jsonb AS page2;
SELECT call('update_quota_share', '{"quotaShareArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q/quota-share/ProdExp2",
	"capacityLimits": [{"maxCapacity": 30, "capacityUnit": "ml.p4d.24xlarge"}],
	"resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 100}}');
SELECT name, strategy, borrow_limit FROM fairshare.quota_shares WHERE name = 'ProdExp2';
SELECT max_capacity FROM fairshare.quota_share_limits WHERE quota_share = 'ProdExp2';

-- A quota share DISABLED refuses new jobs; deleting one needs it disabled,
-- terminates its jobs and goes.
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
	SELECT 'q2job', 'quota-q', 'ProdExp2', jsonb_set(request, '{ResourceConfig,InstanceType}', '"ml.p4d.24xlarge"') FROM req;
SELECT call('delete_quota_share', '{"quotaShareArn": "quota-q/ProdExp2"}');
SELECT call('update_quota_share', '{"quotaShareArn": "quota-q/ProdExp2", "state": "DISABLED"}');
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
	SELECT 'q2job-b', 'quota-q', 'ProdExp2', jsonb_set(request, '{ResourceConfig,InstanceType}', '"ml.p4d.24xlarge"') FROM req$$);
SELECT call('delete_quota_share', '{"quotaShareArn": "quota-q/ProdExp2"}');
SELECT job_name, status, status_reason FROM fairshare.jobs WHERE job_name LIKE 'q2job%';
SELECT count(*) AS prodexp2_left FROM fairshare.quota_shares WHERE name = 'ProdExp2';

-- Tags.
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tags": {"a": "1", "b": "2"}}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tags": {"b": "3"}}');
SELECT call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q"}');
SELECT call('untag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tagKeys": ["a"]}');
SELECT call('untag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tagKeys": "b"}');
SELECT call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q"}');
SELECT call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q/quota-share/ProdExp1"}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/quota-sp", "tags": {"k": "v"}}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:service-environment/p4", "tags": {"k": "v"}}');
SELECT call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/quota-sp"}'),
	   call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:service-environment/p4"}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/nope", "tags": {"k": "v"}}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tags": {"aws:k": "v"}}');
SELECT call('tag_resource', '{"resourceArn": "job-queue/quota-q", "tags": {"k": "v"}}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:compute-environment/x", "tags": {"k": "v"}}');
SELECT call('list_tags_for_resource', format('{"resourceArn": "arn:aws:batch:us-east-1:000000000000:service-job/%s"}',
	(SELECT min(job_id) FROM fairshare.jobs))::jsonb);
SELECT call('tag_resource', format('{"resourceArn": "arn:aws:batch:us-east-1:000000000000:service-job/%s", "tags": {"k": "v"}}',
	(SELECT min(job_id) FROM fairshare.jobs))::jsonb);

-- Deletions, with their preconditions.
SELECT call('delete_scheduling_policy', '{"arn": "quota-sp"}');
SELECT call('delete_scheduling_policy', '{"arn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/p-none"}');
SELECT call('delete_service_environment', '{"serviceEnvironment": "p4"}');
SELECT call('update_service_environment', '{"serviceEnvironment": "p4", "state": "DISABLED"}');
SELECT call('delete_service_environment', '{"serviceEnvironment": "p4"}');
SELECT call('delete_job_queue', '{"jobQueue": "ml-c5-xlarge-queue"}');
SELECT call('update_job_queue', '{"jobQueue": "ml-c5-xlarge-queue", "state": "DISABLED"}');
SELECT call('delete_job_queue', '{"jobQueue": "arn:aws:batch:us-east-1:000000000000:job-queue/ml-c5-xlarge-queue"}');
SELECT count(*) AS queue_left FROM fairshare.job_queues WHERE name = 'ml-c5-xlarge-queue';
SELECT count(*) AS its_jobs_left FROM fairshare.jobs WHERE job_queue = 'ml-c5-xlarge-queue';
SELECT call('delete_job_queue', '{"jobQueue": "ml-c5-xlarge-queue"}');

-- A queue whose job is placed: deleting waits for the stop, then the pass finishes it.
SELECT call('create_job_queue', '{"jobQueueName": "busy-q", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "ml-g6-12xlarge-fss"}]}');
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'busy', 'busy-q', request FROM req;
SELECT action FROM fairshare.schedule() s JOIN fairshare.jobs j USING (job_id) WHERE j.job_name = 'busy';
SELECT call('update_job_queue', '{"jobQueue": "busy-q", "state": "DISABLED"}');
SELECT call('delete_job_queue', '{"jobQueue": "busy-q"}');
SELECT call('describe_job_queues', '{"jobQueues": ["busy-q"]}')::jsonb -> 'jobQueues' -> 0 ->> 'status' AS status;
SELECT call('update_job_queue', '{"jobQueue": "busy-q", "priority": 3}');
SELECT status, stop_kind FROM fairshare.jobs WHERE job_name = 'busy';
-- SageMaker's answer, as the dispatcher (a superuser) applies it.
\c - postgres
SELECT fairshare.apply_status(job_id, jsonb_build_object('TrainingJobName', training_job_name,
	'TrainingJobStatus', 'Stopped', 'SecondaryStatus', 'Stopped')) FROM fairshare.jobs WHERE job_name = 'busy';
\c - regress_api_admin
\set SHOW_CONTEXT never
SELECT count(*) FROM fairshare.schedule();
SELECT count(*) AS busy_q_left FROM fairshare.job_queues WHERE name = 'busy-q';

-- The submitter and the viewer read the configuration, and change nothing.
\c - regress_api_sub
\set SHOW_CONTEXT never
SELECT call('describe_job_queues', '{}')::jsonb -> 'jobQueues' -> 0 ->> 'jobQueueName' AS sees;
SELECT call('list_quota_shares', '{"jobQueue": "quota-q"}')::jsonb -> 'quotaShares' -> 0 ->> 'quotaShareName' AS sees;
SELECT call('create_service_environment', '{"serviceEnvironmentName": "sub-env", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 1, "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('update_job_queue', '{"jobQueue": "quota-q", "priority": 999}');
SELECT call('delete_scheduling_policy', '{"arn": "p-default"}');
SELECT call('tag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:job-queue/quota-q", "tags": {"k": "v"}}');
SELECT call('create_quota_share', '{"quotaShareName": "S", "jobQueue": "quota-q"}');
-- Tags of a job it cannot see are not found.
SELECT call('list_tags_for_resource', format('{"resourceArn": "arn:aws:batch:us-east-1:000000000000:service-job/%s"}',
	(SELECT 1))::jsonb);

\c - regress_api_viewer
\set SHOW_CONTEXT never
SELECT call('describe_service_environments', '{}')::jsonb -> 'serviceEnvironments' -> 0 ->> 'serviceEnvironmentName' AS sees;
SELECT call('describe_scheduling_policies', '{"arns": ["quota-sp"]}')::jsonb -> 'schedulingPolicies' -> 0 -> 'quotaSharePolicy' AS sees;
SELECT call('list_tags_for_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/quota-sp"}');
SELECT call('update_service_environment', '{"serviceEnvironment": "ml-g6-12xlarge-fss", "state": "DISABLED"}');
SELECT call('untag_resource', '{"resourceArn": "arn:aws:batch:us-east-1:000000000000:scheduling-policy/quota-sp", "tagKeys": ["k"]}');
SELECT call('delete_quota_share', '{"quotaShareArn": "quota-q/ProdExp1"}');

-- Time limits: the head of a queue, RUNNABLE too long for the reason named,
-- is terminated by the next pass; a job behind it, or one waiting for
-- another reason, is not.  (The clock is shortened by moving runnable_at,
-- and the jobs' events, back.)
\c - postgres
\set SHOW_CONTEXT never
SELECT call('create_service_environment', '{"serviceEnvironmentName": "tiny", "serviceEnvironmentType": "SAGEMAKER_TRAINING",
	"capacityLimits": [{"maxCapacity": 2, "capacityUnit": "NUM_INSTANCES"}]}');
SELECT call('create_job_queue', '{"jobQueueName": "limited", "priority": 1,
	"serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": "tiny"}],
	"jobStateTimeLimitActions": [{"reason": "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE", "state": "RUNNABLE",
								  "maxTimeSeconds": 600, "action": "TERMINATE"}]}');
INSERT INTO fairshare.jobs (job_name, job_queue, request)
	SELECT 'too-big-old', 'limited', jsonb_set(request, '{ResourceConfig,InstanceCount}', '5') FROM req;
INSERT INTO fairshare.jobs (job_name, job_queue, request)
	SELECT 'too-big-young', 'limited', jsonb_set(request, '{ResourceConfig,InstanceCount}', '5') FROM req;
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status, left(status_reason, 49) AS reason FROM fairshare.jobs WHERE job_queue = 'limited' ORDER BY job_id;
-- Not yet 600 seconds: nothing happens.
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status FROM fairshare.jobs WHERE job_queue = 'limited' ORDER BY job_id;
UPDATE fairshare.jobs SET runnable_at = now() - interval '11 minutes' WHERE job_queue = 'limited';
UPDATE fairshare.job_events SET at = at - interval '11 minutes'
 WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_queue = 'limited');
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status, status_reason FROM fairshare.jobs WHERE job_queue = 'limited' ORDER BY job_id;
-- The next one is now the head, and goes at the next pass.
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status, status_reason FROM fairshare.jobs WHERE job_queue = 'limited' ORDER BY job_id;
-- A different reason, or a queue without the action, keeps its job.
INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'too-big-elsewhere', 'ml-g6-12xlarge-queue', 'LOWPRI', jsonb_set(request, '{ResourceConfig,InstanceCount}', '5') FROM req;
UPDATE fairshare.job_state_time_limit_actions SET reason = 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY' WHERE job_queue = 'limited';
INSERT INTO fairshare.jobs (job_name, job_queue, request)
	SELECT 'too-big-3', 'limited', jsonb_set(request, '{ResourceConfig,InstanceCount}', '5') FROM req;
SELECT count(*) FROM fairshare.schedule();
UPDATE fairshare.job_events SET at = at - interval '2 days'
 WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE status = 'RUNNABLE');
UPDATE fairshare.jobs SET runnable_at = now() - interval '2 days' WHERE status = 'RUNNABLE';
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status FROM fairshare.jobs WHERE job_name IN ('too-big-elsewhere', 'too-big-3') ORDER BY job_id;
-- The time counts from when the job last became RUNNABLE: a job that
-- waited three days for its turn (the head of its queue), was placed and
-- met a capacity error is requeued to try its other placements, not
-- terminated at the next pass.
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'fits', 'limited', request FROM req;
UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_name = 'fits';
UPDATE fairshare.jobs SET runnable_at = now() - interval '3 days' WHERE job_name = 'fits';
UPDATE fairshare.job_events SET at = at - interval '3 days'
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'fits');
UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = 'tiny', instance_type = request #>> '{ResourceConfig,InstanceType}'
 WHERE job_name = 'fits';
SELECT fairshare.apply_status(job_id, jsonb_build_object('TrainingJobName', training_job_name,
	'TrainingJobStatus', 'Failed', 'FailureReason', 'CapacityError: Unable to provision requested ML compute capacity.'))
  FROM fairshare.jobs WHERE job_name = 'fits';
SELECT count(*) FROM fairshare.schedule();
SELECT job_name, status, runnable_at < now() - interval '1 day' AS first_runnable_long_ago, left(status_reason, 13) AS reason
  FROM fairshare.jobs WHERE job_name = 'fits';
-- A capacity failure is CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY.
SELECT fairshare.time_limit_reason_matches('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
	'CapacityError: Unable to provision requested ML compute capacity (on tiny, ml.g5.xlarge); trying its other placements, no attempt spent');
-- ... and a retried failure whose script named a capacity error is not.
SELECT fairshare.time_limit_reason_matches('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
	'Received status from SageMaker: AlgorithmError: my_cluster.InsufficientCapacityError: no GPUs left; retrying (1 of 3 attempts used)');
SELECT fairshare.time_limit_reason_matches('MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED',
	'MISCONFIGURATION:QUOTA_SHARE_MAX_RESOURCE - the job needs 5 instances');

-- The check reads only the head of each share, through the scheduler's
-- partial indexes (no scan of the waiting jobs).
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
WITH RECURSIVE h(share, job_id, runnable_at) AS (
	(SELECT j.share_identifier, j.job_id, j.runnable_at FROM fairshare.jobs j
	  WHERE j.job_queue = 'q' AND j.status = 'RUNNABLE' AND j.share_identifier IS NOT NULL
	  ORDER BY j.share_identifier, j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1)
	UNION ALL
	SELECT n.share_identifier, n.job_id, n.runnable_at
	  FROM h CROSS JOIN LATERAL (
			SELECT j.share_identifier, j.job_id, j.runnable_at FROM fairshare.jobs j
			 WHERE j.job_queue = 'q' AND j.status = 'RUNNABLE' AND j.share_identifier IS NOT NULL
			   AND j.share_identifier > h.share
			 ORDER BY j.share_identifier, j.scheduling_priority DESC, j.runnable_at, j.job_id LIMIT 1) n)
SELECT array_agg(h.job_id) FROM h WHERE h.runnable_at <= now() - interval '600 seconds';
RESET enable_seqscan;

-- frontOfQuotaShares: every quota share's own first RUNNABLE jobs (up to
-- 100 a share, in the share's order), not only the shares that reach the
-- queue's first 100.  150 jobs wait in A before B's two (no capacity: they
-- only wait); C has none and is left out.
\c - regress_api_admin
\set SHOW_CONTEXT never
INSERT INTO fairshare.service_environments (name) VALUES ('fronts-env');
INSERT INTO fairshare.capacity_limits VALUES ('fronts-env', 'ml.g5.xlarge', 0);
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('fronts-p', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('fronts-q', 'fronts-p');
INSERT INTO fairshare.queue_environments VALUES ('fronts-q', 'fronts-env', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES ('fronts-q', 'A', 'LEND'), ('fronts-q', 'B', 'LEND'), ('fronts-q', 'C', 'LEND');
INSERT INTO fairshare.quota_share_limits VALUES ('fronts-q', 'A', 'ml.g5.xlarge', 1), ('fronts-q', 'B', 'ml.g5.xlarge', 1), ('fronts-q', 'C', 'ml.g5.xlarge', 1);
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
SELECT 'front-a' || i, 'fronts-q', 'A', request FROM req, generate_series(1, 150) i;
INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, scheduling_priority, request)
SELECT 'front-b' || i, 'fronts-q', 'B', i, request FROM req, generate_series(1, 2) i;
SELECT count(*) AS placed FROM fairshare.schedule();
SELECT count(*) FILTER (WHERE status = 'RUNNABLE') AS runnable FROM fairshare.jobs WHERE job_queue = 'fronts-q';
-- (a viewer sees the same fronts, without job rows to join)
\c - regress_api_viewer
\set SHOW_CONTEXT never
SELECT share, jsonb_array_length(jobs) AS jobs
  FROM jsonb_each(call('get_job_queue_snapshot', '{"jobQueue": "fronts-q"}')::jsonb -> 'frontOfQuotaShares' -> 'quotaShares') AS s(share, jobs)
 ORDER BY share;
\c - regress_api_admin
\set SHOW_CONTEXT never
WITH fronts AS (SELECT call('get_job_queue_snapshot', '{"jobQueue": "fronts-q"}')::jsonb -> 'frontOfQuotaShares' -> 'quotaShares' AS q)
SELECT share, jsonb_array_length(jobs) AS jobs,
	   (SELECT array_agg(j.job_name ORDER BY n) FROM jsonb_array_elements(jobs) WITH ORDINALITY e(x, n)
		  JOIN fairshare.jobs j ON j.job_id = split_part(x ->> 'jobArn', '/', 2)::bigint WHERE n <= 3) AS first_three,
	   (SELECT bool_and(x ? 'earliestTimeAtPosition') FROM jsonb_array_elements(jobs) x) AS timed
  FROM fronts, jsonb_each(fronts.q) AS s(share, jobs) ORDER BY share;

-- A placed job whose training job SageMaker has not confirmed yet is
-- RUNNABLE to the API (AWS Batch's SCHEDULED means submitted to
-- SageMaker, and SDK code reads latestAttempt for every later status), and
-- while a job is placed its latestAttempt is that attempt's training job,
-- never an earlier attempt's.
\c - postgres
\set SHOW_CONTEXT never
INSERT INTO fairshare.service_environments (name) VALUES ('sched-env');
INSERT INTO fairshare.capacity_limits VALUES ('sched-env', 'NUM_INSTANCES', 1);
INSERT INTO fairshare.job_queues (name, priority) VALUES ('sched-q', 50);
INSERT INTO fairshare.queue_environments VALUES ('sched-q', 'sched-env', 1);
INSERT INTO fairshare.jobs (job_name, job_queue, request, retry_attempts)
	SELECT 'sched', 'sched-q', request, 2 FROM req RETURNING job_id AS sched \gset
SELECT count(*) > 0 AS placed FROM fairshare.schedule() WHERE job_id = :sched;
CREATE FUNCTION pg_temp.api_view(id bigint) RETURNS TABLE (status text, api_status text, latest text, listed_runnable boolean, listed_scheduled boolean)
LANGUAGE sql AS $$
	SELECT j.status::text, d ->> 'status', d -> 'latestAttempt' -> 'serviceResourceId' ->> 'value',
		   call('list_service_jobs', '{"jobQueue": "sched-q", "jobStatus": "RUNNABLE"}')::jsonb -> 'jobSummaryList' @> jsonb_build_array(jsonb_build_object('jobId', id::text, 'status', 'RUNNABLE')),
		   call('list_service_jobs', '{"jobQueue": "sched-q", "jobStatus": "SCHEDULED"}')::jsonb -> 'jobSummaryList' @> jsonb_build_array(jsonb_build_object('jobId', id::text, 'status', 'SCHEDULED'))
	  FROM fairshare.jobs j, LATERAL (SELECT call('describe_service_job', jsonb_build_object('jobId', id::text))::jsonb AS d) x
	 WHERE j.job_id = id
$$;
SELECT * FROM pg_temp.api_view(:sched);
UPDATE fairshare.jobs SET training_job_arn = 'arn:aws:sagemaker:us-east-1:1:training-job/first' WHERE job_id = :sched;
SELECT * FROM pg_temp.api_view(:sched);
SELECT fairshare.apply_status(:sched, jsonb_build_object('TrainingJobName', training_job_name, 'TrainingJobStatus', 'Failed',
	'SecondaryStatus', 'Failed', 'FailureReason', 'InternalServerError: try again')) FROM fairshare.jobs WHERE job_id = :sched;
SELECT count(*) > 0 AS placed_again FROM fairshare.schedule() WHERE job_id = :sched;
SELECT * FROM pg_temp.api_view(:sched);
\c - regress_api_admin
\set SHOW_CONTEXT never

-- ListServiceJobs with a share filter and a finished status reads an index
-- of that share's jobs in that status, newest first, also under row-level
-- security (where "status = X" cannot be an index condition): the query
-- _api_list_service_jobs builds, as a submitter and as an admin.
\c - regress_api_sub
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM fairshare.jobs j
 WHERE j.job_queue = 'fronts-q' AND j.status = 'FAILED'::fairshare.job_status AND j.quota_share = 'A'
 ORDER BY j.created_at DESC, j.job_id DESC LIMIT 101;
\c - regress_api_admin
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM fairshare.jobs j
 WHERE j.job_queue = 'fronts-q' AND j.status = 'SUCCEEDED'::fairshare.job_status AND j.share_identifier = 'A'
 ORDER BY j.created_at DESC, j.job_id DESC LIMIT 101;
-- The API's RUNNABLE (fairshare's RUNNABLE, and SCHEDULED without an ARN)
-- merges two index scans in order: a page does not sort the backlog.
\c - regress_api_sub
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM (
	(SELECT * FROM fairshare.jobs j WHERE j.job_queue = 'fronts-q' AND j.status = 'RUNNABLE'::fairshare.job_status
	  ORDER BY j.created_at DESC, j.job_id DESC LIMIT 101)
	UNION ALL
	(SELECT * FROM fairshare.jobs j WHERE j.job_queue = 'fronts-q' AND j.status = 'SCHEDULED'::fairshare.job_status
	   AND j.training_job_arn IS NULL ORDER BY j.created_at DESC, j.job_id DESC LIMIT 101)) u
 ORDER BY u.created_at DESC, u.job_id DESC LIMIT 101;
\c - postgres

DROP FUNCTION public.call(text, jsonb);
DROP TABLE public.req;
DROP EXTENSION fairshare CASCADE;
DROP ROLE regress_api_admin, regress_api_sub, regress_api_viewer;
