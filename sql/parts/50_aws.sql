-- AWS: SigV4 signing, the credential chain and SageMaker calls (src/aws/).
--
-- Every function here deals with secrets or reveals where they come from,
-- so EXECUTE is revoked from PUBLIC and granted to fairshare_admin only
-- (superusers can always execute).  None of them stores or logs a secret.

-- The headers SigV4 adds to a request: Authorization, X-Amz-Date, and
-- X-Amz-Security-Token when session_token is given (X-Amz-Content-SHA256
-- too for service s3).  headers is a JSON object of names to a string or an
-- array of strings (one per repeated header, in order); headers and body
-- may be NULL.  session_token NULL or '' means none; amz_date
-- (YYYYMMDDTHHMMSSZ, UTC) NULL means now.
CREATE FUNCTION fairshare.sigv4_sign(method text, url text, headers jsonb,
                                     body bytea, region text, service text,
                                     access_key_id text,
                                     secret_access_key text,
                                     session_token text DEFAULT NULL,
                                     amz_date text DEFAULT NULL)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_sigv4_sign';

COMMENT ON FUNCTION fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text)
IS 'Headers that sign a request with AWS Signature Version 4, as botocore signs it';

-- Where the server's credential chain finds AWS credentials now, without
-- revealing them: source, masked access key id, expiry and refresh times.
CREATE FUNCTION fairshare.aws_credentials_info()
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'fairshare_aws_credentials_info';

COMMENT ON FUNCTION fairshare.aws_credentials_info()
IS 'Source, masked key id and expiry of the AWS credentials the server would use';

-- fairshare.region, else AWS_REGION, else AWS_DEFAULT_REGION; NULL if none.
CREATE FUNCTION fairshare.aws_region()
RETURNS text
LANGUAGE C STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_aws_region';

COMMENT ON FUNCTION fairshare.aws_region()
IS 'AWS region the extension uses: fairshare.region, else AWS_REGION, else AWS_DEFAULT_REGION';

REVOKE EXECUTE ON FUNCTION
    fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text),
    fairshare.aws_credentials_info(),
    fairshare.aws_region()
FROM PUBLIC;

GRANT EXECUTE ON FUNCTION
    fairshare.sigv4_sign(text, text, jsonb, bytea, text, text, text, text, text, text),
    fairshare.aws_credentials_info(),
    fairshare.aws_region()
TO fairshare_admin;

-- ---------------------------------------------------------------------
-- SageMaker calls through the request engine (src/aws/sagemaker_client.c).
-- They act with the server's AWS credentials, so, like the functions
-- above, they are for superusers and fairshare_admin only.

-- One signed call; returns the answer's body, or raises an error that
-- names SageMaker's error type and message (errdetail: HTTP status, tries,
-- error class, request id).  The endpoint is fairshare.endpoint_url, else
-- AWS_ENDPOINT_URL_SAGEMAKER, else https://api.sagemaker.<region>.amazonaws.com.
CREATE FUNCTION fairshare.sagemaker_call(operation text, request jsonb)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_call';

COMMENT ON FUNCTION fairshare.sagemaker_call(text, jsonb)
IS 'One signed SageMaker call (CreateTrainingJob, DescribeTrainingJob, StopTrainingJob, ListTrainingJobs), retried as the dispatcher retries';

-- Where calls go for a service environment with this endpoint_url and
-- region (NULL = not set): {"url", "region", "source"}.
CREATE FUNCTION fairshare.sagemaker_endpoint(endpoint_url text DEFAULT NULL,
                                             region text DEFAULT NULL)
RETURNS jsonb
LANGUAGE C STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_endpoint';

COMMENT ON FUNCTION fairshare.sagemaker_endpoint(text, text)
IS 'The SageMaker endpoint URL and region a call would use, and where the URL comes from';

-- Test-only: many calls at once through a fresh engine, one row each, in
-- array order.  options: connect_timeout_ms, timeout_ms, max_tries,
-- backoff_base_ms, throttle_backoff_base_ms, backoff_cap_ms, endpoint_url,
-- region.
CREATE FUNCTION fairshare._sagemaker_batch(operation text, requests jsonb[],
                                           options jsonb DEFAULT '{}')
RETURNS TABLE(ord int, error_class text, http_status int, error_type text,
              message text, response jsonb, tries int, ambiguous_tries int,
              new_connections int, started_ms float8, elapsed_ms float8)
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_batch';

COMMENT ON FUNCTION fairshare._sagemaker_batch(text, jsonb[], jsonb)
IS 'Test-only: submit many SageMaker calls at once and report each one''s outcome';

-- Test-only: one call, one fs_sm_wait(wait_ms); shows whether a set latch
-- ended the wait early.
CREATE FUNCTION fairshare._sagemaker_wait_test(operation text, request jsonb, wait_ms int)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_wait_test';

COMMENT ON FUNCTION fairshare._sagemaker_wait_test(text, jsonb, int)
IS 'Test-only: does setting this backend''s latch end the SageMaker engine''s wait';

-- Test-only: calls moved along by fs_sm_pump() alone while the caller is
-- busy, as the dispatcher's are during a scheduling pass.
CREATE FUNCTION fairshare._sagemaker_pump_test(operation text, requests jsonb[], busy_ms int, pump boolean)
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL UNSAFE
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_pump_test';

COMMENT ON FUNCTION fairshare._sagemaker_pump_test(text, jsonb[], int, boolean)
IS 'Test-only: do SageMaker calls progress through the non-blocking pump while the caller is busy';

-- Test-only: curl handles alive in this backend.
CREATE FUNCTION fairshare._sagemaker_client_stats()
RETURNS jsonb
LANGUAGE C VOLATILE PARALLEL RESTRICTED
AS 'MODULE_PATHNAME', 'fairshare_sagemaker_client_stats';

COMMENT ON FUNCTION fairshare._sagemaker_client_stats()
IS 'Test-only: SageMaker clients and curl handles alive in this backend';

REVOKE EXECUTE ON FUNCTION
    fairshare.sagemaker_call(text, jsonb),
    fairshare.sagemaker_endpoint(text, text),
    fairshare._sagemaker_batch(text, jsonb[], jsonb),
    fairshare._sagemaker_wait_test(text, jsonb, int),
    fairshare._sagemaker_pump_test(text, jsonb[], int, boolean),
    fairshare._sagemaker_client_stats()
FROM PUBLIC;

-- The test-only functions stay the superuser's: _sagemaker_batch takes an
-- endpoint_url of its own, so an admin could send signed requests (the
-- access key id and session token in their headers) and a body of its
-- choosing to any host.
GRANT EXECUTE ON FUNCTION
    fairshare.sagemaker_call(text, jsonb),
    fairshare.sagemaker_endpoint(text, text)
TO fairshare_admin;
