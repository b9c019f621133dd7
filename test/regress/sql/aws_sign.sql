-- fairshare.sigv4_sign(): fixed timestamps against known signatures (the
-- AWS SigV4 test suite's published ones, and botocore's for SageMaker-like
-- requests), bad input refused with a clear message that never shows the
-- secret, and EXECUTE for fairshare_admin only.  The random comparison with
-- botocore is test/sigv4/sigv4.test.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS fairshare CASCADE;
CREATE EXTENSION fairshare;
DROP ROLE IF EXISTS regress_aws_admin, regress_aws_submitter, regress_aws_viewer, regress_aws_nobody;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- The AWS test suite's credentials, region, service and time.
CREATE TEMP TABLE suite AS SELECT
	'AKIDEXAMPLE'::text AS akid,
	'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'::text AS secret,
	'20150830T123600Z'::text AS at;

-- get-vanilla: published signature 5fa00fa3...
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL,
		'us-east-1', 'service', akid, secret, NULL, at)
FROM suite;

-- get-vanilla-query-order-key-case: b97d918c...
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/?Param2=value2&Param1=value1',
		'{"Host": "example.amazonaws.com"}', NULL,
		'us-east-1', 'service', akid, secret, NULL, at) ->> 'Authorization'
FROM suite;

-- get-header-value-trim (acc3ed3a...) and get-header-key-duplicate
-- (c9d5ea9f...): an array gives repeated values in order.
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/',
		'{"My-Header1": " value1", "My-Header2": " \"a   b   c\""}', NULL,
		'us-east-1', 'service', akid, secret, NULL, at) ->> 'Authorization'
FROM suite;
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/',
		'{"My-Header1": ["value2", "value2", "value1"]}', NULL,
		'us-east-1', 'service', akid, secret, NULL, at) ->> 'Authorization'
FROM suite;

-- get-vanilla-with-session-token: the token is signed and returned (07ec1639...).
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL,
		'us-east-1', 'service', akid, secret,
		'6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267', at)
FROM suite;

-- post-x-www-form-urlencoded: a given X-Amz-Content-SHA256 is the payload
-- hash; the body is bytea (d3875051...).
SELECT fairshare.sigv4_sign('POST', 'https://example.amazonaws.com/',
		'{"Content-Type": "application/x-www-form-urlencoded", "Content-Length": 13,
		  "x-amz-content-sha256": "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"}',
		convert_to('Param1=value1', 'UTF8'),
		'us-east-1', 'service', akid, secret, NULL, at) ->> 'Authorization'
FROM suite;

-- A SageMaker JSON 1.1 call with a session token, as the dispatcher sends
-- it; botocore 1.29 signs it d5e2550f...  No X-Amz-Content-SHA256 is added.
SELECT key, value
FROM suite, jsonb_each_text(fairshare.sigv4_sign('POST', 'https://api.sagemaker.us-east-1.amazonaws.com/',
		'{"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "SageMaker.DescribeTrainingJob"}',
		convert_to('{"TrainingJobName": "fairshare-1-1"}', 'UTF8'),
		'us-east-1', 'sagemaker', akid, secret, 'FwoGZXIvYXdzEXAMPLE//TOKEN+value=', '20240115T093000Z'))
ORDER BY key;

-- Path normalisation and double encoding for non-S3 services, the query
-- sorted by key then value, values trimmed and joined (botocore: 396be60c...).
SELECT fairshare.sigv4_sign('POST', 'https://example.amazonaws.com/a%2Fb/../c d/?b=2&a=1&a=',
		'{"X-Custom": ["  x   y  ", "z"]}', NULL,
		'us-east-1', 'sagemaker', akid, secret, NULL, '20240115T093000Z') ->> 'Authorization'
FROM suite;
-- The same for s3: path as given, X-Amz-Content-SHA256 added (7ea4fe30...).
SELECT key, value
FROM suite, jsonb_each_text(fairshare.sigv4_sign('POST', 'https://example.amazonaws.com/a%2Fb/../c d/?b=2&a=1&a=',
		'{"X-Custom": ["  x   y  ", "z"]}', convert_to('hello', 'UTF8'),
		'us-east-1', 's3', akid, secret, NULL, '20240115T093000Z'))
ORDER BY key;

-- An empty session token is no token; no amz_date means now.
SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{}', ''::bytea,
		'us-east-1', 'service', akid, secret, '', at) ? 'X-Amz-Security-Token' AS has_token
FROM suite;
SELECT d ~ '^\d{8}T\d{6}Z$' AS well_formed,
       abs(extract(epoch FROM to_timestamp(d, 'YYYYMMDD"T"HH24MISS"Z"')::timestamp
           - (now() AT TIME ZONE 'UTC'))) < 120 AS is_now
FROM suite, LATERAL (SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/',
		NULL, NULL, 'us-east-1', 'service', akid, secret) ->> 'X-Amz-Date' AS d) s;

-- Bad input: each refused with its own SQLSTATE and message.  The secret
-- here is a marker; the last query checks that no message shows it.
CREATE TEMP TABLE bad(label text, stmt text);
INSERT INTO bad VALUES
 ('not a URL', $$SELECT fairshare.sigv4_sign('GET', 'example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('ftp URL', $$SELECT fairshare.sigv4_sign('GET', 'ftp://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('user in URL', $$SELECT fairshare.sigv4_sign('GET', 'https://me:SECRET-MARKER-42@example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('bad port', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com:99999/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('newline in URL', $$SELECT fairshare.sigv4_sign('GET', E'https://example.amazonaws.com/a\nb', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('headers an array', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '["Host"]', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('headers a string', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '"Host"', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('header value object', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{"X-A": {"b": 1}}', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('header value null', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{"X-A": null}', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('header value CRLF', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{"X-A": "1\r\nX-Injected: 2"}', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('header name', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{"X A": "1"}', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('Date header', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', '{"Date": "Sun, 30 Aug 2015 12:36:00 GMT"}', NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('method', $$SELECT fairshare.sigv4_sign('GET /', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('amz_date format', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '2015-08-30T12:36:00Z')$$),
 ('amz_date day', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150230T123600Z')$$),
 ('region', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us east 1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('access key', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKID/EXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$),
 ('token', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', E'SECRET-MARKER-42\n', '20150830T123600Z')$$),
 ('secret null', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', NULL, NULL, '20150830T123600Z')$$),
 ('secret empty', $$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', '', NULL, '20150830T123600Z')$$),
 ('url null', $$SELECT fairshare.sigv4_sign('GET', NULL, NULL, NULL, 'us-east-1', 'sagemaker', 'AKIDEXAMPLE', 'SECRET-MARKER-42', NULL, '20150830T123600Z')$$);
SELECT label, public.regress_try(stmt) AS result FROM bad ORDER BY label;
SELECT count(*) AS messages_showing_the_secret FROM bad WHERE public.regress_try(stmt) LIKE '%SECRET-MARKER%';

-- Privileges: only fairshare_admin (and superusers) may execute.
CREATE ROLE regress_aws_admin IN ROLE fairshare_admin;
CREATE ROLE regress_aws_submitter IN ROLE fairshare_submitter;
CREATE ROLE regress_aws_viewer IN ROLE fairshare_viewer;
CREATE ROLE regress_aws_nobody;
SELECT f, has_function_privilege('public', f, 'EXECUTE') AS public,
       has_function_privilege('fairshare_admin', f, 'EXECUTE') AS admin,
       has_function_privilege('fairshare_submitter', f, 'EXECUTE') AS submitter,
       has_function_privilege('fairshare_viewer', f, 'EXECUTE') AS viewer
FROM unnest(ARRAY['fairshare.sigv4_sign(text,text,jsonb,bytea,text,text,text,text,text,text)',
                  'fairshare.aws_credentials_info()', 'fairshare.aws_region()']) AS f;
CREATE TEMP TABLE calls(stmt text);
INSERT INTO calls VALUES
 ($$SELECT fairshare.sigv4_sign('GET', 'https://example.amazonaws.com/', NULL, NULL, 'us-east-1', 'service', 'AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', NULL, '20150830T123600Z')$$),
 ($$SELECT fairshare.aws_credentials_info()$$),
 ($$SELECT fairshare.aws_region()$$);
GRANT SELECT ON calls TO PUBLIC;
SET ROLE regress_aws_admin;
SELECT public.regress_try(stmt) FROM calls WHERE stmt LIKE '%sigv4_sign%';
SET ROLE regress_aws_submitter;
SELECT public.regress_try(stmt) FROM calls;
SET ROLE regress_aws_viewer;
SELECT public.regress_try(stmt) FROM calls;
SET ROLE regress_aws_nobody;
SELECT public.regress_try(stmt) FROM calls;
RESET ROLE;

DROP ROLE regress_aws_admin, regress_aws_submitter, regress_aws_viewer, regress_aws_nobody;
