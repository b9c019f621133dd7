/*-------------------------------------------------------------------------
 *
 * api_call.c
 *		One AWS Batch API operation: authenticate the request, then run
 *		fairshare._api_<operation>(request jsonb) as the key's role in one
 *		short transaction, and turn its result or its error into the
 *		response.
 *
 * The key is read from fairshare.api_keys by this worker's session (the
 * catalog's owner may read the secret; nobody else may).  The secret is
 * copied out only for the signature check and wiped right after.  The
 * operation then runs as the key's role, as a security-restricted
 * operation (fairshare_run_statement_as, statement.h): grants and
 * row-level security apply exactly as to that role in SQL, and nothing can
 * SET ROLE back.  The grant on the operation's own function is checked
 * first, so that a refusal names the operation and the role it needs
 * rather than an internal function.
 *
 * Every PostgreSQL error is caught here (fairshare_api_execute never
 * throws): the transaction is rolled back and the error mapped to AWS's
 * shape, by the SQLSTATE contract of sql/parts/89_api_common.sql --
 * bad input, not found, not allowed and conflicts are ClientException
 * (HTTP 400) with the error's message; anything else is ServerException
 * (HTTP 500), whose message says only where the log has the details.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <time.h>

#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "pgstat.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"
#include "utils/json.h"
#include "utils/syscache.h"
#include "utils/timeout.h"

#include "api/api.h"
#include "api/api_internal.h"
#include "aws/credentials.h"
#include "settings.h"
#include "statement.h"
#include "tables/catalog_version.h"

/* A request that has not finished in this long is cancelled. */
#define API_STATEMENT_TIMEOUT_MS	10000

/*
 * Statements kept for the worker's life (statement.h): the key lookup and,
 * once an operation has been called, its call.  A request then neither
 * parses nor plans its top-level SQL; the plan cache replans them if the
 * catalog changes (an ALTER EXTENSION ... UPDATE, say).
 */
static FairshareStatement key_stmt = {
	.what = "read fairshare.api_keys",
	.sql = "SELECT k.secret_access_key, k.role, k.disabled_at IS NOT NULL, "
		"r.oid IS NULL OR r.rolname <> k.role_name, coalesce(r.rolsuper OR r.rolbypassrls, false) "
		"FROM fairshare.api_keys k LEFT JOIN pg_catalog.pg_roles r ON r.oid = k.role "
		"WHERE k.access_key_id = $1",
	.argtypes = {TEXTOID},
	.read_only = true,
	.max_rows = 1,
};

typedef struct OperationStatement
{
	const char *function;		/* a static string of api_http.c's table */
	Oid			fn;				/* fairshare.<function>(jsonb), as last looked up */
	FairshareStatement st;
} OperationStatement;

/* More than api_http.c's table routes to. */
#define MAX_OPERATION_STATEMENTS 64
static OperationStatement operation_statements[MAX_OPERATION_STATEMENTS];
static int	n_operation_statements = 0;

/* A JSON string literal of s into buf (PostgreSQL's escaping). */
static void
append_json_string(StringInfo buf, const char *s)
{
	escape_json(buf, s);
}

void
fairshare_api_error(FsApiResponse *resp, int http_status, const char *error_type, const char *message)
{
	/* Plain C: this also answers errors found outside any transaction. */
	size_t		cap = strlen(error_type) + strlen(message) * 6 + 64;
	char	   *out = malloc(cap);
	size_t		n = 0;

	resp->http_status = http_status;
	resp->error_type = error_type;
	if (out == NULL)
	{
		resp->body = NULL;
		resp->body_len = 0;
		return;
	}
	n += snprintf(out + n, cap - n, "{\"__type\":\"%s\",\"message\":\"", error_type);
	for (const unsigned char *p = (const unsigned char *) message; *p; p++)
	{
		if (*p == '"' || *p == '\\')
		{
			out[n++] = '\\';
			out[n++] = *p;
		}
		else if (*p < 0x20)
			n += snprintf(out + n, cap - n, "\\u%04x", *p);
		else
			out[n++] = *p;
	}
	n += snprintf(out + n, cap - n, "\"}");
	resp->body = out;
	resp->body_len = n;
}

/*
 * The region requests must be signed for: the one the ARNs name
 * (89_api_common.sql's _api_region() resolves it the same way), the
 * dispatcher's -- fairshare.region, else AWS_REGION, else
 * AWS_DEFAULT_REGION of the server's environment -- else us-east-1.
 */
static const char *
api_region(void)
{
	const char *region = fs_aws_region();

	return region != NULL ? region : "us-east-1";
}

/* SQLSTATEs that mean the caller's request is at fault (89_api_common.sql). */
static bool
is_client_error(int sqlerrcode)
{
	switch (ERRCODE_TO_CATEGORY(sqlerrcode))
	{
		case ERRCODE_DATA_EXCEPTION:	/* 22xxx */
		case ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION:	/* 23xxx */
			return true;
	}
	switch (sqlerrcode)
	{
		case ERRCODE_NO_DATA_FOUND:
		case ERRCODE_INSUFFICIENT_PRIVILEGE:
		case ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE:
		case ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST:
		case ERRCODE_FEATURE_NOT_SUPPORTED:
		case ERRCODE_PROGRAM_LIMIT_EXCEEDED:
		case ERRCODE_UNDEFINED_OBJECT:
		case ERRCODE_DUPLICATE_OBJECT:
		case ERRCODE_CHECK_VIOLATION:
		case ERRCODE_STATEMENT_TOO_COMPLEX:	/* 54001: JSON nested too deeply */
			return true;
	}
	return false;
}

/* What the key lookup found. */
typedef struct KeyRow
{
	bool		found;
	char	   *secret;			/* malloc'd; wiped and freed after use */
	Oid			role;
	bool		disabled;
	bool		role_missing;
	bool		role_too_powerful;
} KeyRow;

static void
lookup_key(const char *access_key_id, KeyRow *key)
{
	Datum		values[1];
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;
	Datum		d;

	memset(key, 0, sizeof(*key));
	values[0] = CStringGetTextDatum(access_key_id);
	if (fairshare_run_statement(&key_stmt, values, NULL) == 0)
		return;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	key->found = true;
	d = SPI_getbinval(tup, desc, 1, &isnull);
	if (!isnull)
	{
		text	   *t = DatumGetTextPP(d);
		int			len = VARSIZE_ANY_EXHDR(t);

		key->secret = malloc(len + 1);
		if (key->secret == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory"),
					 errdetail("Failed on request of size %d.", len + 1)));
		memcpy(key->secret, VARDATA_ANY(t), len);
		key->secret[len] = '\0';
		if ((Pointer) t != DatumGetPointer(d))
		{
			explicit_bzero(VARDATA_ANY(t), len);
			pfree(t);
		}
	}
	key->role = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
	key->disabled = DatumGetBool(SPI_getbinval(tup, desc, 3, &isnull));
	key->role_missing = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	key->role_too_powerful = DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull));
}

static void
forget_secret(KeyRow *key)
{
	if (key->secret != NULL)
	{
		explicit_bzero(key->secret, strlen(key->secret));
		free(key->secret);
		key->secret = NULL;
	}
}

/* The path and query parameters, as a JSON object to merge into the body. */
static char *
params_json(FsApiRequest *req)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	if (req->path_param_name != NULL && req->path_param != NULL)
	{
		append_json_string(&buf, req->path_param_name);
		appendStringInfoChar(&buf, ':');
		append_json_string(&buf, pg_any_to_server(req->path_param, strlen(req->path_param), PG_UTF8));
	}
	if (req->list_query_name != NULL && req->nlist_values > 0)
	{
		if (buf.len > 1)
			appendStringInfoChar(&buf, ',');
		append_json_string(&buf, req->list_query_name);
		appendStringInfoString(&buf, ":[");
		for (int i = 0; i < req->nlist_values; i++)
		{
			if (i > 0)
				appendStringInfoChar(&buf, ',');
			append_json_string(&buf, pg_any_to_server(req->list_values[i], strlen(req->list_values[i]), PG_UTF8));
		}
		appendStringInfoChar(&buf, ']');
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* fairshare.<function>(jsonb), or InvalidOid when the catalog has none. */
static Oid
operation_function(const char *function)
{
	Oid			jsonb_arg[1] = {JSONBOID};
	List	   *name = list_make2(makeString("fairshare"), makeString(pstrdup(function)));

	return LookupFuncName(name, 1, jsonb_arg, true);
}

/*
 * The operation's function and the statement calling it with the body ($1)
 * and the path and query parameters ($2); NULL when this version of the
 * catalog has no such function (not remembered: an upgrade may add it).
 * Its SQL is built from the name in api_http.c's table, never from the
 * request.
 */
static OperationStatement *
operation_statement(const char *function)
{
	Oid			fn;
	OperationStatement *op;
	MemoryContext old;

	for (int i = 0; i < n_operation_statements; i++)
		if (strcmp(operation_statements[i].function, function) == 0)
		{
			op = &operation_statements[i];
			/* an ALTER EXTENSION ... UPDATE may have made it anew */
			if (!SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(op->fn)))
				op->fn = operation_function(function);
			return OidIsValid(op->fn) ? op : NULL;
		}
	fn = operation_function(function);
	if (!OidIsValid(fn))
		return NULL;
	if (n_operation_statements >= MAX_OPERATION_STATEMENTS)
		elog(ERROR, "more API operations than the %d statements api_call.c keeps", MAX_OPERATION_STATEMENTS);
	op = &operation_statements[n_operation_statements++];
	op->function = function;
	op->fn = fn;
	old = MemoryContextSwitchTo(TopMemoryContext);
	op->st.what = psprintf("call fairshare.%s", function);
	op->st.sql = psprintf("SELECT fairshare.%s(b OPERATOR(pg_catalog.||) $2::pg_catalog.jsonb)::pg_catalog.text "
						  "FROM (SELECT COALESCE(NULLIF(pg_catalog.btrim($1), '')::pg_catalog.jsonb, '{}') AS b) s "
						  "WHERE pg_catalog.jsonb_typeof(b) OPERATOR(pg_catalog.=) 'object'",
						  quote_identifier(function));
	MemoryContextSwitchTo(old);
	op->st.argtypes[0] = TEXTOID;
	op->st.argtypes[1] = TEXTOID;
	return op;
}

/*
 * Why the key's role may not call the operation: the fairshare roles that
 * may ("CreateJobQueue needs the fairshare_admin role").  PostgreSQL's own
 * "permission denied for function _api_create_job_queue" would name an
 * internal function instead of what the caller asked for.
 */
static char *
not_allowed_message(const char *operation, Oid fn)
{
	static const char *const fairshare_roles[] = {"fairshare_admin", "fairshare_submitter", "fairshare_viewer"};
	const char *allowed[lengthof(fairshare_roles)];
	int			n = 0;

	for (int i = 0; i < lengthof(fairshare_roles); i++)
	{
		Oid			role = get_role_oid(fairshare_roles[i], true);

		if (OidIsValid(role) && pg_proc_aclcheck(fn, role, ACL_EXECUTE) == ACLCHECK_OK)
			allowed[n++] = fairshare_roles[i];
	}
	switch (n)
	{
		case 0:
			return psprintf("%s is not allowed for this API key's role", operation);
		case 1:
			return psprintf("%s needs the %s role", operation, allowed[0]);
		case 2:
			return psprintf("%s needs the %s or %s role", operation, allowed[0], allowed[1]);
		default:
			return psprintf("%s needs the %s, %s or %s role", operation, allowed[0], allowed[1], allowed[2]);
	}
}

static bool
valid_text(const char *s, size_t len)
{
	return memchr(s, '\0', len) == NULL && pg_verify_mbstr(PG_UTF8, s, len, true);
}

/*
 * The body of the work, inside a transaction and PG_TRY.  Returns with
 * *resp filled for an answer found before the operation ran (auth, limits),
 * or with the operation's result.
 */
static void
execute_in_transaction(FsApiRequest *req, FsApiResponse *resp)
{
	FsApiAuth	auth;
	FsApiAuthStatus st;
	char		why[512];
	KeyRow		key;
	const char *region = api_region();
	char	   *body;
	OperationStatement *call;
	Datum		values[2];
	char	   *result;
	bool		isnull;
	char	   *version;

	/*
	 * Every statement below names schema fairshare and runs as the
	 * superuser this worker connected as: nothing runs unless the schema is
	 * the extension's, at the version this library knows.
	 */
	if (!fairshare_lock_current_catalog(&version))
	{
		/*
		 * Before authentication: the client is told no more than that; the
		 * log says which database and what to run, once a minute at most.
		 */
		static TimestampTz last_logged = 0;
		TimestampTz now = GetCurrentTimestamp();
		const char *database = get_database_name(MyDatabaseId);

		if (now >= TimestampTzPlusMilliseconds(last_logged, 60 * 1000))
		{
			last_logged = now;
			if (version == NULL)
				ereport(LOG,
						(errmsg("fairshare api: extension \"fairshare\" is not installed in database \"%s\"; "
								"every request is refused until it is", database),
						 errhint("Run CREATE EXTENSION fairshare in it, or set fairshare.database.")));
			else
				ereport(LOG,
						(errmsg("fairshare api: the fairshare catalog in database \"%s\" is version %s, but the "
								"library is version %s; every request is refused until they match",
								database, version, FAIRSHARE_CATALOG_VERSION),
						 errhint("%s", fairshare_catalog_version_hint(version, database))));
		}
		fairshare_api_error(resp, 500, "ServerException",
							"the fairshare API is not available: the extension is not installed in its database, "
							"or its catalog does not match the server's library (the server log says which)");
		return;
	}

	st = fairshare_api_parse_auth(req, &auth, region, (long) time(NULL), why, sizeof(why));
	if (st == FS_API_AUTH_TOKEN || st == FS_API_AUTH_MISSING)
	{
		fairshare_api_error(resp, 403, st == FS_API_AUTH_TOKEN ? "UnrecognizedClientException" : "MissingAuthenticationTokenException", why);
		return;
	}
	lookup_key(auth.access_key_id, &key);
	if (!key.found)
	{
		fairshare_api_error(resp, 403, "UnrecognizedClientException",
							"The security token included in the request is invalid: no fairshare API key has this access key id");
		return;
	}
	if (st == FS_API_AUTH_OK)
		st = fairshare_api_verify_signature(req, &auth, region, key.secret ? key.secret : "", why, sizeof(why));
	forget_secret(&key);
	if (st != FS_API_AUTH_OK)
	{
		fairshare_api_error(resp, 403, "InvalidSignatureException", why);
		return;
	}
	if (key.disabled || key.role_missing)
	{
		fairshare_api_error(resp, 403, "UnrecognizedClientException",
							key.disabled ? "The security token included in the request is invalid: this API key is disabled"
							: "The security token included in the request is invalid: the key's role no longer exists "
							  "(it was dropped or renamed); make a new key for the role");
		return;
	}
	if (key.role_too_powerful)
	{
		fairshare_api_error(resp, 403, "AccessDeniedException",
							"this API key's role is a superuser or bypasses row-level security; the API does not act as such roles");
		return;
	}
	if (!fairshare_api_rate_allow(auth.access_key_id))
	{
		fairshare_api_error(resp, 429, "TooManyRequestsException",
							"Too many requests: this key is over fairshare.api_key_requests_per_second");
		return;
	}
	call = operation_statement(req->function);
	if (call == NULL)
	{
		fairshare_api_error(resp, 404, "UnknownOperationException",
							psprintf("operation %s is not supported by this version of fairshare", req->operation));
		return;
	}
	/* The grant the call would be refused for (docs/api-admin.md). */
	if (pg_proc_aclcheck(call->fn, key.role, ACL_EXECUTE) != ACLCHECK_OK)
	{
		fairshare_api_error(resp, 400, "ClientException", not_allowed_message(req->operation, call->fn));
		return;
	}
	if (req->encoded_nul)
	{
		fairshare_api_error(resp, 400, "ClientException",
							psprintf("the %s of %s holds an encoded NUL (%%00), which no name or tag key may",
									 req->list_query_name != NULL && req->path_param_name != NULL ?
									 "path or query" : "path", req->operation));
		return;
	}
	if (req->list_overflow)
	{
		fairshare_api_error(resp, 400, "ClientException",
							psprintf("the query parameter %s is repeated more than %d times, more than %s takes",
									 req->list_query_name, FS_API_MAX_LIST_VALUES, req->operation));
		return;
	}
	if (!valid_text(req->body, req->body_len))
	{
		fairshare_api_error(resp, 400, "ClientException", "the request body is not valid UTF-8 text");
		return;
	}
	body = pg_any_to_server(req->body, (int) req->body_len, PG_UTF8);
	values[0] = CStringGetTextDatum(body);
	values[1] = CStringGetTextDatum(params_json(req));

	/* As the key's role, restricted: grants and row-level security apply. */
	if (fairshare_run_statement_as(&call->st, key.role, values, NULL) == 0)
	{
		fairshare_api_error(resp, 400, "ClientException", "the request body must be a JSON object");
		return;
	}
	result = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull)
		result = "{}";
	result = pg_server_to_any(result, strlen(result), PG_UTF8);
	resp->http_status = 200;
	resp->error_type = NULL;
	resp->body = strdup(result);
	resp->body_len = resp->body ? strlen(resp->body) : 0;
}

/*
 * Set by the API worker's SIGINT handler: a query cancel (pg_cancel_backend)
 * came while this worker served a request.
 */
static volatile sig_atomic_t cancel_seen = false;

/*
 * The API worker's SIGINT handler: what a backend does with a cancel
 * (StatementCancelHandler), and a note of it for fairshare_api_execute.
 * A cancel that comes while a commit waits for the synchronous standby
 * ends that wait with only a warning, and takes QueryCancelPending with it:
 * without this note the worker could not tell the wait ended unconfirmed.
 */
void
fairshare_api_cancel_handler(SIGNAL_ARGS)
{
	int			save_errno = errno;

	cancel_seen = true;
	StatementCancelHandler(postgres_signal_arg);
	errno = save_errno;
}

void
fairshare_api_execute(FsApiRequest *req, FsApiResponse *resp)
{
	MemoryContext cxt = CurrentMemoryContext;
	volatile bool failed = false;
	volatile bool unconfirmed = false;
	ErrorData  *volatile edata = NULL;

	memset(resp, 0, sizeof(*resp));
	cancel_seen = false;
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		SPI_connect();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, req->operation);
		enable_timeout_after(STATEMENT_TIMEOUT, API_STATEMENT_TIMEOUT_MS);

		execute_in_transaction(req, resp);

		disable_timeout(STATEMENT_TIMEOUT, false);
		SPI_finish();
		PopActiveSnapshot();
		/* An answered error (auth, limits) wrote nothing: roll it back. */
		if (resp->error_type != NULL)
			AbortCurrentTransaction();
		else
		{
			CommitTransactionCommand();

			/*
			 * A commit that waits for the synchronous standby returns without
			 * an error when SIGTERM (a fast shutdown: Patroni demoting this
			 * node), the postmaster's death or a query cancel ends the wait.
			 * The transaction committed here but may never reach the node
			 * promoted next, so this is no acknowledgement: answer 500,
			 * which clients retry -- with the same clientToken, a retry finds
			 * the job if it survived and submits it again if not.  (A cancel
			 * that came before the commit raised an error there; one that
			 * came after the wait costs a retry that finds the job.)
			 */
			if (ProcDiePending || cancel_seen)
				unconfirmed = true;
		}
		pgstat_report_activity(STATE_IDLE, NULL);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		disable_timeout(STATEMENT_TIMEOUT, false);
		AbortCurrentTransaction();
		pgstat_report_activity(STATE_IDLE, NULL);
		failed = true;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);

	if (unconfirmed)
	{
		free(resp->body);
		memset(resp, 0, sizeof(*resp));
		fairshare_api_error(resp, 500, "ServerException",
							psprintf("the server could not confirm that the request reached the synchronous standby (it is shutting down, or the wait was canceled); try again (request id %s)",
									 req->request_id));
		return;
	}
	if (!failed)
	{
		if (resp->body == NULL)
			fairshare_api_error(resp, 500, "ServerException", "out of memory");
		return;
	}

	free(resp->body);
	memset(resp, 0, sizeof(*resp));
	if (is_client_error(edata->sqlerrcode))
	{
		char	   *msg = edata->message ? edata->message : "invalid request";

		/*
		 * Only a request's JSON (the body, or a member that is JSON text,
		 * like serviceRequestPayload) nests deeply enough to exhaust the
		 * stack of the recursive JSON parser.  PostgreSQL's "stack depth
		 * limit exceeded" and its hint to raise max_stack_depth speak to the
		 * server's administrator; the client can only nest less.  Other
		 * errors of the same SQLSTATE (a regular expression too complex)
		 * keep their own message.
		 */
		if (edata->sqlerrcode == ERRCODE_STATEMENT_TOO_COMPLEX &&
			edata->hint != NULL && strstr(edata->hint, "max_stack_depth") != NULL)
			msg = "the request's JSON is nested too deeply";
		else if (edata->hint != NULL)
			msg = psprintf("%s (%s)", msg, edata->hint);
		fairshare_api_error(resp, 400, "ClientException", pg_server_to_any(msg, strlen(msg), PG_UTF8));
	}
	else if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
		fairshare_api_error(resp, 500, "ServerException",
							psprintf("the request took longer than %d ms and was cancelled; try again (request id %s)",
									 API_STATEMENT_TIMEOUT_MS, req->request_id));
	else if (edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ||
			 edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
			 edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED)
		fairshare_api_error(resp, 500, "ServerException",
							psprintf("the request conflicted with concurrent work; try again (request id %s)", req->request_id));
	else
	{
		/* The details go to the server log only, with the request id. */
		ereport(LOG,
				(errmsg("fairshare api: %s (request id %s) failed: %s",
						req->operation, req->request_id, edata->message ? edata->message : "?"),
				 errhidestmt(true)));
		fairshare_api_error(resp, 500, "ServerException",
							psprintf("internal error; the server log has the details under request id %s", req->request_id));
	}
	FreeErrorData(edata);
}
