-- The catalog: admin tables accept a reference setup and reject every bad
-- input with its own message and SQLSTATE, writing nothing.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- A count of every admin row, to show that a rejected statement wrote nothing.
CREATE FUNCTION pg_temp.admin_rows() RETURNS bigint LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM fairshare.service_environments)
		 + (SELECT count(*) FROM fairshare.capacity_limits)
		 + (SELECT count(*) FROM fairshare.scheduling_policies)
		 + (SELECT count(*) FROM fairshare.share_distribution)
		 + (SELECT count(*) FROM fairshare.job_queues)
		 + (SELECT count(*) FROM fairshare.queue_environments)
		 + (SELECT count(*) FROM fairshare.quota_shares)
		 + (SELECT count(*) FROM fairshare.quota_share_limits)
$$;

-- The reference setup of docs/scheduling.md, 'Reference scenarios'.
INSERT INTO fairshare.service_environments (name, region) VALUES ('p4-reservation', 'us-east-1');
-- An environment names AWS's own endpoints, or one a superuser allowed.
SET fairshare.endpoint_allowlist = 'http://127.0.0.1:9000, https://sagemaker.example.net';
INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('p5-emulated', 'http://127.0.0.1:9000');
INSERT INTO fairshare.capacity_limits VALUES
	('p4-reservation', 'NUM_INSTANCES', 100),
	('p4-reservation', 'ml.p4d.24xlarge', 100),
	('p5-emulated', 'ml.p5.48xlarge', 8);
INSERT INTO fairshare.scheduling_policies (name, kind, share_decay_seconds, compute_reservation)
	VALUES ('research', 'FAIR_SHARE', 3600, 10);
INSERT INTO fairshare.share_distribution VALUES
	('research', 'HIGHPRI', 1), ('research', 'MIDPRI', 3), ('research', 'LOWPRI', 5), ('research', 'team-*', 2);
INSERT INTO fairshare.scheduling_policies (name, kind, idle_assignment) VALUES ('prod-quota', 'QUOTA_SHARE', 'FAIR');
INSERT INTO fairshare.job_queues (name, priority, scheduling_policy) VALUES
	('p4-quota', 10, 'prod-quota'), ('p4-fair', 5, 'research');
INSERT INTO fairshare.job_queues (name, priority, strict_fifo) VALUES ('cpu-fifo', 1, true);
INSERT INTO fairshare.queue_environments VALUES
	('p4-quota', 'p4-reservation', 1), ('p4-fair', 'p4-reservation', 1),
	('p4-fair', 'p5-emulated', 2), ('cpu-fifo', 'p4-reservation', 1);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, in_share_preemption) VALUES
	('p4-quota', 'ProdExp1', 'LEND_AND_BORROW', true),
	('p4-quota', 'ProdExp2', 'LEND', false);
INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES
	('p4-quota', 'Sweeps', 'LEND_AND_BORROW', 50);
INSERT INTO fairshare.quota_share_limits VALUES
	('p4-quota', 'ProdExp1', 'ml.p4d.24xlarge', 60),
	('p4-quota', 'ProdExp2', 'ml.p4d.24xlarge', 40),
	('p4-quota', 'Sweeps', 'NUM_INSTANCES', 0);

SELECT name, strategy, borrow_limit, in_share_preemption, weight FROM fairshare.quota_shares ORDER BY name;
SELECT name, state, priority, scheduling_policy, strict_fifo FROM fairshare.job_queues ORDER BY name;

-- Every bad admin input: the error, and that nothing was written.
CREATE TEMP TABLE bad_admin (n serial, what text, stmt text);
INSERT INTO bad_admin (what, stmt) VALUES
('environment name with a space',	$$INSERT INTO fairshare.service_environments (name) VALUES ('p4 pool')$$),
('environment name too long',		$$INSERT INTO fairshare.service_environments (name) VALUES (repeat('x', 129))$$),
('environment state unknown',		$$INSERT INTO fairshare.service_environments (name, state) VALUES ('e1', 'PAUSED')$$),
('environment region malformed',	$$INSERT INTO fairshare.service_environments (name, region) VALUES ('e1', 'Virginia')$$),
('environment endpoint not a URL',	$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'ftp://x')$$),
('plain http to a remote host',		$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'http://api.example.com')$$),
('environment renamed',				$$UPDATE fairshare.service_environments SET name = 'p4b' WHERE name = 'p4-reservation'$$),
('environment in use deleted',		$$DELETE FROM fairshare.service_environments WHERE name = 'p4-reservation'$$),
('limit for unknown environment',	$$INSERT INTO fairshare.capacity_limits VALUES ('nowhere', 'NUM_INSTANCES', 1)$$),
('limit unit unknown',				$$INSERT INTO fairshare.capacity_limits VALUES ('p5-emulated', 'GPUS', 8)$$),
('limit unit malformed type',		$$INSERT INTO fairshare.capacity_limits VALUES ('p5-emulated', 'p5.48xlarge', 8)$$),
('limit negative',					$$INSERT INTO fairshare.capacity_limits VALUES ('p5-emulated', 'NUM_INSTANCES', -1)$$),
('limit NULL',						$$UPDATE fairshare.capacity_limits SET max_capacity = NULL WHERE service_environment = 'p5-emulated'$$),
('limit duplicate',					$$INSERT INTO fairshare.capacity_limits VALUES ('p5-emulated', 'ml.p5.48xlarge', 4)$$),
('policy kind unknown',				$$INSERT INTO fairshare.scheduling_policies (name, kind) VALUES ('p', 'ROUND_ROBIN')$$),
('decay too long',					$$INSERT INTO fairshare.scheduling_policies (name, kind, share_decay_seconds) VALUES ('p', 'FAIR_SHARE', 604801)$$),
('decay negative',					$$INSERT INTO fairshare.scheduling_policies (name, kind, share_decay_seconds) VALUES ('p', 'FAIR_SHARE', -1)$$),
('reservation 100',					$$INSERT INTO fairshare.scheduling_policies (name, kind, compute_reservation) VALUES ('p', 'FAIR_SHARE', 100)$$),
('idle assignment unknown',			$$INSERT INTO fairshare.scheduling_policies (name, kind, idle_assignment) VALUES ('p', 'QUOTA_SHARE', 'LIFO')$$),
('reservation on QUOTA_SHARE',		$$INSERT INTO fairshare.scheduling_policies (name, kind, compute_reservation) VALUES ('p', 'QUOTA_SHARE', 5)$$),
('FAIR idle assignment on FAIR_SHARE', $$INSERT INTO fairshare.scheduling_policies (name, kind, idle_assignment) VALUES ('p', 'FAIR_SHARE', 'FAIR')$$),
('policy kind changed while used',	$$UPDATE fairshare.scheduling_policies SET kind = 'QUOTA_SHARE' WHERE name = 'research'$$),
('weight zero',						$$INSERT INTO fairshare.share_distribution VALUES ('research', 'ops', 0)$$),
('weight too large',				$$INSERT INTO fairshare.share_distribution VALUES ('research', 'ops', 1000)$$),
('share identifier malformed',		$$INSERT INTO fairshare.share_distribution VALUES ('research', 'ops team', 1)$$),
('wildcard not at the end',			$$INSERT INTO fairshare.share_distribution VALUES ('research', 'te*am', 1)$$),
('wildcard overlaps exact entry',	$$INSERT INTO fairshare.share_distribution VALUES ('research', 'HIGH*', 1)$$),
('exact entry under a wildcard',	$$INSERT INTO fairshare.share_distribution VALUES ('research', 'team-a', 1)$$),
('wildcard under a wildcard',		$$INSERT INTO fairshare.share_distribution VALUES ('research', 'team-a*', 1)$$),
('wildcard over a wildcard',		$$INSERT INTO fairshare.share_distribution VALUES ('research', 'te*', 1)$$),
('weights on a QUOTA_SHARE policy',	$$INSERT INTO fairshare.share_distribution VALUES ('prod-quota', 'ProdExp1', 1)$$),
('weights on an unknown policy',	$$INSERT INTO fairshare.share_distribution VALUES ('nope', 'a', 1)$$),
('queue priority negative',			$$INSERT INTO fairshare.job_queues (name, priority) VALUES ('q', -1)$$),
('queue priority too high',			$$INSERT INTO fairshare.job_queues (name, priority) VALUES ('q', 1001)$$),
('queue state unknown',				$$INSERT INTO fairshare.job_queues (name, state) VALUES ('q', 'ON')$$),
('queue with unknown policy',		$$INSERT INTO fairshare.job_queues (name, scheduling_policy) VALUES ('q', 'nope')$$),
('strict_fifo with a policy',		$$INSERT INTO fairshare.job_queues (name, scheduling_policy, strict_fifo) VALUES ('q', 'research', true)$$),
('policy changed with quota shares', $$UPDATE fairshare.job_queues SET scheduling_policy = NULL WHERE name = 'p4-quota'$$),
('queue renamed',					$$UPDATE fairshare.job_queues SET name = 'x' WHERE name = 'cpu-fifo'$$),
('queue environment order 0',		$$INSERT INTO fairshare.queue_environments VALUES ('p4-quota', 'p5-emulated', 0)$$),
('queue environment order taken',	$$INSERT INTO fairshare.queue_environments VALUES ('p4-quota', 'p5-emulated', 1)$$),
('queue environment unknown env',	$$INSERT INTO fairshare.queue_environments VALUES ('p4-quota', 'nowhere', 2)$$),
('queue environment unknown queue',	$$INSERT INTO fairshare.queue_environments VALUES ('nope', 'p4-reservation', 1)$$),
('quota share on a fair-share queue', $$INSERT INTO fairshare.quota_shares (job_queue, name) VALUES ('p4-fair', 'X')$$),
('quota share on a FIFO queue',		$$INSERT INTO fairshare.quota_shares (job_queue, name) VALUES ('cpu-fifo', 'X')$$),
('quota share strategy unknown',	$$INSERT INTO fairshare.quota_shares (job_queue, name, strategy) VALUES ('p4-quota', 'X', 'SHARE')$$),
('borrow limit on RESERVE',			$$INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES ('p4-quota', 'X', 'RESERVE', 10)$$),
('borrow limit on LEND',			$$INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES ('p4-quota', 'X', 'LEND', -1)$$),
('borrow limit below -1',			$$INSERT INTO fairshare.quota_shares (job_queue, name, strategy, borrow_limit) VALUES ('p4-quota', 'X', 'LEND_AND_BORROW', -2)$$),
('quota share weight zero',			$$INSERT INTO fairshare.quota_shares (job_queue, name, weight) VALUES ('p4-quota', 'X', 0)$$),
('quota share name malformed',		$$INSERT INTO fairshare.quota_shares (job_queue, name) VALUES ('p4-quota', 'Prod Exp')$$),
('strategy changed to RESERVE keeping a borrow limit', $$UPDATE fairshare.quota_shares SET strategy = 'RESERVE' WHERE name = 'Sweeps'$$),
('quota limit for unknown share',	$$INSERT INTO fairshare.quota_share_limits VALUES ('p4-quota', 'Nope', 'NUM_INSTANCES', 1)$$),
('quota limit unit unknown',		$$INSERT INTO fairshare.quota_share_limits VALUES ('p4-quota', 'ProdExp1', 'gpu', 1)$$),
('quota limit negative',			$$INSERT INTO fairshare.quota_share_limits VALUES ('p4-quota', 'ProdExp2', 'NUM_INSTANCES', -5)$$),
-- what the sender would refuse never reaches the table, and a password in
-- a URL is not echoed
('endpoint with a password',		$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://admin:hunter2@sagemaker.example.com')$$),
('endpoint given a password',		$$UPDATE fairshare.service_environments SET endpoint_url = 'https://:hunter2@sagemaker.example.com' WHERE name = 'p4-reservation'$$),
('endpoint with a fragment',		$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://sagemaker.example.com/#x')$$),
('endpoint with a newline',			$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', E'https://sagemaker.example.com/\nHost: evil')$$),
('endpoint with a query',			$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://sagemaker.example.com/?a=b')$$),
('region with a dot',				$$INSERT INTO fairshare.service_environments (name, region) VALUES ('e1', 'us-east-1.evil.com')$$),
-- every call carries the server's key id and session token, and a
-- submitter's request: only to AWS's hosts or ones a superuser allowed
('endpoint not AWS and not allowed',	$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://sagemaker.example.org')$$),
('endpoint on another loopback port',	$$UPDATE fairshare.service_environments SET endpoint_url = 'http://127.0.0.1:8008/switchover' WHERE name = 'p5-emulated'$$),
('endpoint that only looks like AWS',	$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://amazonaws.com.example.org')$$),
('an AWS host anyone can have',		$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'https://a1b2c3.execute-api.us-east-1.amazonaws.com')$$),
('AWS host over plain http',			$$INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES ('e1', 'http://api.sagemaker.us-east-1.amazonaws.com')$$),
-- instances are counted whole: a fraction is refused, not rounded
('limit a fraction',				$$INSERT INTO fairshare.capacity_limits VALUES ('p5-emulated', 'NUM_INSTANCES', 2.5)$$),
('limit changed to a fraction',		$$UPDATE fairshare.capacity_limits SET max_capacity = 99.9 WHERE service_environment = 'p4-reservation'$$),
('quota limit a fraction',			$$INSERT INTO fairshare.quota_share_limits VALUES ('p4-quota', 'ProdExp2', 'NUM_INSTANCES', 0.5)$$);

CREATE TEMP TABLE before AS SELECT pg_temp.admin_rows() AS n;
\pset format unaligned
SELECT n, what, public.regress_try_hint(stmt) AS result, pg_temp.admin_rows() = (SELECT n FROM before) AS nothing_written
  FROM bad_admin ORDER BY n;
\pset format aligned

-- AWS's own hosts, and those listed (the port as listed, or the default),
-- are accepted.
INSERT INTO fairshare.service_environments (name, endpoint_url) VALUES
	('aws-eu', 'https://api.sagemaker.eu-west-1.amazonaws.com'),
	('aws-cn', 'https://api.sagemaker.cn-north-1.amazonaws.com.cn'),
	('aws-vpce', 'https://vpce-0a1b2c3d-e4f5.api.sagemaker.us-east-1.vpce.amazonaws.com'),
	('listed', 'https://SageMaker.Example.NET:443/');
SELECT public.regress_try_hint($$SET fairshare.endpoint_allowlist = 'https://sagemaker.example.net, ftp://x'$$);
DELETE FROM fairshare.service_environments WHERE name IN ('aws-eu', 'aws-cn', 'aws-vpce', 'listed');
RESET fairshare.endpoint_allowlist;

-- A sixth capacity limit on one quota share is refused.
INSERT INTO fairshare.quota_share_limits VALUES
	('p4-quota', 'ProdExp1', 'ml.p5.48xlarge', 1), ('p4-quota', 'ProdExp1', 'ml.g5.xlarge', 1),
	('p4-quota', 'ProdExp1', 'ml.g5.2xlarge', 1), ('p4-quota', 'ProdExp1', 'ml.g5.4xlarge', 1);
SELECT public.regress_try_hint($$INSERT INTO fairshare.quota_share_limits VALUES ('p4-quota', 'ProdExp1', 'ml.g5.8xlarge', 1)$$);

-- Changes that are allowed: disable, reprioritise, lower a limit, switch a
-- LEND_AND_BORROW share to LEND once its borrow limit is cleared.
UPDATE fairshare.service_environments SET state = 'DISABLED' WHERE name = 'p5-emulated';
UPDATE fairshare.job_queues SET priority = 20 WHERE name = 'p4-quota';
UPDATE fairshare.quota_share_limits SET max_capacity = 50 WHERE quota_share = 'ProdExp1' AND capacity_unit = 'ml.p4d.24xlarge';
UPDATE fairshare.quota_shares SET strategy = 'LEND', borrow_limit = NULL WHERE name = 'Sweeps';
SELECT name, strategy, borrow_limit FROM fairshare.quota_shares WHERE name = 'Sweeps';

-- An unused environment can be removed, with its limits.
DELETE FROM fairshare.queue_environments WHERE service_environment = 'p5-emulated';
DELETE FROM fairshare.service_environments WHERE name = 'p5-emulated';
SELECT count(*) AS p5_limits_left FROM fairshare.capacity_limits WHERE service_environment = 'p5-emulated';

-- A queue or share being deleted (DeleteJobQueue, DeleteQuotaShare) takes
-- no job again until the deletion is called off.
UPDATE fairshare.quota_shares SET accepts_jobs = false, deleting_since = now() WHERE name = 'Sweeps';
SELECT public.regress_try_hint($$UPDATE fairshare.quota_shares SET accepts_jobs = true WHERE name = 'Sweeps'$$);
UPDATE fairshare.job_queues SET accepts_jobs = false, deleting_since = now() WHERE name = 'p4-quota';
SELECT public.regress_try_hint($$UPDATE fairshare.job_queues SET accepts_jobs = true WHERE name = 'p4-quota'$$);
UPDATE fairshare.job_queues SET accepts_jobs = true, deleting_since = NULL WHERE name = 'p4-quota';
UPDATE fairshare.quota_shares SET accepts_jobs = true, deleting_since = NULL WHERE name = 'Sweeps';
SELECT name, accepts_jobs, deleting_since FROM fairshare.job_queues WHERE name = 'p4-quota'
UNION ALL SELECT name, accepts_jobs, deleting_since FROM fairshare.quota_shares WHERE name = 'Sweeps';

SET client_min_messages = warning;
DROP EXTENSION fairshare CASCADE;
