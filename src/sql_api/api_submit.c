/*-------------------------------------------------------------------------
 *
 * api_submit.c
 *		fairshare._api_submit_service_job(request jsonb): SubmitServiceJob of
 *		the AWS Batch API (docs/api.md), in C.
 *
 * The API server calls it once for every submit, as the role of the
 * request's key, so grants and row-level security apply as they do to any
 * INSERT of that role.  It is C, not PL/pgSQL, for speed alone: written in
 * PL/pgSQL, the thirty-odd calls of the request helpers of
 * sql/parts/90_api.sql (_api_job_members, _api_string, _api_integer,
 * _api_json, each through _reject) cost several times the INSERT itself
 * (docs/benchmarks.md, 'API').
 *
 * What a caller sees must be what those helpers give, because the API
 * server answers a 22023 with a ClientException carrying the message and
 * the hint, and clients and tests read them: the checks run in the same
 * order, with the same SQLSTATEs, messages and hints; the values quoted in
 * a message are written as jsonb writes them; the text functions whose
 * result depends on the collation or the encoding (upper, ORDER BY,
 * hashtextextended, convert_to) are PostgreSQL's own, called with the
 * collation the SQL would use.  Two tries of one role's clientToken are
 * ordered by a lock only fairshare can take (locks.c); the request hash is
 * computed as it was when the SQL did it, so that a try after an upgrade
 * agrees with a stored one on clientToken idempotency.
 *
 * Its SQL runs through kept statements (statement.h) as the caller; the
 * function's SET search_path pins pg_catalog, fairshare, pg_temp for them.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "catalog/pg_collation.h"
#include "mb/pg_wchar.h"
#include "replication/message.h"
#include "utils/json.h"
#include "utils/numeric.h"
#include "utils/varlena.h"

#include "datums.h"
#include "locks.h"
#include "statement.h"

PG_FUNCTION_INFO_V1(fairshare_api_submit_service_job);

/* The seed of the hash that keys the clientToken lock (locks.c). */
#define CLIENT_TOKEN_LOCK_SEED	26227

/* The members each object of the request may have, in the hints' order. */
static const char *const submit_members[] = {
	"jobName", "jobQueue", "retryStrategy", "schedulingPriority",
	"serviceRequestPayload", "serviceJobType", "shareIdentifier", "quotaShareName",
	"preemptionConfiguration", "timeoutConfig", "tags", "clientToken", NULL
};
static const char *const retry_members[] = {"attempts", "evaluateOnExit", NULL};
static const char *const rule_members[] = {"action", "onStatusReason", NULL};
static const char *const preemption_members[] = {"preemptionRetriesBeforeTermination", NULL};
static const char *const timeout_members[] = {"attemptDurationSeconds", NULL};

/* A jobQueue given as an ARN: the name in it, by the rule every operation shares. */
static FairshareStatement queue_name_stmt = {
	.what = "read the job queue's name from its ARN",
	.sql = "SELECT fairshare._api_resource_name('job-queue', $1, 'jobQueue')",
	.argtypes = {TEXTOID},
	.max_rows = 1,
};

/* A quotaShareName given as an ARN: '<queue>/<share>', by the same rule. */
static FairshareStatement quota_share_key_stmt = {
	.what = "read the quota share's queue and name from its ARN",
	.sql = "SELECT fairshare._api_resource_name('quota-share', $1, 'quotaShareName')",
	.argtypes = {TEXTOID},
	.max_rows = 1,
};

/*
 * The job an earlier try with this clientToken made, as the caller sees it.
 * Not read_only: run after the clientToken lock, it must take a new snapshot
 * to see the row a racing try committed while this one waited.
 */
static FairshareStatement earlier_try_stmt = {
	.what = "look up the job of an earlier try with the same clientToken",
	.sql = "SELECT s.job_id, s.request_hash, j.job_name, "
		"fairshare._api_arn('service-job', s.job_id::text) "
		"FROM fairshare.api_submissions s JOIN fairshare.jobs j USING (job_id) "
		"WHERE s.submitter_oid = $1 AND s.client_token = $2 "
		"AND s.created_at > now() - interval '8 hours' "
		"ORDER BY s.created_at DESC LIMIT 1",
	.argtypes = {OIDOID, TEXTOID},
	.max_rows = 1,
};

/*
 * Tags whose keys begin "fairshare:" are dropped from the job's tags and
 * from the payload's Tags, not refused as in SQL: fairshare sets them on
 * every training job itself, and SDK code that attaches to a training job
 * copies its tags, ours included, into the next submission (the SageMaker
 * SDK removes only the "aws:" ones).
 */
static FairshareStatement insert_job_stmt = {
	.what = "insert the submitted job",
	.sql = "INSERT INTO fairshare.jobs (job_name, job_queue, share_identifier, quota_share, "
		"scheduling_priority, request, retry_attempts, evaluate_on_exit, preemption_retries, "
		"attempt_duration_seconds, tags) "
		"VALUES ($1, $2, $3, $4, $5, "
		"CASE WHEN jsonb_typeof($6 -> 'Tags') = 'array' "
		"THEN jsonb_set($6, '{Tags}', coalesce((SELECT jsonb_agg(t ORDER BY n) "
		"FROM jsonb_array_elements($6 -> 'Tags') WITH ORDINALITY AS e(t, n) "
		"WHERE NOT coalesce(lower(t ->> 'Key') LIKE 'fairshare:%', false)), '[]')) "
		"ELSE $6 END, "
		"$7, $8, $9, $10, "
		"(SELECT jsonb_object_agg(k, v) FROM jsonb_each($11) AS e(k, v) WHERE lower(k) NOT LIKE 'fairshare:%')) "
		"RETURNING job_id, fairshare._api_arn('service-job', job_id::text)",
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, JSONBOID, INT4OID, JSONBOID,
	INT4OID, INT4OID, JSONBOID},
};

static FairshareStatement insert_submission_stmt = {
	.what = "record the job's API submission",
	.sql = "INSERT INTO fairshare.api_submissions "
		"(job_id, submitter_oid, client_token, request_hash, training_job_name) "
		"VALUES ($1, $2, $3, $4, $5)",
	.argtypes = {INT8OID, OIDOID, TEXTOID, TEXTOID, TEXTOID},
};

/* ----------------------------------------------------------------------
 * Reading the request, as the helpers of 90_api.sql read it
 * ----------------------------------------------------------------------
 */

/* The whole of a jsonb datum as a value, scalar or container. */
static void
root_value(Jsonb *jb, JsonbValue *out)
{
	if (JB_ROOT_IS_SCALAR(jb))
		(void) JsonbExtractScalar(&jb->root, out);
	else
	{
		out->type = jbvBinary;
		out->val.binary.data = &jb->root;
		out->val.binary.len = VARSIZE(jb) - VARHDRSZ;
	}
}

static bool
is_object(const JsonbValue *v)
{
	return v != NULL && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

/* A string as jsonb writes it (quoted, escaped): how messages quote input. */
static char *
json_quoted(const char *s, int len)
{
	StringInfoData buf;

	initStringInfo(&buf);
	escape_json(&buf, pnstrdup(s, len));
	return buf.data;
}

/* A member of an object, NULL when absent. */
static JsonbValue *
member(const JsonbValue *obj, const char *name)
{
	return getKeyJsonValueFromContainer(obj->val.binary.data, name, strlen(name), NULL);
}

/*
 * _api_job_members(): obj must be an object whose members are all allowed;
 * of several unknown members the message names the first in the
 * database's collation order, as the SQL's ORDER BY does.
 */
static void
check_members(const JsonbValue *obj, const char *const *allowed, const char *what)
{
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	k;
	const char *first = NULL;
	int			first_len = 0;

	if (!is_object(obj))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", what)));
	it = JsonbIteratorInit(obj->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		bool		known = false;

		if (tok != WJB_KEY)
			continue;
		for (const char *const *a = allowed; *a != NULL && !known; a++)
			known = (strlen(*a) == k.val.string.len &&
					 memcmp(*a, k.val.string.val, k.val.string.len) == 0);
		if (!known && (first == NULL ||
					   varstr_cmp(k.val.string.val, k.val.string.len, first, first_len,
								  DEFAULT_COLLATION_OID) < 0))
		{
			first = k.val.string.val;
			first_len = k.val.string.len;
		}
	}
	if (first != NULL)
	{
		StringInfoData takes;

		initStringInfo(&takes);
		for (const char *const *a = allowed; *a != NULL; a++)
			appendStringInfo(&takes, "%s%s", a == allowed ? "" : ", ", *a);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown member \"%s\" in %s", pnstrdup(first, first_len), what),
				 errhint("%s takes %s.", what, takes.data)));
	}
}

/* Absent or JSON null: NULL, or "... is required". */
static JsonbValue *
present(const JsonbValue *obj, const char *name, bool required)
{
	JsonbValue *v = member(obj, name);

	if (v != NULL && v->type != jbvNull)
		return v;
	if (required)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is required", name)));
	return NULL;
}

/* _api_string(): a member of JSON type string, NULL when absent or null. */
static char *
get_string(const JsonbValue *obj, const char *name, bool required)
{
	JsonbValue *v = present(obj, name, required);

	if (v == NULL)
		return NULL;
	if (v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a string, not %s", name, JsonbTypeName((JsonbValue *) v))));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* _api_integer(): a number holding a 32-bit integer; false when absent. */
static bool
get_integer(const JsonbValue *obj, const char *name, bool required, int32 *result)
{
	JsonbValue *v = present(obj, name, required);
	Datum		n;
	bool		out_of_range = false;

	if (v == NULL)
		return false;
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be an integer, not %s", name, JsonbTypeName((JsonbValue *) v))));
	n = NumericGetDatum(v->val.numeric);
	if (DatumGetBool(DirectFunctionCall2(numeric_eq, n,
										 DirectFunctionCall2(numeric_trunc, n, Int32GetDatum(0)))))
	{
		/* Detoasted: a numeric in a jsonb container may have a short header. */
		*result = numeric_int4_opt_error(DatumGetNumeric(n), &out_of_range);
	}
	else
		out_of_range = true;
	if (out_of_range)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be an integer, not %s", name,
						DatumGetCString(DirectFunctionCall1(numeric_out, n)))));
	return true;
}

/* _api_json(): a member that must be a JSON object or array, NULL when absent. */
static JsonbValue *
get_container(const JsonbValue *obj, const char *name, const char *json_type_wanted)
{
	JsonbValue *v = present(obj, name, false);

	if (v != NULL && strcmp(JsonbTypeName((JsonbValue *) v), json_type_wanted) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON %s, not %s", name, json_type_wanted, JsonbTypeName((JsonbValue *) v))));
	return v;
}

/*
 * serviceRequestPayload, a JSON string, as jsonb.  A parse error is the
 * client's (22023, as the SQL's EXCEPTION clause makes it); any other
 * error (too deep, too large) stays what it is.  Nothing is left to clean
 * up after jsonb_in fails, and the catch always raises, so no
 * subtransaction is needed.
 */
static Jsonb *
parse_payload(const char *text)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile Datum parsed = (Datum) 0;

	PG_TRY();
	{
		parsed = DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_INVALID_TEXT_REPRESENTATION &&
			edata->sqlerrcode != ERRCODE_UNTRANSLATABLE_CHARACTER &&
			edata->sqlerrcode != ERRCODE_CHARACTER_NOT_IN_REPERTOIRE)
			PG_RE_THROW();
		FlushErrorState();
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("serviceRequestPayload is not valid JSON"),
				 errhint("It is the CreateTrainingJob request, as a JSON string.")));
	}
	PG_END_TRY();
	return DatumGetJsonbP(parsed);
}

/* retryStrategy.evaluateOnExit as fairshare.jobs.evaluate_on_exit; NULL for no rules. */
static Jsonb *
exit_rules(const JsonbValue *rules)
{
	JsonbParseState *state = NULL;
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	rule;
	JsonbValue *built = NULL;
	int			n = 0;

	if (rules == NULL)
		return NULL;
	pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	it = JsonbIteratorInit(rules->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &rule, true)) != WJB_DONE)
	{
		char	   *given;
		char	   *action;
		char	   *reason;

		if (tok != WJB_ELEM)
			continue;
		CHECK_FOR_INTERRUPTS();
		check_members(&rule, rule_members, "an evaluateOnExit rule");
		given = get_string(&rule, "action", true);
		action = text_to_cstring(DatumGetTextPP(DirectFunctionCall1Coll(upper, DEFAULT_COLLATION_OID,
																		  CStringGetTextDatum(given))));
		if (strcmp(action, "RETRY") != 0 && strcmp(action, "EXIT") != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("evaluateOnExit action %s is not RETRY or EXIT",
							json_quoted(given, strlen(given)))));
		reason = get_string(&rule, "onStatusReason", false);
		pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
		fairshare_jsonb_push_string(&state, "action", action);
		fairshare_jsonb_push_string(&state, "on_status_reason", reason != NULL ? reason : "*");
		pushJsonbValue(&state, WJB_END_OBJECT, NULL);
		n++;
	}
	built = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	return n > 0 ? JsonbValueToJsonb(built) : NULL;
}

/*
 * The request hash of idempotency: sha256, in hex, of the request without
 * its clientToken as jsonb writes it, in UTF-8 -- the SQL's
 * encode(sha256(convert_to((request - 'clientToken')::text, 'UTF8')), 'hex').
 */
static char *
request_hash(Jsonb *request)
{
	Datum		without = DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(request),
											  CStringGetTextDatum("clientToken"));
	Datum		as_text = CStringGetTextDatum(DatumGetCString(DirectFunctionCall1(jsonb_out, without)));
	bytea	   *utf8 = DatumGetByteaPP(DirectFunctionCall2(pg_convert_to, as_text,
														   DirectFunctionCall1(namein, CStringGetDatum("UTF8"))));
	bytea	   *digest = DatumGetByteaPP(DirectFunctionCall1(sha256_bytea, PointerGetDatum(utf8)));
	char	   *hex = palloc(2 * VARSIZE_ANY_EXHDR(digest) + 1);

	hex[hex_encode(VARDATA_ANY(digest), VARSIZE_ANY_EXHDR(digest), hex)] = '\0';
	return hex;
}

/* {"jobArn", "jobName", "jobId"}: the answer, in the caller's memory context. */
static Datum
submit_answer(MemoryContext cxt, const char *arn, const char *job_name, int64 job_id)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	JsonbParseState *state = NULL;
	JsonbValue *res;
	Datum		answer;

	pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&state, "jobArn", arn);
	fairshare_jsonb_push_string(&state, "jobName", job_name);
	fairshare_jsonb_push_string(&state, "jobId", psprintf(INT64_FORMAT, job_id));
	res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	answer = JsonbPGetDatum(JsonbValueToJsonb(res));
	MemoryContextSwitchTo(old);
	return answer;
}

/* A column of the statement's one row, as text. */
static char *
column_text(int col)
{
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);
}

/* A column of the statement's one row, as bigint (never NULL here). */
static int64
column_int8(int col)
{
	bool		isnull;

	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col, &isnull));
}

/*
 * The name of the quota share a quotaShareName ARN names, which must be one
 * of queue's: every name parameter also takes the ARN (docs/api.md).  An
 * ARN of another kind, region or account is refused by
 * _api_resource_name.
 */
static char *
quota_share_of_arn(const char *arn, const char *queue)
{
	Datum		arg[1] = {CStringGetTextDatum(arn)};
	char	   *key;
	char	   *slash;

	fairshare_run_statement(&quota_share_key_stmt, arg, NULL);
	key = column_text(1);
	slash = strchr(key, '/');
	if (slash == NULL)
		elog(ERROR, "_api_resource_name gave quota share \"%s\" without its queue", key);
	*slash = '\0';
	if (strcmp(key, queue) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("quotaShareName \"%s\" is a quota share of job queue \"%s\", not of \"%s\"",
						arn, key, queue),
				 errhint("Give the quota share's name, or the ARN of a quota share of jobQueue.")));
	return slash + 1;
}

/* A parameter of a value that may be missing (NULL), SPI style. */
static Datum
text_param(const char *s, char *null)
{
	*null = s != NULL ? ' ' : 'n';
	return s != NULL ? CStringGetTextDatum(s) : (Datum) 0;
}

static Datum
jsonb_param(Jsonb *j, char *null)
{
	*null = j != NULL ? ' ' : 'n';
	return JsonbPGetDatum(j);
}

static Datum
int4_param(bool present, int32 v, char *null)
{
	*null = present ? ' ' : 'n';
	return Int32GetDatum(v);
}

/* ----------------------------------------------------------------------
 * SubmitServiceJob
 * ----------------------------------------------------------------------
 */

/*
 * fairshare._api_submit_service_job(request jsonb) RETURNS jsonb.  Not
 * STRICT: a NULL request is refused like any other non-object.
 */
Datum
fairshare_api_submit_service_job(PG_FUNCTION_ARGS)
{
	MemoryContext caller_cxt = CurrentMemoryContext;
	Jsonb	   *request = PG_ARGISNULL(0) ? NULL : PG_GETARG_JSONB_P(0);
	Oid			me = GetUserId();
	JsonbValue	req;
	JsonbValue	payload_value;
	JsonbValue *retry;
	JsonbValue *preemption;
	JsonbValue *timeout;
	JsonbValue *tags;
	char	   *job_name;
	char	   *queue;
	char	   *job_type;
	Jsonb	   *payload;
	char	   *training_job_name;
	int32		attempts = 1;
	Jsonb	   *rules = NULL;
	int32		preemption_retries = 0;
	bool		has_preemption_retries = false;
	int32		duration = 0;
	bool		has_duration = false;
	int32		priority = 0;
	char	   *token;
	char	   *hash;
	char	   *share;
	char	   *quota_share;
	Datum		values[11];
	char		nulls[11];
	int64		job_id;
	char	   *arn;
	Datum		answer;

	SPI_connect();

	if (request != NULL)
		root_value(request, &req);
	check_members(request != NULL ? &req : NULL, submit_members, "SubmitServiceJob");
	job_name = get_string(&req, "jobName", true);
	queue = get_string(&req, "jobQueue", true);
	/* Only an ARN (or nothing) needs _api_resource_name; a name is itself. */
	if (queue[0] == '\0' || strncmp(queue, "arn:", 4) == 0)
	{
		Datum		arg[1] = {CStringGetTextDatum(queue)};

		fairshare_run_statement(&queue_name_stmt, arg, NULL);
		queue = column_text(1);
	}
	job_type = get_string(&req, "serviceJobType", true);
	if (strcmp(job_type, "SAGEMAKER_TRAINING") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("serviceJobType %s is not supported", json_quoted(job_type, strlen(job_type))),
				 errhint("fairshare runs SAGEMAKER_TRAINING service jobs.")));
	payload = parse_payload(get_string(&req, "serviceRequestPayload", true));
	root_value(payload, &payload_value);
	if (!is_object(&payload_value))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("serviceRequestPayload must be a JSON object: the CreateTrainingJob request")));
	/* The SDK puts a TrainingJobName in; fairshare names each attempt itself. */
	training_job_name = get_string(&payload_value, "TrainingJobName", false);
	payload = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(payload),
												 CStringGetTextDatum("TrainingJobName")));

	retry = get_container(&req, "retryStrategy", "object");
	if (retry != NULL)
	{
		check_members(retry, retry_members, "retryStrategy");
		(void) get_integer(retry, "attempts", true, &attempts);
		if (attempts < 1 || attempts > 10)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("retryStrategy.attempts %d is out of range", attempts),
					 errhint("attempts is from 1 to 10.")));
		rules = exit_rules(get_container(retry, "evaluateOnExit", "array"));
	}
	preemption = get_container(&req, "preemptionConfiguration", "object");
	if (preemption != NULL)
	{
		check_members(preemption, preemption_members, "preemptionConfiguration");
		has_preemption_retries = get_integer(preemption, "preemptionRetriesBeforeTermination", false,
											 &preemption_retries);
	}
	timeout = get_container(&req, "timeoutConfig", "object");
	if (timeout != NULL)
	{
		check_members(timeout, timeout_members, "timeoutConfig");
		has_duration = get_integer(timeout, "attemptDurationSeconds", false, &duration);
	}
	tags = get_container(&req, "tags", "object");
	/* as botocore's model says (TagrisTagsMap: 1 to 50 tags), and TagResource */
	if (tags != NULL && tags->type == jbvBinary && JsonContainerSize(tags->val.binary.data) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tags must hold at least one tag"),
				 errhint("Leave tags out of the request to submit a job without tags.")));
	(void) get_integer(&req, "schedulingPriority", false, &priority);

	/*
	 * Idempotency: a retried request (same role, token and request) gets the
	 * job its first try made; the lock orders two tries that race.
	 */
	token = get_string(&req, "clientToken", false);
	hash = request_hash(request);
	if (token != NULL)
	{
		int			len = pg_mbstrlen_with_len(token, strlen(token));
		Datum		key;
		Datum		args[2];

		if (len < 1 || len > 64)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("clientToken is 1 to 64 characters")));
		key = DirectFunctionCall2Coll(hashtextextended, DEFAULT_COLLATION_OID,
									  CStringGetTextDatum(psprintf("%u/%s", me, token)),
									  Int64GetDatum(CLIENT_TOKEN_LOCK_SEED));
		fairshare_lock_client_token(DatumGetUInt64(key));
		args[0] = ObjectIdGetDatum(me);
		args[1] = CStringGetTextDatum(token);
		if (fairshare_run_statement(&earlier_try_stmt, args, NULL) == 1)
		{
			int64		earlier_id = column_int8(1);

			if (strcmp(column_text(2), hash) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("clientToken \"%s\" was already used for another request (job " INT64_FORMAT ")",
								token, earlier_id),
						 errhint("Use a new clientToken for a new request.")));
			answer = submit_answer(caller_cxt, column_text(4), column_text(3), earlier_id);
			SPI_finish();

			/*
			 * The earlier try's row is visible here even when its commit's
			 * wait for the synchronous standby ended unconfirmed (a query
			 * cancel ends it with a warning), so finding it is no proof it
			 * survives a failover.  A commit waits for the standby only when
			 * its transaction wrote WAL: an empty transactional message (the
			 * record pg_logical_emit_message writes) makes this one wait for
			 * the standby to confirm the WAL up to it, the earlier commit
			 * included, before the retry is answered.
			 */
			(void) LogLogicalMessage("fairshare", "", 0, true);
			PG_RETURN_DATUM(answer);
		}
	}

	/*
	 * The SQL read these two in its INSERT's VALUES: after the lock, yet
	 * before the INSERT's privilege checks, since PL/pgSQL's custom plans
	 * evaluate such immutable reads while planning.
	 */
	share = get_string(&req, "shareIdentifier", false);
	quota_share = get_string(&req, "quotaShareName", false);
	if (quota_share != NULL && strncmp(quota_share, "arn:", 4) == 0)
		quota_share = quota_share_of_arn(quota_share, queue);

	values[0] = text_param(job_name, &nulls[0]);
	values[1] = text_param(queue, &nulls[1]);
	values[2] = text_param(share, &nulls[2]);
	values[3] = text_param(quota_share, &nulls[3]);
	values[4] = int4_param(true, priority, &nulls[4]);
	values[5] = jsonb_param(payload, &nulls[5]);
	values[6] = int4_param(true, attempts, &nulls[6]);
	values[7] = jsonb_param(rules, &nulls[7]);
	values[8] = int4_param(has_preemption_retries, preemption_retries, &nulls[8]);
	values[9] = int4_param(has_duration, duration, &nulls[9]);
	values[10] = jsonb_param(tags != NULL ? JsonbValueToJsonb(tags) : NULL, &nulls[10]);
	if (fairshare_run_statement(&insert_job_stmt, values, nulls) != 1)
		elog(ERROR, "the INSERT of a submitted job returned no row");
	job_id = column_int8(1);
	arn = column_text(2);

	values[0] = Int64GetDatum(job_id);
	nulls[0] = ' ';
	values[1] = ObjectIdGetDatum(me);
	nulls[1] = ' ';
	values[2] = text_param(token, &nulls[2]);
	values[3] = text_param(hash, &nulls[3]);
	values[4] = text_param(training_job_name, &nulls[4]);
	fairshare_run_statement(&insert_submission_stmt, values, nulls);

	answer = submit_answer(caller_cxt, arn, job_name, job_id);
	SPI_finish();
	PG_RETURN_DATUM(answer);
}
