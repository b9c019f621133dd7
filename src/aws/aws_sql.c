/*-------------------------------------------------------------------------
 *
 * aws_sql.c
 *		SQL-callable wrappers around the SigV4 signer and the credential
 *		chain: fairshare.sigv4_sign(), fairshare.aws_credentials_info(),
 *		fairshare.aws_region().
 *
 * These are for administrators and tests (EXECUTE is granted to
 * fairshare_admin only, see sql/parts/50_aws.sql).  They must never return,
 * log or report a secret: sigv4_sign returns only the headers to send (the
 * session token among them is the caller's own argument), its errors name
 * the bad argument and hide the statement (which holds the secret) from the
 * server log, and aws_credentials_info shows where credentials come from,
 * not what they are.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "aws/credentials.h"
#include "aws/redact.h"
#include "aws/sigv4.h"
#include "datums.h"

PG_FUNCTION_INFO_V1(fairshare_sigv4_sign);
PG_FUNCTION_INFO_V1(fairshare_aws_credentials_info);
PG_FUNCTION_INFO_V1(fairshare_aws_region);

/*
 * Every error of sigv4_sign hides the statement from the server log
 * (log_min_error_statement would print it, with the secret key argument).
 */
#define SIGN_ERROR(code, ...) \
	ereport(ERROR, (errcode(code), errmsg(__VA_ARGS__), errhidestmt(true)))

typedef struct HeaderList
{
	FsSigV4Header *items;
	size_t		n;
	size_t		cap;
} HeaderList;

static void
add_header(HeaderList *hl, const char *name, JsonbValue *v)
{
	char	   *value;

	if (v->type == jbvString)
		value = pnstrdup(v->val.string.val, v->val.string.len);
	else if (v->type == jbvNumeric)
		value = DatumGetCString(DirectFunctionCall1(numeric_out,
													NumericGetDatum(v->val.numeric)));
	else
		SIGN_ERROR(ERRCODE_INVALID_PARAMETER_VALUE,
				   "header \"%s\" must have a string value or an array of string values",
				   name);
	if (hl->n == hl->cap)
	{
		hl->cap = hl->cap ? hl->cap * 2 : 16;
		hl->items = hl->items ? repalloc(hl->items, hl->cap * sizeof(FsSigV4Header))
			: palloc(hl->cap * sizeof(FsSigV4Header));
	}
	hl->items[hl->n].name = name;
	hl->items[hl->n].value = value;
	hl->n++;
}

/*
 * {"Name": "value", "Other": ["v1", "v2"], ...} into a list in which a name
 * with an array of values appears once per value, in array order.
 */
static void
headers_from_jsonb(Jsonb *jb, HeaderList *hl)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken r;
	char	   *name = NULL;
	int			depth = 0;
	bool		in_array = false;

	if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
		SIGN_ERROR(ERRCODE_INVALID_PARAMETER_VALUE,
				   "headers must be a JSON object mapping header names to values");
	it = JsonbIteratorInit(&jb->root);
	while ((r = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (r)
		{
			case WJB_BEGIN_OBJECT:
				if (++depth > 1)
					SIGN_ERROR(ERRCODE_INVALID_PARAMETER_VALUE,
							   "header \"%s\" must have a string value or an array of string values",
							   name);
				break;
			case WJB_END_OBJECT:
				depth--;
				break;
			case WJB_KEY:
				name = pnstrdup(v.val.string.val, v.val.string.len);
				break;
			case WJB_VALUE:
				add_header(hl, name, &v);
				break;
			case WJB_BEGIN_ARRAY:
				if (in_array)
					SIGN_ERROR(ERRCODE_INVALID_PARAMETER_VALUE,
							   "header \"%s\" must have a string value or an array of string values",
							   name);
				in_array = true;
				break;
			case WJB_ELEM:
				add_header(hl, name, &v);
				break;
			case WJB_END_ARRAY:
				in_array = false;
				break;
			case WJB_DONE:
				break;
		}
	}
}

static char *
required_text(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		SIGN_ERROR(ERRCODE_NULL_VALUE_NOT_ALLOWED, "%s must not be null", argname);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

static void
push_bool(JsonbParseState **state, const char *key, bool value)
{
	JsonbValue	k,
				v;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	pushJsonbValue(state, WJB_KEY, &k);
	v.type = jbvBool;
	v.val.boolean = value;
	pushJsonbValue(state, WJB_VALUE, &v);
}

static void
wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
}

/*
 * fairshare.sigv4_sign(method, url, headers, body, region, service,
 *						access_key_id, secret_access_key, session_token,
 *						amz_date) RETURNS jsonb
 *
 * The headers SigV4 adds to the request: Authorization, X-Amz-Date,
 * X-Amz-Security-Token when session_token is given, X-Amz-Content-SHA256
 * for service s3.  headers and body may be NULL (none); session_token NULL
 * or '' means none; amz_date NULL means now.
 */
Datum
fairshare_sigv4_sign(PG_FUNCTION_ARGS)
{
	char	   *method = required_text(fcinfo, 0, "method");
	char	   *url = required_text(fcinfo, 1, "url");
	char	   *region = required_text(fcinfo, 4, "region");
	char	   *service = required_text(fcinfo, 5, "service");
	char	   *akid = required_text(fcinfo, 6, "access_key_id");
	char	   *secret = required_text(fcinfo, 7, "secret_access_key");
	char	   *token = PG_ARGISNULL(8) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(8));
	char		now_date[FS_SIGV4_AMZ_DATE_LEN + 1];
	char	   *amz_date;
	HeaderList	hl = {0};
	FsSigV4Request req;
	FsSigV4Credentials cred;
	FsSigV4Result res;
	FsSigV4Status st;
	char		err[256];
	JsonbParseState *state = NULL;
	JsonbValue *out;
	Jsonb	   *result;

	if (!PG_ARGISNULL(2))
		headers_from_jsonb(PG_GETARG_JSONB_P(2), &hl);
	if (PG_ARGISNULL(9))
	{
		if (!fs_sigv4_format_amz_date(time(NULL), now_date))
			SIGN_ERROR(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE, "the current time cannot be written as an amz_date");
		amz_date = now_date;
	}
	else
		amz_date = text_to_cstring(PG_GETARG_TEXT_PP(9));

	req = (FsSigV4Request)
	{
		.method = method, .url = url, .headers = hl.items, .nheaders = hl.n,
		.region = region, .service = service, .amz_date = amz_date
	};
	if (!PG_ARGISNULL(3))
	{
		bytea	   *body = PG_GETARG_BYTEA_PP(3);

		req.body = (const unsigned char *) VARDATA_ANY(body);
		req.body_len = VARSIZE_ANY_EXHDR(body);
	}
	cred = (FsSigV4Credentials)
	{
		.access_key_id = akid, .secret_access_key = secret, .session_token = token
	};

	st = fs_sigv4_sign(&req, &cred, &res, err, sizeof(err));
	wipe(secret);
	if (st != FS_SIGV4_OK)
	{
		int			code;

		switch (st)
		{
			case FS_SIGV4_INVALID_DATE:
				code = ERRCODE_INVALID_DATETIME_FORMAT;
				break;
			case FS_SIGV4_OUT_OF_MEMORY:
				code = ERRCODE_OUT_OF_MEMORY;
				break;
			case FS_SIGV4_CRYPTO_FAILURE:
				code = ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
				break;
			default:
				code = ERRCODE_INVALID_PARAMETER_VALUE;
				break;
		}
		wipe(token);
		SIGN_ERROR(code, "could not sign the request: %s", err);
	}

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "Authorization", res.authorization);
	fairshare_jsonb_push_string(&state, "X-Amz-Date", res.amz_date);
	if (res.security_token)
		fairshare_jsonb_push_string(&state, "X-Amz-Security-Token", res.security_token);
	if (res.content_sha256)
		fairshare_jsonb_push_string(&state, "X-Amz-Content-SHA256", res.content_sha256);
	out = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	/* the JsonbValues point into res: flatten before freeing it */
	result = JsonbValueToJsonb(out);
	fs_sigv4_result_free(&res);
	wipe(token);

	PG_RETURN_JSONB_P(result);
}

/*
 * fairshare.aws_credentials_info() RETURNS jsonb
 *
 * Where the credential chain finds credentials now (fetching or refreshing
 * them if needed), without revealing them:
 *	{"source": "environment"|"shared_file"|"container"|"imds",
 *	 "access_key_id": "****************MPLE", "has_session_token": true,
 *	 "expires_at": "2025-01-31T12:00:00Z" or null, "refresh_at": ... or null,
 *	 "profile": "default" (shared_file), "endpoint": URL (container, imds)}
 */
Datum
fairshare_aws_credentials_info(PG_FUNCTION_ARGS)
{
	const FsAwsCredentials *c = fs_aws_get_credentials();
	JsonbParseState *state = NULL;
	JsonbValue *out;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "source", fs_aws_source_name(c->source));
	fairshare_jsonb_push_string(&state, "access_key_id", fs_aws_mask_key(c->access_key_id));
	push_bool(&state, "has_session_token", c->session_token != NULL);
	fairshare_jsonb_push_string(&state, "expires_at", c->expires ? fs_aws_iso8601(c->expires_at) : NULL);
	fairshare_jsonb_push_string(&state, "refresh_at", c->expires ? fs_aws_iso8601(c->refresh_at) : NULL);
	if (c->source == FS_AWS_SOURCE_SHARED_FILE)
		fairshare_jsonb_push_string(&state, "profile", c->origin);
	else if (c->origin)
		fairshare_jsonb_push_string(&state, "endpoint", c->origin);
	out = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(out));
}

/*
 * fairshare.aws_region() RETURNS text: fairshare.region, else AWS_REGION,
 * else AWS_DEFAULT_REGION of the server's environment; NULL when none.
 */
Datum
fairshare_aws_region(PG_FUNCTION_ARGS)
{
	const char *region = fs_aws_region();

	if (region == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(region));
}
