-- 89_api_common.sql — what every AWS Batch API operation shares: ARNs,
-- times, and the errors the API server turns into AWS error responses.
--
-- Each operation of the API is a SQL function
--     fairshare._api_<operation in snake_case>(request jsonb) RETURNS jsonb
-- taking the request's JSON body (with the URI's path and query parameters
-- merged in under their model names) and returning the response body.  The
-- API server (src/api/) runs it as the role of the request's key, so grants
-- and row-level security apply exactly as they do in SQL.  The functions
-- raise errors with these SQLSTATEs, which the server answers with
-- ClientException (HTTP 400) and the error's message:
--   22023 invalid_parameter_value    bad input (type, range, unknown field value)
--   P0002 no_data_found              the id or name refers to nothing the caller may see
--   42501 insufficient_privilege     the key's role may not do this
--   55000 object_not_in_prerequisite_state, 2BP01, 23xxx   conflicts with the state
-- Any other error is a ServerException (HTTP 500) whose message says nothing
-- about the server's internals.

-- The region and account that ARNs name.  The region is the dispatcher's,
-- fairshare.aws_region() (fairshare.region, else AWS_REGION, else
-- AWS_DEFAULT_REGION of the server's environment), else us-east-1: the
-- region the API server checks signatures for (src/api/api_call.c resolves
-- it the same way).  The account is fairshare.api_account_id (else twelve
-- zeros).
--
-- These small helpers are PL/pgSQL rather than SQL although each is one
-- expression: a SQL function with a SET clause is never inlined, and it is
-- parsed and planned again in every transaction that calls it, while
-- PL/pgSQL keeps its plans for the session -- and the API's workers call
-- them in every request.
--
-- _api_region() runs as the owner: aws_region() is for admins (50_aws.sql),
-- and the API's roles see the region in every ARN anyway.  Nobody else
-- needs it.
CREATE FUNCTION fairshare._api_region()
RETURNS text LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN coalesce(fairshare.aws_region(), 'us-east-1');
END
$$;
REVOKE ALL ON FUNCTION fairshare._api_region() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fairshare._api_region() TO fairshare_admin, fairshare_submitter, fairshare_viewer;

CREATE FUNCTION fairshare._api_account_id()
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN coalesce(nullif(current_setting('fairshare.api_account_id', true), ''), '000000000000');
END
$$;

-- The ARN of a resource, as AWS Batch forms it: kind is service-job,
-- job-queue, service-environment, scheduling-policy or quota-share; a quota
-- share's name is '<queue>/<share>' and its ARN
-- ...:job-queue/<queue>/quota-share/<share>.
CREATE FUNCTION fairshare._api_arn(kind text, name text)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN 'arn:aws:batch:' || fairshare._api_region() || ':' || fairshare._api_account_id() || ':'
		   || CASE WHEN kind = 'quota-share'
				   THEN 'job-queue/' || split_part(name, '/', 1) || '/quota-share/' || split_part(name, '/', 2)
				   ELSE kind || '/' || name END;
END
$$;

-- The name (or decimal job id) a parameter refers to: the parameter itself,
-- or the last part of an ARN of the expected kind.  An ARN of another kind,
-- region or account is refused (22023).  For quota-share the result is
-- '<queue>/<share>'.
CREATE FUNCTION fairshare._api_resource_name(kind text, id_or_arn text, parameter text)
RETURNS text LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
DECLARE
	prefix text;
	rest text;
	parts text[];
BEGIN
	IF id_or_arn IS NULL OR id_or_arn = '' THEN
		RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = format('%s is required', parameter);
	END IF;
	IF NOT starts_with(id_or_arn, 'arn:') THEN
		RETURN id_or_arn;
	END IF;
	prefix := 'arn:aws:batch:' || fairshare._api_region() || ':' || fairshare._api_account_id() || ':';
	IF NOT starts_with(id_or_arn, prefix) THEN
		RAISE EXCEPTION USING ERRCODE = '22023',
			MESSAGE = format('%s "%s" is not an ARN of this fairshare installation', parameter, id_or_arn),
			HINT = format('ARNs here begin with %s', prefix);
	END IF;
	rest := substr(id_or_arn, length(prefix) + 1);
	IF kind = 'quota-share' THEN
		parts := regexp_match(rest, '^job-queue/([^/]+)/quota-share/([^/]+)$');
		IF parts IS NOT NULL THEN
			RETURN parts[1] || '/' || parts[2];
		END IF;
	ELSIF starts_with(rest, kind || '/') AND strpos(substr(rest, length(kind) + 2), '/') = 0 THEN
		RETURN substr(rest, length(kind) + 2);
	END IF;
	RAISE EXCEPTION USING ERRCODE = '22023',
		MESSAGE = format('%s "%s" is not a %s ARN', parameter, id_or_arn, kind);
END
$$;

-- Times in the API are milliseconds since the epoch.
CREATE FUNCTION fairshare._api_epoch_ms(t timestamptz)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, fairshare, pg_temp AS $$
BEGIN
	RETURN (extract(epoch FROM t) * 1000)::bigint;
END
$$;
