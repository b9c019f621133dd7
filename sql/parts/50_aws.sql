-- AWS: SigV4 signing and the credential chain (src/aws/).
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
