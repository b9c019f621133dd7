-- Roles: each one logs in and shows what it can and cannot do.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_fs_admin, regress_fs_alice, regress_fs_bob, regress_fs_viewer, regress_fs_nobody;
RESET client_min_messages;
CREATE ROLE regress_fs_admin LOGIN IN ROLE fairshare_admin;
CREATE ROLE regress_fs_alice LOGIN IN ROLE fairshare_submitter;
CREATE ROLE regress_fs_bob LOGIN IN ROLE fairshare_submitter;
CREATE ROLE regress_fs_viewer LOGIN IN ROLE fairshare_viewer;
CREATE ROLE regress_fs_nobody LOGIN;

CREATE TABLE public.fs_req AS SELECT
	'{"RoleArn": "arn:aws:iam::1:role/r", "OutputDataConfig": {"S3OutputPath": "s3://b/o"},
	  "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2}}'::jsonb AS request;
GRANT SELECT ON public.fs_req TO PUBLIC;

-- The admin sets up an environment and a queue.
\c - regress_fs_admin
\set SHOW_CONTEXT never
INSERT INTO fairshare.service_environments (name) VALUES ('p4');
INSERT INTO fairshare.capacity_limits VALUES ('p4', 'ml.p4d.24xlarge', 10);
INSERT INTO fairshare.job_queues (name) VALUES ('q');
INSERT INTO fairshare.queue_environments VALUES ('q', 'p4', 1);
SELECT current_user, count(*) AS queues FROM fairshare.job_queues GROUP BY 1;

-- Alice and Bob submit.
\c - regress_fs_alice
\set SHOW_CONTEXT never
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'alice-1', 'q', request FROM public.fs_req;
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'alice-2', 'q', request FROM public.fs_req;
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'alice-3', 'q', request FROM public.fs_req;
\c - regress_fs_bob
\set SHOW_CONTEXT never
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'bob-1', 'q', request FROM public.fs_req
	RETURNING job_id, job_name, submitted_by, status;

-- The jobs enter their queue (as a pass would), and wait.
\c - postgres
UPDATE fairshare.jobs SET status = 'RUNNABLE';
\c - regress_fs_bob
\set SHOW_CONTEXT never

-- Bob sees only his own job, its attempts and events.
SELECT job_name, submitted_by FROM fairshare.jobs ORDER BY job_id;
-- ... and cannot act on Alice's: to him it does not exist.
SELECT public.regress_try('SELECT fairshare.terminate_job(1, ''not mine'')');
SELECT public.regress_try('SELECT fairshare.update_job_priority(1, 99)');
-- A submitter cannot set status or placement, nor change jobs directly.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request, status)
					   SELECT 'b', 'q', request, 'RUNNING' FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request, submitted_by)
					   SELECT 'b', 'q', request, 'regress_fs_alice' FROM public.fs_req$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_name = 'bob-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET scheduling_priority = 9 WHERE job_name = 'bob-1'$$);
SELECT public.regress_try($$DELETE FROM fairshare.jobs WHERE job_name = 'bob-1'$$);
SELECT public.regress_try($$INSERT INTO fairshare.job_events (job_id, new_status) VALUES (3, 'FAILED')$$);
-- ... nor the configuration, which it can read.
SELECT name FROM fairshare.job_queues;
SELECT public.regress_try($$INSERT INTO fairshare.job_queues (name) VALUES ('mine')$$);
SELECT public.regress_try($$UPDATE fairshare.capacity_limits SET max_capacity = 1000$$);
-- Bob explains his job: it is behind Alice's three, whose names he does
-- not see, but they count.
SELECT fairshare.explain(job_id) ->> 'status' AS status, fairshare.explain(job_id) -> 'position' AS position,
	   fairshare.explain(job_id) -> 'ahead' AS ahead
  FROM fairshare.jobs WHERE job_name = 'bob-1';
SELECT public.regress_try('SELECT fairshare.explain(1)');
SELECT "position", job_id, job_name, status FROM fairshare.queue_snapshot('q');
-- NULL arguments are errors, not a silent NULL.
SELECT public.regress_try('SELECT fairshare.terminate_job(3, NULL)');
SELECT public.regress_try('SELECT fairshare.update_job_priority(3, NULL)');
SELECT public.regress_try('SELECT fairshare.explain(NULL)');
SELECT public.regress_try('SELECT * FROM fairshare.queue_snapshot(NULL)');
SELECT count(*) AS default_max_jobs FROM fairshare.queue_snapshot('q', NULL);
-- Bob raises his own job's priority and terminates it.
SELECT fairshare.update_job_priority(job_id, 50) FROM fairshare.jobs WHERE job_name = 'bob-1';
SELECT fairshare.terminate_job(job_id, 'changed my mind') FROM fairshare.jobs WHERE job_name = 'bob-1';
SELECT job_name, status, status_reason, scheduling_priority FROM fairshare.jobs;
SELECT old_status, new_status, reason FROM fairshare.job_events ORDER BY event_id;

-- Alice terminates one of hers; Bob's terminate did not touch her jobs.
\c - regress_fs_alice
\set SHOW_CONTEXT never
SELECT job_name, status FROM fairshare.jobs ORDER BY job_id;
SELECT fairshare.terminate_job(job_id, 'duplicate') FROM fairshare.jobs WHERE job_name = 'alice-2';
SELECT count(*) AS events_alice_sees FROM fairshare.job_events;

-- The viewer reads views only: no tables, no job control.
\c - regress_fs_viewer
\set SHOW_CONTEXT never
SELECT public.regress_try('SELECT count(*) FROM fairshare.jobs');
SELECT public.regress_try('SELECT count(*) FROM fairshare.job_queues');
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'v', 'q', request FROM public.fs_req$$);
SELECT public.regress_try('SELECT fairshare.terminate_job(1, ''x'')');
-- ... but sees the queue's order and why any job waits, names and all.
SELECT "position", job_id, job_name, status FROM fairshare.queue_snapshot('q');
SELECT fairshare.explain(1) ->> 'job_name' AS job_name, fairshare.explain(1) -> 'position' AS position;
SELECT public.regress_try('SELECT * FROM fairshare.queue_snapshot(''nope'')');

-- A role without any fairshare role can do nothing.
\c - regress_fs_nobody
\set SHOW_CONTEXT never
SELECT public.regress_try('SELECT count(*) FROM fairshare.jobs');
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'n', 'q', request FROM public.fs_req$$);
SELECT public.regress_try('SELECT fairshare.update_job_priority(1, 1)');

-- The admin sees every job and may act on any of them.
\c - regress_fs_admin
\set SHOW_CONTEXT never
SELECT job_name, submitted_by, status FROM fairshare.jobs ORDER BY job_id;
SELECT fairshare.update_job_priority(job_id, 7) FROM fairshare.jobs WHERE job_name = 'alice-1';
SELECT fairshare.terminate_job(job_id, 'maintenance') FROM fairshare.jobs WHERE job_name = 'alice-1';
SELECT job_name, status, status_reason FROM fairshare.jobs ORDER BY job_id;
SELECT public.regress_try($$DELETE FROM fairshare.job_queues WHERE name = 'q'$$);
-- History is the lifecycle trigger's alone: an admin's own UPDATE of a job
-- is recorded, but the admin cannot write events or attempts by hand.
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'admin-1', 'q', request FROM public.fs_req;
UPDATE fairshare.jobs SET status = 'RUNNABLE', status_reason = 'queued by hand' WHERE job_name = 'admin-1';
-- Its history is set by its transitions: not moved ahead in line by hand.
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET runnable_at = '2020-01-01' WHERE job_name = 'admin-1'$$);
-- A scheduling pass places a job (the admin's schedule() does), not the
-- admin's UPDATE: by hand, on an environment that is not the queue's, does
-- not exist or is being deleted, the job would be followed by nothing.
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = 'p4', instance_type = 'ml.p4d.24xlarge'
 WHERE job_name = 'admin-1'$$);
\c - postgres
UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = 'p4', instance_type = 'ml.p4d.24xlarge'
 WHERE job_name = 'admin-1';
\c - regress_fs_admin
\set SHOW_CONTEXT never
-- A placed job follows its training job, and only SageMaker ends it: the
-- admin can neither move it out of the placed states nor change which
-- training job it names, or where (docs/security.md).
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET status = 'FAILED', status_reason = 'failed by hand' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_name = 'admin-1'$$);
-- ... nor on to STARTING or RUNNING: its create has not been sent, and the
-- dispatcher creates only for SCHEDULED jobs.
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET status = 'RUNNING' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET status = 'STARTING' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET started_at = now() WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET preemptions = 7 WHERE job_name = 'admin-1'$$);
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET training_job_name = 'someone-elses-job' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET training_job_arn = 'arn:aws:sagemaker:us-east-1:1:training-job/x' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET service_environment = 'elsewhere' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET instance_type = 'ml.g5.xlarge' WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET stop_sent_at = now() WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$SELECT fairshare.apply_status(job_id, '{"TrainingJobStatus": "Failed"}') FROM fairshare.jobs WHERE job_name = 'admin-1'$$);
SELECT public.regress_try($$SELECT fairshare._cancel_unsent(job_id, training_job_name) FROM fairshare.jobs WHERE job_name = 'admin-1'$$);
-- Its open attempt the same: the admin may note a reason, but not rename
-- it ...
SELECT public.regress_try_hint($$UPDATE fairshare.job_attempts SET training_job_name = 'someone-elses-job'
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'admin-1')$$);
-- ... nor rewrite its times or what it was placed for, nor end it.
SELECT public.regress_try_hint($$UPDATE fairshare.job_attempts SET started_at = '2020-01-02', scheduling_priority = 9999
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'admin-1')$$);
SELECT public.regress_try($$UPDATE fairshare.job_attempts SET stopped_at = now()
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'admin-1')$$);
UPDATE fairshare.job_attempts SET status_reason = 'noted by the admin'
 WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'admin-1');
SELECT job_name, status, training_job_name = fairshare.training_job_name(job_id, 1) AS named_by_fairshare,
	   training_job_arn, service_environment, instance_type
  FROM fairshare.jobs WHERE job_name = 'admin-1';
-- SageMaker's answer, applied by the dispatcher (a superuser), ends it.
\c - postgres
SELECT fairshare.apply_status(job_id, '{"TrainingJobStatus": "Failed", "FailureReason": "failed by hand"}')
  FROM fairshare.jobs WHERE job_name = 'admin-1';
\c - regress_fs_admin
\set SHOW_CONTEXT never
SELECT old_status, new_status, reason FROM fairshare.job_events e JOIN fairshare.jobs j USING (job_id)
 WHERE j.job_name = 'admin-1' ORDER BY event_id;
SELECT a.attempt, a.outcome, a.status_reason FROM fairshare.job_attempts a JOIN fairshare.jobs j USING (job_id)
 WHERE j.job_name = 'admin-1';
DELETE FROM fairshare.jobs WHERE job_name = 'admin-1';
-- A job keeps its id (its API jobId and its training jobs' names carry
-- it), even with no history left to hold it.
INSERT INTO fairshare.jobs (job_name, job_queue, request) SELECT 'admin-renumbered', 'q', request FROM public.fs_req;
DELETE FROM fairshare.job_events WHERE job_id = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'admin-renumbered');
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET job_id = DEFAULT WHERE job_name = 'admin-renumbered'$$);
DELETE FROM fairshare.jobs WHERE job_name = 'admin-renumbered';
SELECT public.regress_try($$INSERT INTO fairshare.job_events (job_id, new_status) VALUES (3, 'SUCCEEDED')$$);
SELECT public.regress_try($$INSERT INTO fairshare.job_attempts (job_id, attempt, training_job_name, service_environment,
						   instance_type, instance_count) VALUES (3, 9, 'x', 'p4', 'ml.p4d.24xlarge', 1)$$);
-- ... but not delete a placed job: its training job would run on unwatched.
\c - postgres
UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = 'p4', instance_type = 'ml.p4d.24xlarge'
 WHERE job_name = 'alice-3';
\c - regress_fs_admin
\set SHOW_CONTEXT never
SELECT public.regress_try_hint($$DELETE FROM fairshare.jobs WHERE submitted_by = 'regress_fs_alice'$$);
SELECT job_name, status FROM fairshare.jobs WHERE job_name = 'alice-3';
-- A stop asked for stays asked for: the admin may terminate the job, but
-- not take the terminate back, weaken it or move when it was asked for.
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET stop_kind = 'TERMINATE' WHERE job_name = 'alice-3'$$);
SELECT fairshare.terminate_job(job_id, 'wrong dataset') FROM fairshare.jobs WHERE job_name = 'alice-3';
SELECT public.regress_try_hint($$UPDATE fairshare.jobs SET stop_kind = NULL, stop_reason = NULL, stop_requested_at = NULL
 WHERE job_name = 'alice-3'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET stop_kind = 'PREEMPT' WHERE job_name = 'alice-3'$$);
SELECT public.regress_try($$UPDATE fairshare.jobs SET stop_requested_at = now() + interval '1 day' WHERE job_name = 'alice-3'$$);
UPDATE fairshare.jobs SET stop_reason = stop_reason || ' (noted by the admin)' WHERE job_name = 'alice-3';
SELECT job_name, status, stop_kind, stop_reason, stop_requested_at IS NOT NULL AS stop_asked
  FROM fairshare.jobs WHERE job_name = 'alice-3';
DELETE FROM fairshare.jobs WHERE job_name = 'bob-1' RETURNING job_name, status;
-- A stronger stop is the admin's to ask for: the admin's scheduling pass
-- makes a preemption of a job past its attempt_duration_seconds a timeout.
\c - postgres
INSERT INTO fairshare.jobs (job_name, job_queue, request, attempt_duration_seconds)
SELECT 'admin-timeout', 'q', request, 60 FROM public.fs_req;
UPDATE fairshare.jobs SET status = 'RUNNABLE' WHERE job_name = 'admin-timeout';
UPDATE fairshare.jobs SET status = 'SCHEDULED', service_environment = 'p4', instance_type = 'ml.p4d.24xlarge'
 WHERE job_name = 'admin-timeout';
SELECT fairshare.apply_status(job_id, jsonb_build_object('TrainingJobName', training_job_name,
	   'TrainingJobStatus', 'InProgress', 'SecondaryStatus', 'Training'))
  FROM fairshare.jobs WHERE job_name = 'admin-timeout';
SET session_replication_role = replica;
UPDATE fairshare.jobs SET started_at = now() - interval '1 hour', stop_kind = 'PREEMPT',
	   stop_reason = 'preempted by hand', stop_requested_at = now(),
	   preempted_for = (SELECT job_id FROM fairshare.jobs WHERE job_name = 'alice-3')
 WHERE job_name = 'admin-timeout';
RESET session_replication_role;
\c - regress_fs_admin
\set SHOW_CONTEXT never
SELECT count(*) >= 0 AS ran FROM fairshare.schedule();
SELECT job_name, status, stop_kind, stop_reason, preempted_for FROM fairshare.jobs WHERE job_name = 'admin-timeout';

-- Which RoleArn a submitter may name.  With
-- fairshare.require_role_arn_grant on (a superuser's setting), a job may
-- name only a RoleArn fairshare.role_arn_grants grants to a role whose
-- privileges its submitter has, as AWS Batch asks for iam:PassRole.
\c - postgres
ALTER ROLE regress_fs_alice SET fairshare.require_role_arn_grant = on;
ALTER ROLE regress_fs_bob SET fairshare.require_role_arn_grant = on;
ALTER ROLE regress_fs_admin SET fairshare.require_role_arn_grant = on;
CREATE FUNCTION public.fs_req_as(arn text) RETURNS jsonb LANGUAGE sql AS
	$$SELECT jsonb_set(request, '{RoleArn}', to_jsonb(arn)) FROM public.fs_req$$;
GRANT EXECUTE ON FUNCTION public.fs_req_as(text) TO PUBLIC;
\c - regress_fs_admin
\set SHOW_CONTEXT never
-- Grants: to a role (a prefix ending in *), and to a group role (exact).
INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('regress_fs_alice', 'arn:aws:iam::123456789012:role/team-a-*'),
		   ('fairshare_submitter', 'arn:aws:iam::123456789012:role/shared')
	RETURNING role, role_name, role_arn;
-- What is not a role ARN, a prefix of one or * is refused, saying so.
SELECT public.regress_try_hint($$INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('regress_fs_bob', 'arn:aws:iam::1:role/x')$$);
SELECT public.regress_try($$INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('regress_fs_bob', 'arn:aws:s3:::bucket*')$$);
SELECT public.regress_try($$INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('regress_fs_bob', 'arn:aws:iam::123456789012:role/')$$);
SELECT public.regress_try($$INSERT INTO fairshare.role_arn_grants (role, role_arn)
	VALUES ('regress_fs_nosuchrole', '*')$$);
-- ... and the name is fairshare's to record.
SELECT public.regress_try($$INSERT INTO fairshare.role_arn_grants (role, role_name, role_arn)
	VALUES ('regress_fs_bob', 'regress_fs_alice', '*')$$);
-- The admin's own submission is checked too; a grant it makes counts at once.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('admin-role', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/ops'))$$);
INSERT INTO fairshare.role_arn_grants (role, role_arn) VALUES ('regress_fs_admin', '*');
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('admin-role', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/ops'))$$);

\c - regress_fs_alice
\set SHOW_CONTEXT never
SHOW fairshare.require_role_arn_grant;
-- Her prefix and the group's exact ARN pass; anything else is refused.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('alice-team', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/team-a-train'))$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('alice-shared', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/shared'))$$);
SELECT public.regress_try_hint($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('alice-admin', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/admin'))$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('alice-shared2', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/shared2'))$$);
-- She can read the grants, not write them, nor turn the check off.
SELECT role_name, role_arn FROM fairshare.role_arn_grants ORDER BY role_arn, role_name;
SELECT public.regress_try($$INSERT INTO fairshare.role_arn_grants (role, role_arn) VALUES ('regress_fs_alice', '*')$$);
SELECT public.regress_try($$DELETE FROM fairshare.role_arn_grants$$);
SELECT public.regress_try($$SET fairshare.require_role_arn_grant = off$$);

\c - regress_fs_bob
\set SHOW_CONTEXT never
-- Alice's grant is not Bob's; the group's is.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('bob-team', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/team-a-train'))$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('bob-shared', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/shared'))$$);

-- Once the group's grant is deleted, it no longer counts.
\c - regress_fs_admin
DELETE FROM fairshare.role_arn_grants WHERE role = 'fairshare_submitter'::regrole RETURNING role_name, role_arn;
\c - regress_fs_bob
\set SHOW_CONTEXT never
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('bob-shared-2', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/shared'))$$);

-- A superuser is not checked.
\c - postgres
SET fairshare.require_role_arn_grant = on;
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	VALUES ('super-role', 'q', public.fs_req_as('arn:aws:iam::123456789012:role/anything'))$$);
RESET fairshare.require_role_arn_grant;
SELECT job_name, submitted_by, request ->> 'RoleArn' AS role_arn FROM fairshare.jobs
 WHERE job_name IN ('admin-role', 'alice-team', 'alice-shared', 'bob-shared', 'super-role') ORDER BY job_id;
ALTER ROLE regress_fs_alice RESET fairshare.require_role_arn_grant;
ALTER ROLE regress_fs_bob RESET fairshare.require_role_arn_grant;
ALTER ROLE regress_fs_admin RESET fairshare.require_role_arn_grant;

-- Which shares a submitter may submit under.  With
-- fairshare.require_share_grant on, a job's fair share or quota share must
-- be granted (fairshare.share_grants) to a role whose privileges its
-- submitter has, as AWS Batch asks for batch:ShareIdentifier.
ALTER ROLE regress_fs_alice SET fairshare.require_share_grant = on;
ALTER ROLE regress_fs_bob SET fairshare.require_share_grant = on;
\c - regress_fs_admin
\set SHOW_CONTEXT never
INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('fair_p', 'FAIR_SHARE'), ('quota_p', 'QUOTA_SHARE');
INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('fq', 'fair_p'), ('qq', 'quota_p');
INSERT INTO fairshare.queue_environments VALUES ('fq', 'p4', 1), ('qq', 'p4', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES ('qq', 'TeamA', 'LEND'), ('qq', 'TeamB', 'LEND');
-- A prefix in one queue, a name in another, and a share of every queue to a group.
INSERT INTO fairshare.share_grants (role, job_queue, share)
	VALUES ('regress_fs_alice', 'fq', 'TeamA*'), ('regress_fs_alice', 'qq', 'TeamA'),
		   ('fairshare_submitter', '*', 'Shared')
	RETURNING role_name, job_queue, share;
SELECT public.regress_try_hint($$INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('regress_fs_bob', 'f q', 'TeamB')$$);
SELECT public.regress_try($$INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('regress_fs_bob', 'fq', 'Team*B')$$);
SELECT public.regress_try($$INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('regress_fs_bob', 'fq', '')$$);
\c - regress_fs_alice
\set SHOW_CONTEXT never
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'alice-fair-a', 'fq', 'TeamA-nlp', request FROM public.fs_req$$);
SELECT public.regress_try_hint($$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'alice-fair-b', 'fq', 'TeamB', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
	SELECT 'alice-quota-a', 'qq', 'TeamA', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
	SELECT 'alice-quota-b', 'qq', 'TeamB', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'alice-fair-shared', 'fq', 'Shared', request FROM public.fs_req$$);
-- A FIFO queue has no share: nothing to grant.
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, request)
	SELECT 'alice-fifo', 'q', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.share_grants (role, job_queue, share) VALUES ('regress_fs_alice', '*', '*')$$);
SELECT public.regress_try($$SET fairshare.require_share_grant = off$$);
\c - regress_fs_bob
\set SHOW_CONTEXT never
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'bob-fair-a', 'fq', 'TeamA-nlp', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, quota_share, request)
	SELECT 'bob-quota-a', 'qq', 'TeamA', request FROM public.fs_req$$);
SELECT public.regress_try($$INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, request)
	SELECT 'bob-fair-shared', 'fq', 'Shared', request FROM public.fs_req$$);
\c - postgres
SELECT job_name, job_queue, coalesce(share_identifier, quota_share) AS share, submitted_by FROM fairshare.jobs
 WHERE job_queue IN ('fq', 'qq') OR job_name = 'alice-fifo' ORDER BY job_id;
ALTER ROLE regress_fs_alice RESET fairshare.require_share_grant;
ALTER ROLE regress_fs_bob RESET fairshare.require_share_grant;

\c - postgres
SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
DROP TABLE public.fs_req;
DROP FUNCTION public.fs_req_as(text);
DROP ROLE regress_fs_admin, regress_fs_alice, regress_fs_bob, regress_fs_viewer, regress_fs_nobody;
