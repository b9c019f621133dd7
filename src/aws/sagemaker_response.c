/*-------------------------------------------------------------------------
 *
 * sagemaker_response.c
 *		What a finished try of a SageMaker call means: its body parsed, its
 *		error type and message read, and the answer (or the transport
 *		failure) mapped to an error class and to what the engine should do
 *		next -- report it, retry it, or refresh credentials and retry.
 *
 * The mapping follows botocore: its throttling and transient error names,
 * its way of cutting "__type" ("ns#Name:uri" -> "Name"), and SageMaker's
 * own answers ("ValidationException: Requested resource not found" is a
 * not-found).  src/aws/README.md has the table of classes.  Whether a
 * retry still has tries left, and the backoff before it, are the engine's
 * business (sagemaker_client.c, try_finished): this file only classifies.
 *
 * A body may quote back a credential (AWS echoes access key ids): it is
 * redacted (aws/redact.h) before anything keeps it, and parser errors on a
 * bad body are caught without their text.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"

#include "aws/credentials.h"
#include "aws/curl_prelude.h"
#include "aws/redact.h"
#include "aws/sagemaker_client.h"
#include "aws/sagemaker_internal.h"

static const char *const error_class_names[FS_SM_NUM_ERROR_CLASSES] = {
	"OK",
	"RETRYABLE_EXHAUSTED",
	"VALIDATION",
	"RESOURCE_IN_USE",
	"RESOURCE_NOT_FOUND",
	"RESOURCE_LIMIT_EXCEEDED",
	"AUTH",
	"ACCESS_DENIED",
	"OTHER_CLIENT_ERROR",
	"ENDPOINT",
	"TRANSPORT"
};

/* botocore's throttling error codes (botocore/retries/standard.py) */
static const char *const throttling_names[] = {
	"Throttling", "ThrottlingException", "ThrottledException",
	"RequestThrottledException", "TooManyRequestsException",
	"ProvisionedThroughputExceededException", "TransactionInProgressException",
	"RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException",
	"RequestThrottled", "SlowDown", "EC2ThrottledException", NULL
};

/* transient server-side errors, whatever their HTTP status */
static const char *const transient_names[] = {
	"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete",
	"InternalFailure", "InternalError", "InternalServerError",
	"InternalServerException", "ServiceUnavailable",
	"ServiceUnavailableException", NULL
};

/* credentials that a fresh fetch may fix (prefix match for ExpiredToken) */
static const char *const refresh_names[] = {
	"InvalidSignatureException", "InvalidSignature",
	"UnrecognizedClientException", "InvalidClientTokenId", NULL
};

/* other answers meaning "these credentials are not accepted" */
static const char *const auth_names[] = {
	"MissingAuthenticationTokenException", "MissingAuthenticationToken",
	"IncompleteSignatureException", "IncompleteSignature",
	"SignatureDoesNotMatch", "AuthFailure", "RequestExpired", NULL
};

static const char *const access_names[] = {
	"AccessDeniedException", "AccessDenied", "NotAuthorized",
	"UnauthorizedOperation", NULL
};

static const char *const validation_names[] = {
	"ValidationException", "ValidationError", "SerializationException",
	"InvalidParameterValue", "InvalidParameterValueException",
	"InvalidParameterCombination", "MissingParameter", NULL
};

/* -------------------------------------------------------------- names */

const char *
fs_sm_error_class_name(FsSmErrorClass cls)
{
	if ((int) cls < 0 || (int) cls >= FS_SM_NUM_ERROR_CLASSES)
		return "unknown";
	return error_class_names[cls];
}

static bool
name_in(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------ answers */

/*
 * A JSON text's \u0000 escapes made storable, in place: jsonb holds no NUL,
 * and SageMaker quotes text the job's own code wrote (a training script's
 * /opt/ml/output/failure becomes the FailureReason).  An answer that could
 * not be stored would be asked for again at every poll, and the job would
 * never end.  The character becomes U+FFFD, or "?" where the database's
 * encoding has no U+FFFD.  A backslash that is escaped itself ("\\")
 * starts nothing.
 */
static void
replace_nul_escapes(char *json)
{
	const char *replacement = GetDatabaseEncoding() == PG_UTF8 ? "FFFD" : "003F";

	for (char *p = json; *p; p++)
	{
		if (*p != '\\' || p[1] == '\0')
			continue;
		if (strncmp(p + 1, "u0000", 5) == 0)
			memcpy(p + 2, replacement, 4);
		p++;					/* the escaped character */
	}
}

/*
 * Parse a response body with PostgreSQL's JSON code into a flat Jsonb in
 * the client's context; NULL with *problem set when it is not valid UTF-8
 * JSON.  The parsers raise on bad input (and on absurd nesting, through
 * check_stack_depth); those errors hold nothing but our scratch memory, so
 * they are caught here -- except a cancel or out-of-memory, which go on.
 */
static Jsonb *
parse_body(FsSmClient *c, const char *data, size_t len, const char **problem)
{
	MemoryContext old = MemoryContextSwitchTo(c->scratch);
	Jsonb	   *volatile result = NULL;

	*problem = NULL;
	if (!pg_verify_mbstr(PG_UTF8, data, len, true))
	{
		*problem = "the answer is not valid UTF-8";
		MemoryContextSwitchTo(old);
		return NULL;
	}
	PG_TRY();
	{
		/* Nothing AWS quotes back may keep a credential (aws/redact.h). */
		char	   *text = fs_aws_redact(pg_any_to_server(data, len, PG_UTF8),
										 fs_aws_credentials_without_fetch());
		JsonLexContext *lex;

		if (strstr(text, "\\u0000") != NULL)
		{
			/* may be the answer's own buffer: change a copy */
			text = pstrdup(text);
			replace_nul_escapes(text);
		}
		lex = makeJsonLexContextCstringLen(text, strlen(text), GetDatabaseEncoding(), true);

		if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
			*problem = "the answer is not valid JSON";
		else
		{
			Jsonb	   *jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
															   CStringGetDatum(text)));
			Jsonb	   *copy = MemoryContextAlloc(c->cxt, VARSIZE(jb));

			memcpy(copy, jb, VARSIZE(jb));
			result = copy;
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(c->scratch);
		edata = CopyErrorData();
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
			edata->sqlerrcode == ERRCODE_OUT_OF_MEMORY)
			PG_RE_THROW();
		FlushErrorState();
		*problem = "the answer is not JSON that PostgreSQL can store";
		result = NULL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	return result;
}

/* The string value of a top-level key of an object, or NULL; palloc'd. */
static char *
jsonb_string_field(Jsonb *jb, const char *key)
{
	JsonbValue *v;

	if (jb == NULL || !JB_ROOT_IS_OBJECT(jb))
		return NULL;
	v = getKeyJsonValueFromContainer(&jb->root, key, strlen(key), NULL);
	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/*
 * "com.amazonaws.sagemaker#ValidationException" -> "ValidationException";
 * "ValidationException:http://internal.amazon.com/..." -> the same.
 * As botocore: cut at the first ':', then keep what follows the last '#'.
 */
static char *
normalize_type(const char *raw)
{
	char	   *s = pstrdup(raw);
	char	   *p;

	if ((p = strchr(s, ':')) != NULL)
		*p = '\0';
	if ((p = strrchr(s, '#')) != NULL)
		memmove(s, p + 1, strlen(p + 1) + 1);
	return s;
}

/* Whether a transport failure may have reached SageMaker. */
bool
request_was_sent(SmRequest *r)
{
	long		sent = 0;

	if (curl_easy_getinfo(r->easy, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK)
		return true;
	return sent > 0;
}

/* A try ended without an HTTP answer: what next. */
NextStep
classify_transport(FsSmClient *c, SmRequest *r, CURLcode rc,
				   FsSmErrorClass *cls, const char **type)
{
	bool		sent = request_was_sent(r);

	*cls = FS_SM_TRANSPORT;
	switch (rc)
	{
		case CURLE_OPERATION_TIMEDOUT:
			*type = "Timeout";
			break;
		case CURLE_COULDNT_CONNECT:
			*type = "ConnectionFailed";
			break;
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_RESOLVE_PROXY:
			*type = "ResolveFailed";
			break;
		case CURLE_GOT_NOTHING:
		case CURLE_SEND_FAIL_REWIND:	/* a resend we refused (no_resend) */
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_PARTIAL_FILE:
		case CURLE_HTTP2:
		case CURLE_HTTP2_STREAM:
			*type = "ConnectionDropped";
			break;
		case CURLE_WEIRD_SERVER_REPLY:
			*type = "InvalidResponse";
			break;
		case CURLE_SSL_CONNECT_ERROR:
			*type = "TLSError";
			break;
		case CURLE_PEER_FAILED_VERIFICATION:
		case CURLE_SSL_CACERT_BADFILE:
		case CURLE_SSL_CERTPROBLEM:
		case CURLE_SSL_ISSUER_ERROR:
		case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
		case CURLE_SSL_CRL_BADFILE:
			*type = "TLSVerificationFailed";
			return STEP_FINAL;
		case CURLE_WRITE_ERROR:
			*type = r->buf.too_large ? "ResponseTooLarge" : "OutOfMemory";
			return STEP_FINAL;
		default:
			*type = "TransportError";
			return STEP_FINAL;
	}
	if (sent)
		r->ambiguous_tries++;
	*cls = FS_SM_RETRYABLE_EXHAUSTED;
	return STEP_RETRY;
}

/* Whether a body is empty or only white space. */
static bool
blank(const char *data, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
		if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n')
			return false;
	return true;
}

/* A try got an HTTP answer: parse it, classify it, say what next. */
NextStep
classify_answer(FsSmClient *c, SmRequest *r, FsSmErrorClass *cls)
{
	const char *problem = NULL;
	Jsonb	   *jb = NULL;
	long		st = r->http_status;
	const char *t;
	MemoryContext old;

	if (!blank(r->buf.data, r->buf.len))
		jb = parse_body(c, r->buf.data, r->buf.len, &problem);
	r->response = jb;

	if (st >= 200 && st < 300)
	{
		if (blank(r->buf.data, r->buf.len))
		{
			/* StopTrainingJob may answer with no body at all */
			old = MemoryContextSwitchTo(c->cxt);
			r->response = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
			MemoryContextSwitchTo(old);
		}
		if (r->response != NULL)
		{
			*cls = FS_SM_OK;
			return STEP_FINAL;
		}
		/* a 2xx we cannot read: the call may have been carried out */
		r->ambiguous_tries++;
		old = MemoryContextSwitchTo(c->cxt);
		r->error_type = pstrdup("InvalidResponse");
		r->message = psprintf("HTTP status %ld, but %s", st, problem);
		MemoryContextSwitchTo(old);
		*cls = FS_SM_RETRYABLE_EXHAUSTED;
		return STEP_RETRY;
	}

	old = MemoryContextSwitchTo(c->cxt);
	{
		char	   *raw = jsonb_string_field(jb, "__type");

		if (raw == NULL && r->hdr_error_type[0])
			raw = pstrdup(r->hdr_error_type);
		if (raw)
		{
			r->error_type = normalize_type(raw);
			pfree(raw);
			if (r->error_type[0] == '\0')
			{
				pfree(r->error_type);
				r->error_type = NULL;
			}
		}
		r->message = jsonb_string_field(jb, "message");
		if (r->message == NULL)
			r->message = jsonb_string_field(jb, "Message");
		if (r->message == NULL)
			r->message = problem ? psprintf("HTTP status %ld; %s", st, problem)
				: psprintf("HTTP status %ld", st);
	}
	MemoryContextSwitchTo(old);
	t = r->error_type ? r->error_type : "";

	if (st >= 500)
		r->ambiguous_tries++;

	if (name_in(t, throttling_names) || st == 429)
	{
		*cls = FS_SM_RETRYABLE_EXHAUSTED;
		return STEP_RETRY_THROTTLED;
	}
	if (name_in(t, transient_names) || st >= 500 || st == 408)
	{
		*cls = FS_SM_RETRYABLE_EXHAUSTED;
		return STEP_RETRY;
	}
	if (strncmp(t, "ExpiredToken", 12) == 0 || name_in(t, refresh_names))
	{
		*cls = FS_SM_AUTH;
		return STEP_REFRESH_CREDENTIALS;
	}
	if (name_in(t, auth_names) || st == 401)
		*cls = FS_SM_AUTH;
	else if (name_in(t, access_names) || st == 403)
		*cls = FS_SM_ACCESS_DENIED;
	else if (strcmp(t, "ResourceNotFound") == 0 || strcmp(t, "ResourceNotFoundException") == 0 ||
			 (strcmp(t, "ValidationException") == 0 &&
			  strncmp(r->message, "Requested resource not found", 28) == 0))
		*cls = FS_SM_RESOURCE_NOT_FOUND;
	else if (name_in(t, validation_names))
		*cls = FS_SM_VALIDATION;
	else if (strcmp(t, "ResourceInUse") == 0 || strcmp(t, "ResourceInUseException") == 0)
		*cls = FS_SM_RESOURCE_IN_USE;
	else if (strcmp(t, "ResourceLimitExceeded") == 0 ||
			 strcmp(t, "ResourceLimitExceededException") == 0)
		*cls = FS_SM_RESOURCE_LIMIT_EXCEEDED;
	else
		*cls = FS_SM_OTHER_CLIENT_ERROR;
	return STEP_FINAL;
}
