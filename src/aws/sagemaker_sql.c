/*-------------------------------------------------------------------------
 *
 * sagemaker_sql.c
 *		SQL-callable access to the SageMaker request engine:
 *		fairshare.sagemaker_call(), fairshare.sagemaker_endpoint(), and the
 *		test-only fairshare._sagemaker_batch(), _sagemaker_wait_test() and
 *		_sagemaker_client_stats().
 *
 * sagemaker_call() sends one signed call through the same engine the
 * dispatcher uses (sagemaker_client.h) and waits for it interruptibly;
 * a final failure is an ERROR whose SQLSTATE, message, detail and hint say
 * what SageMaker answered and what to do.  The session keeps one client in
 * TopMemoryContext so consecutive calls reuse the connection; any ERROR
 * while a call is in flight (a cancel, a timeout of the statement) cancels
 * it, so no answer of an abandoned call is ever taken for another's.
 *
 * These functions are for administrators and tests: EXECUTE is revoked from
 * PUBLIC and granted to fairshare_admin (sql/parts/50_aws.sql), since they
 * act with the server's AWS credentials.  They never return, log or report
 * a secret; request and response bodies are never logged.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "storage/latch.h"

#include "aws/credentials.h"
#include "aws/sagemaker_client.h"
#include "datums.h"

PG_FUNCTION_INFO_V1(fairshare_sagemaker_call);
PG_FUNCTION_INFO_V1(fairshare_sagemaker_endpoint);
PG_FUNCTION_INFO_V1(fairshare_endpoint_problem);
PG_FUNCTION_INFO_V1(fairshare_sagemaker_batch);
PG_FUNCTION_INFO_V1(fairshare_sagemaker_wait_test);
PG_FUNCTION_INFO_V1(fairshare_sagemaker_client_stats);
PG_FUNCTION_INFO_V1(fairshare_sagemaker_pump_test);

/* The session's client for sagemaker_call(), made on first use. */
static FsSmClient *call_client = NULL;
static uint64 call_tag = 0;

/* -------------------------------------------------------------- arguments */

static FsSmOperation
operation_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;
	FsSmOperation op;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation must not be null"),
				 errhint("Use CreateTrainingJob, DescribeTrainingJob, StopTrainingJob, ListTrainingJobs or ListTags.")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (!fs_sm_operation_from_name(name, &op))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" is not a SageMaker operation fairshare calls", name),
				 errhint("Use CreateTrainingJob, DescribeTrainingJob, StopTrainingJob, ListTrainingJobs or ListTags (spelt exactly so).")));
	return op;
}

static void
check_request(Jsonb *jb, const char *what)
{
	if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object", what),
				 errhint("Pass the request body of the operation, e.g. '{\"TrainingJobName\": \"my-job\"}'; ListTrainingJobs takes '{}'.")));
}

/* ----------------------------------------------------------------- errors */

static int
error_sqlstate(const FsSmResult *r)
{
	switch (r->error_class)
	{
		case FS_SM_OK:
			break;
		case FS_SM_RETRYABLE_EXHAUSTED:
			return r->http_status == 0 ? ERRCODE_CONNECTION_FAILURE
				: ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
		case FS_SM_VALIDATION:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case FS_SM_RESOURCE_IN_USE:
			return ERRCODE_DUPLICATE_OBJECT;
		case FS_SM_RESOURCE_NOT_FOUND:
			return ERRCODE_UNDEFINED_OBJECT;
		case FS_SM_RESOURCE_LIMIT_EXCEEDED:
			return ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
		case FS_SM_AUTH:
			return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
		case FS_SM_ACCESS_DENIED:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case FS_SM_OTHER_CLIENT_ERROR:
			return ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
		case FS_SM_ENDPOINT:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case FS_SM_TRANSPORT:
			return ERRCODE_CONNECTION_FAILURE;
	}
	return ERRCODE_INTERNAL_ERROR;
}

static const char *
error_hint(const FsSmResult *r)
{
	switch (r->error_class)
	{
		case FS_SM_OK:
			break;
		case FS_SM_RETRYABLE_EXHAUSTED:
			if (r->http_status == 0)
				return "SageMaker could not be reached or did not answer in time on any try; check the endpoint (fairshare.sagemaker_endpoint()) and the network, then try again.";
			return "SageMaker kept throttling or failing on every try; try again later, or lower fairshare.api_rate_limit.";
		case FS_SM_VALIDATION:
			return "Fix the request: SageMaker's message names the field and the rule.";
		case FS_SM_RESOURCE_IN_USE:
			if (r->operation == FS_SM_CREATE_TRAINING_JOB && r->ambiguous_tries > 0)
				return "An earlier try of this very call went unanswered, so it most likely created the training job: look it up with DescribeTrainingJob.";
			return "Training job names are unique in an account and region, even after the job ends; choose another name.";
		case FS_SM_RESOURCE_NOT_FOUND:
			return "Check the training job name, and that fairshare talks to the account and region the job is in (fairshare.sagemaker_endpoint()).";
		case FS_SM_RESOURCE_LIMIT_EXCEEDED:
			return "Wait for running training jobs to finish, or ask AWS for a higher service quota.";
		case FS_SM_AUTH:
			return "Check the credentials the server uses (fairshare.aws_credentials_info()), that the region matches the endpoint, and that the server's clock is right.";
		case FS_SM_ACCESS_DENIED:
			return "The credentials were accepted but are not allowed to do this: check the IAM policy of the server's role or user.";
		case FS_SM_OTHER_CLIENT_ERROR:
			return "SageMaker refused the request; its message says why.";
		case FS_SM_ENDPOINT:
			return "Set fairshare.endpoint_url to an https:// URL (http:// only to a loopback emulator) and fairshare.region or AWS_REGION, then reload.";
		case FS_SM_TRANSPORT:
			return "Retrying will not help: check the endpoint's TLS certificate and the server's CA certificates.";
	}
	return NULL;
}

/* Raise the ERROR for a final failure. */
static void
report_failure(const FsSmResult *r)
{
	const char *op = fs_sm_operation_name(r->operation);
	const char *tries = r->tries == 1 ? "try" : "tries";
	StringInfoData detail;

	initStringInfo(&detail);
	if (r->http_status != 0)
		appendStringInfo(&detail, "HTTP status %ld after %d %s", r->http_status, r->tries, tries);
	else if (r->tries == 0)
		appendStringInfoString(&detail, "The request was not sent");
	else
		appendStringInfo(&detail, "No answer after %d %s", r->tries, tries);
	appendStringInfo(&detail, " (error class %s", fs_sm_error_class_name(r->error_class));
	if (r->request_id)
		appendStringInfo(&detail, ", request id %s", r->request_id);
	appendStringInfoString(&detail, ").");

	if (r->error_type)
		ereport(ERROR,
				(errcode(error_sqlstate(r)),
				 errmsg("SageMaker %s failed: %s: %s", op, r->error_type,
						r->message ? r->message : "(no message)"),
				 errdetail_internal("%s", detail.data),
				 errhint("%s", error_hint(r))));
	ereport(ERROR,
			(errcode(error_sqlstate(r)),
			 errmsg("SageMaker %s failed: %s", op, r->message ? r->message : "(no message)"),
			 errdetail_internal("%s", detail.data),
			 errhint("%s", error_hint(r))));
}

/* -------------------------------------------------------- sagemaker_call */

/*
 * fairshare.sagemaker_call(operation text, request jsonb) RETURNS jsonb
 *
 * One call to the endpoint fs_sm_resolve_endpoint(NULL, NULL) names
 * (fairshare.endpoint_url, AWS_ENDPOINT_URL_SAGEMAKER, regional default),
 * retried as the engine retries; returns the answer's body.
 */
Datum
fairshare_sagemaker_call(PG_FUNCTION_ARGS)
{
	FsSmOperation op = operation_arg(fcinfo, 0);
	Jsonb	   *request;
	FsSmResult *res = NULL;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("request must not be null"),
				 errhint("ListTrainingJobs takes '{}'.")));
	request = PG_GETARG_JSONB_P(1);
	check_request(request, "request");

	if (call_client == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		call_client = fs_sm_client_create();
		MemoryContextSwitchTo(old);
	}

	PG_TRY();
	{
		fs_sm_submit(call_client, op, NULL, NULL, request, ++call_tag);
		for (;;)
		{
			if (fs_sm_wait(call_client, -1, &res, 1) > 0)
				break;
			/* the latch woke us: an interrupt, most likely */
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		fs_sm_cancel_all(call_client);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (res->error_class != FS_SM_OK)
		report_failure(res);
	PG_RETURN_JSONB_P(res->response);
}

/* ---------------------------------------------------- sagemaker_endpoint */

/*
 * fairshare.sagemaker_endpoint(endpoint_url text DEFAULT NULL,
 *								region text DEFAULT NULL) RETURNS jsonb
 *
 * Where a call would go, given a service environment's endpoint_url and
 * region (NULL: not set): {"url": ..., "region": ..., "source": ...}.
 * ERROR when the endpoint or region is refused.
 */
Datum
fairshare_sagemaker_endpoint(PG_FUNCTION_ARGS)
{
	char	   *env_url = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *env_region = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *url;
	char	   *region;
	const char *source;
	char	   *why;
	JsonbParseState *st = NULL;
	JsonbValue *out;

	if (!fs_sm_resolve_endpoint(env_url, env_region, &url, &region, &source, &why))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s", why),
				 errhint("An endpoint must be https://, or http:// to a loopback address; a region is a name such as us-east-1.")));
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	fairshare_jsonb_push_string(&st, "url", url);
	fairshare_jsonb_push_string(&st, "region", region);
	fairshare_jsonb_push_string(&st, "source", source);
	out = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(out));
}

/*
 * fairshare._endpoint_problem(endpoint_url text, region text) RETURNS text
 *
 * What is wrong with a service environment's endpoint_url and region, by
 * the sender's own rules (NULL: nothing, or not set).  The URL is quoted
 * without its user information.
 */
Datum
fairshare_endpoint_problem(PG_FUNCTION_ARGS)
{
	if (!PG_ARGISNULL(1))
	{
		char	   *region = text_to_cstring(PG_GETARG_TEXT_PP(1));

		if (!fs_aws_valid_region(region))
			PG_RETURN_TEXT_P(cstring_to_text(psprintf("invalid region \"%s\"", region)));
	}
	if (!PG_ARGISNULL(0))
	{
		char	   *url = text_to_cstring(PG_GETARG_TEXT_PP(0));
		const char *reason = fs_sm_admin_endpoint_url_problem(url);

		if (reason != NULL)
			PG_RETURN_TEXT_P(cstring_to_text(psprintf("endpoint_url \"%s\" is refused: %s",
													  fs_sm_redact_url(url), reason)));
	}
	PG_RETURN_NULL();
}

/* -------------------------------------------------------- _sagemaker_batch */

typedef struct BatchOptions
{
	FsSmOptions engine;
	char	   *endpoint_url;
	char	   *region;
} BatchOptions;

static long
option_number(const char *key, JsonbValue *v)
{
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must be a number", key)));
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric)));
}

static char *
option_string(const char *key, JsonbValue *v)
{
	if (v->type == jbvNull)
		return NULL;
	if (v->type != jbvString)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must be a string", key)));
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static void
parse_batch_options(Jsonb *jb, BatchOptions *o)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	memset(o, 0, sizeof(*o));
	fs_sm_default_options(&o->engine);
	if (jb == NULL)
		return;
	check_request(jb, "options");
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			key = pnstrdup(v.val.string.val, v.val.string.len);
		else if (tok == WJB_VALUE)
		{
			if (strcmp(key, "connect_timeout_ms") == 0)
				o->engine.connect_timeout_ms = option_number(key, &v);
			else if (strcmp(key, "timeout_ms") == 0)
				o->engine.timeout_ms = option_number(key, &v);
			else if (strcmp(key, "max_tries") == 0)
				o->engine.max_tries = (int) option_number(key, &v);
			else if (strcmp(key, "backoff_base_ms") == 0)
				o->engine.backoff_base_ms = (int) option_number(key, &v);
			else if (strcmp(key, "throttle_backoff_base_ms") == 0)
				o->engine.throttle_backoff_base_ms = (int) option_number(key, &v);
			else if (strcmp(key, "backoff_cap_ms") == 0)
				o->engine.backoff_cap_ms = (int) option_number(key, &v);
			else if (strcmp(key, "endpoint_url") == 0)
				o->endpoint_url = option_string(key, &v);
			else if (strcmp(key, "region") == 0)
				o->region = option_string(key, &v);
			else
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("unknown option \"%s\"", key),
						 errhint("Options are connect_timeout_ms, timeout_ms, max_tries, backoff_base_ms, throttle_backoff_base_ms, backoff_cap_ms, endpoint_url and region.")));
		}
	}
}

static Datum
text_or_null(const char *s, bool *isnull)
{
	*isnull = (s == NULL);
	return s ? CStringGetTextDatum(s) : (Datum) 0;
}

/*
 * fairshare._sagemaker_batch(operation text, requests jsonb[],
 *							  options jsonb DEFAULT '{}')
 *	 RETURNS TABLE(ord int, error_class text, http_status int, error_type text,
 *				   message text, response jsonb, tries int, ambiguous_tries int,
 *				   new_connections int, started_ms float8, elapsed_ms float8)
 *
 * Test-only: submits every request at once to a fresh client (so the
 * engine's concurrency, pacing, retries and error classes can be watched),
 * waits for all of them, and returns one row per request in array order.
 * started_ms is when its first try started, counted from the submission of
 * the batch; elapsed_ms from submission to final.  Options override the
 * engine's (FsSmOptions) and give the service environment's endpoint_url
 * and region.  The client is made in the function's memory context, so an
 * ERROR or a cancel releases it with that context.
 */
Datum
fairshare_sagemaker_batch(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FsSmOperation op = operation_arg(fcinfo, 0);
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	int			left;
	BatchOptions opts;
	FsSmClient *client;
	FsSmResult **results;
	FsSmResult *got[32];
	TimestampTz t0;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("requests must not be null")));
	parse_batch_options(PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2), &opts);
	arr = PG_GETARG_ARRAYTYPE_P(1);
	deconstruct_array(arr, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("request %d of the batch is null", i + 1)));
		check_request(DatumGetJsonbP(elems[i]), "every request");
	}

	InitMaterializedSRF(fcinfo, 0);

	client = fs_sm_client_create();
	fs_sm_client_set_options(client, &opts.engine);
	results = palloc0(Max(n, 1) * sizeof(FsSmResult *));
	t0 = GetCurrentTimestamp();
	for (i = 0; i < n; i++)
		fs_sm_submit(client, op, opts.endpoint_url, opts.region,
					 DatumGetJsonbP(elems[i]), (uint64) i);

	left = n;
	while (left > 0)
	{
		int			k = fs_sm_wait(client, -1, got, lengthof(got));
		int			j;

		for (j = 0; j < k; j++)
		{
			results[got[j]->tag] = got[j];
			left--;
		}
		if (k == 0)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	fs_sm_client_destroy(client);

	for (i = 0; i < n; i++)
	{
		FsSmResult *r = results[i];
		Datum		values[11];
		bool		isnull[11];

		memset(isnull, 0, sizeof(isnull));
		values[0] = Int32GetDatum(i + 1);
		values[1] = CStringGetTextDatum(fs_sm_error_class_name(r->error_class));
		values[2] = Int32GetDatum((int32) r->http_status);
		isnull[2] = (r->http_status == 0);
		values[3] = text_or_null(r->error_type, &isnull[3]);
		values[4] = text_or_null(r->message, &isnull[4]);
		values[5] = r->response ? JsonbPGetDatum(r->response) : (Datum) 0;
		isnull[5] = (r->response == NULL);
		values[6] = Int32GetDatum(r->tries);
		values[7] = Int32GetDatum(r->ambiguous_tries);
		values[8] = Int32GetDatum(r->new_connections);
		values[9] = Float8GetDatum((double) (r->first_started_at - t0) / 1000.0);
		isnull[9] = (r->first_started_at == 0);
		values[10] = Float8GetDatum((double) (r->finished_at - t0) / 1000.0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, isnull);
	}
	return (Datum) 0;
}

/* ---------------------------------------------------- _sagemaker_wait_test */

/*
 * fairshare._sagemaker_wait_test(operation text, request jsonb,
 *								  wait_ms int) RETURNS jsonb
 *
 * Test-only: submit one call to a fresh client, reset the latch, and call
 * fs_sm_wait() once with timeout wait_ms.  Returns {"results": n,
 * "waited_ms": ..., "latch_set": bool, "in_flight": n}: another session
 * that sets this backend's latch (a NOTIFY on a channel it LISTENs to does)
 * must end the wait at once, with the call still in flight.  The client,
 * and the call, are dropped before returning.
 */
Datum
fairshare_sagemaker_wait_test(PG_FUNCTION_ARGS)
{
	FsSmOperation op = operation_arg(fcinfo, 0);
	Jsonb	   *request;
	int32		wait_ms;
	FsSmClient *client;
	FsSmResult *res;
	TimestampTz t0;
	int			n;
	int			in_flight;
	bool		latch_set;
	char	   *json;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("request and wait_ms must not be null")));
	request = PG_GETARG_JSONB_P(1);
	check_request(request, "request");
	wait_ms = PG_GETARG_INT32(2);

	client = fs_sm_client_create();
	fs_sm_submit(client, op, NULL, NULL, request, 1);
	ResetLatch(MyLatch);
	t0 = GetCurrentTimestamp();
	n = fs_sm_wait(client, wait_ms, &res, 1);
	latch_set = MyLatch->is_set;
	in_flight = fs_sm_in_flight(client);
	json = psprintf("{\"results\": %d, \"waited_ms\": %.1f, \"latch_set\": %s, \"in_flight\": %d}",
					n, (double) (GetCurrentTimestamp() - t0) / 1000.0,
					latch_set ? "true" : "false", in_flight);
	fs_sm_client_destroy(client);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

/* ---------------------------------------------------- _sagemaker_pump_test */

/*
 * fairshare._sagemaker_pump_test(operation text, requests jsonb[],
 *								  busy_ms int, pump boolean) RETURNS jsonb
 *
 * Test-only: submit every request to a fresh client, then stay busy for
 * busy_ms without ever waiting on the engine -- calling fs_sm_pump() every
 * millisecond when pump is true, only sleeping when it is false -- as the
 * dispatcher does inside a scheduling pass.  Then collect what became
 * final meanwhile without driving the engine further.  Returns
 * {"submitted": n, "ready": n, "ok": n, "in_flight": n}: with the pump the
 * calls are sent and answered while the caller is busy; without it they
 * are not even started.  The client is dropped before returning.
 */
Datum
fairshare_sagemaker_pump_test(PG_FUNCTION_ARGS)
{
	FsSmOperation op = operation_arg(fcinfo, 0);
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int32		busy_ms;
	bool		do_pump;
	FsSmClient *client;
	TimestampTz end;
	int			ready;
	int			in_flight;
	int			ok = 0;
	FsSmResult **got;
	int			k;

	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("requests, busy_ms and pump must not be null")));
	arr = PG_GETARG_ARRAYTYPE_P(1);
	busy_ms = PG_GETARG_INT32(2);
	do_pump = PG_GETARG_BOOL(3);
	deconstruct_array(arr, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("request %d is null", i + 1)));
		check_request(DatumGetJsonbP(elems[i]), "every request");
	}

	client = fs_sm_client_create();
	for (int i = 0; i < n; i++)
		fs_sm_submit(client, op, NULL, NULL, DatumGetJsonbP(elems[i]), (uint64) i);
	/* the credentials the pump signs with, as the dispatcher has them from its last wait */
	(void) fs_aws_get_credentials();
	end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), busy_ms);
	while (GetCurrentTimestamp() < end)
	{
		CHECK_FOR_INTERRUPTS();
		if (do_pump)
			fs_sm_pump(client);
		pg_usleep(1000L);
	}
	ready = fs_sm_ready(client);
	in_flight = fs_sm_in_flight(client);
	got = palloc(sizeof(FsSmResult *) * Max(ready, 1));
	/* hand out only what is final already: no further waiting */
	k = ready > 0 ? fs_sm_wait(client, 0, got, ready) : 0;
	for (int i = 0; i < k; i++)
		if (got[i]->error_class == FS_SM_OK)
			ok++;
	fs_sm_client_destroy(client);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in,
										CStringGetDatum(psprintf("{\"submitted\": %d, \"ready\": %d, \"ok\": %d, \"in_flight\": %d}",
																 n, ready, ok, in_flight))));
}

/* ------------------------------------------------- _sagemaker_client_stats */

/*
 * fairshare._sagemaker_client_stats() RETURNS jsonb
 *
 * Test-only: {"clients": n, "multi_handles": n, "easy_handles": n,
 * "session_client_pending": n} for this backend -- to check that no curl
 * handle outlives what it was for.
 */
Datum
fairshare_sagemaker_client_stats(PG_FUNCTION_ARGS)
{
	int			clients;
	int			multi;
	int			easy;
	char	   *json;

	fs_sm_handle_counts(&clients, &multi, &easy);
	json = psprintf("{\"clients\": %d, \"multi_handles\": %d, \"easy_handles\": %d, \"session_client_pending\": %d}",
					clients, multi, easy, call_client ? fs_sm_pending(call_client) : 0);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}
