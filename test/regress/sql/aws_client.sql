-- The SageMaker client's SQL surface, without the network: endpoint
-- resolution and its refusals (fairshare.sagemaker_endpoint), argument
-- checks of sagemaker_call and _sagemaker_batch that fire before anything
-- is sent, a batch whose endpoint is refused (final at once, tries 0, no
-- credentials needed), handle accounting, and EXECUTE for fairshare_admin
-- only.  Calls against the emulator are test/sagemaker/client.test.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_smc_admin, regress_smc_nobody;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- Endpoint resolution with the service environment's columns given.
SELECT fairshare.sagemaker_endpoint('https://sagemaker.example.com', 'eu-west-2');
SELECT fairshare.sagemaker_endpoint('http://127.0.0.1:8443/', 'us-east-1');
SELECT fairshare.sagemaker_endpoint('http://localhost:8443', 'us-gov-west-1');
SELECT fairshare.sagemaker_endpoint('http://[::1]:8443', 'ap-southeast-2')->>'url';

-- Refused: plain http off loopback (link-local included), other schemes,
-- user information, bad region names.
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('http://10.0.0.1', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('http://169.254.169.254', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('http://sagemaker.example.com', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('ftp://127.0.0.1/', 'us-east-1')$$);
-- (the password of a refused URL is never shown)
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('https://user:s3cret@sagemaker.example.com/x@y', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('http://me:s3cret@10.0.0.1', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('not a url', 'us-east-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint('https://sagemaker.example.com', 'US-EAST-1')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint(NULL, 'us-east-1.evil.com/x')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint(NULL, '-us-east-1')$$);

-- sagemaker_call: refused before anything is sent.
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('DeleteTrainingJob', '{}')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('describetrainingjob', '{}')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_call(NULL, '{}')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('ListTrainingJobs', NULL)$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('ListTrainingJobs', '[]')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('ListTrainingJobs', '"x"')$$);

-- A batch to a refused endpoint: every call final at once, never sent.
SELECT ord, error_class, http_status, error_type, message, response, tries,
       ambiguous_tries, new_connections, started_ms
FROM fairshare._sagemaker_batch('DescribeTrainingJob',
     ARRAY['{"TrainingJobName": "a"}', '{"TrainingJobName": "b"}']::jsonb[],
     '{"endpoint_url": "http://192.0.2.7:80", "region": "us-east-1"}');
SELECT ord, error_class, message
FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[],
     '{"endpoint_url": "https://sagemaker.example.com", "region": "no such region"}');
SELECT count(*) FROM fairshare._sagemaker_batch('ListTrainingJobs', '{}'::jsonb[]);

-- _sagemaker_batch argument checks.
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[], '{"max_tries": 0}')$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[], '{"max_tries": 11}')$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[], '{"timeout_ms": "soon"}')$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[], '{"retries": 3}')$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}']::jsonb[], '[]')$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}', NULL]::jsonb[])$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('ListTrainingJobs', ARRAY['{}', '1']::jsonb[])$$);
SELECT public.regress_try($$SELECT * FROM fairshare._sagemaker_batch('Nope', ARRAY['{}']::jsonb[])$$);

-- No client or curl handle outlives the batches above.
SELECT fairshare._sagemaker_client_stats();

-- EXECUTE: fairshare_admin and superusers only.
CREATE ROLE regress_smc_admin IN ROLE fairshare_admin;
CREATE ROLE regress_smc_nobody;
GRANT USAGE ON SCHEMA fairshare TO regress_smc_nobody;
SELECT p.proname,
       has_function_privilege('regress_smc_admin', p.oid, 'EXECUTE') AS admin,
       has_function_privilege('regress_smc_nobody', p.oid, 'EXECUTE') AS nobody
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'fairshare' AND p.proname LIKE '%sagemaker%'
ORDER BY p.proname;
SET ROLE regress_smc_nobody;
SELECT public.regress_try($$SELECT fairshare.sagemaker_call('ListTrainingJobs', '{}')$$);
SELECT public.regress_try($$SELECT fairshare.sagemaker_endpoint()$$);
RESET ROLE;
SET ROLE regress_smc_admin;
SELECT fairshare.sagemaker_endpoint('https://sagemaker.example.com', 'eu-central-1')->>'source';
RESET ROLE;

REVOKE USAGE ON SCHEMA fairshare FROM regress_smc_nobody;
DROP ROLE regress_smc_admin, regress_smc_nobody;
