/*-------------------------------------------------------------------------
 *
 * api_http.c
 *		One HTTP request of the AWS Batch API: libmicrohttpd's callbacks.
 *
 * libmicrohttpd calls fairshare_api_access_handler() several times per
 * request: once when the headers are in, once per piece of body, and once
 * more at the end -- then the request is routed (POST /v1/<operation>, and
 * /v1/tags/<arn> for tagging), authenticated and run (api_call.c), and
 * the answer queued.  Everything here is plain C with malloc: no
 * PostgreSQL call that could raise happens outside api_call.c's PG_TRY,
 * since an ERROR must never unwind through libmicrohttpd's frames.
 *
 * Limits: a body larger than fairshare.api_max_body_size is answered 413
 * ClientException without being kept; beyond fairshare.api_max_connections
 * open connections (every API worker's together) a request is answered 429
 * TooManyRequestsException and its connection closed; a request line and
 * headers larger than fairshare.api_max_header_size are answered 431
 * ClientException.  libmicrohttpd's buffer holds four times that (the
 * daemon's options, api_worker.c, which also bound idle time), so only
 * headers beyond it get libmicrohttpd's own answer.  A refusal known from
 * the headers alone is answered at once, before any body is read (no "100
 * Continue"), and the connection closed; a body without a Content-Length
 * (chunked) that outgrows the limit is read and dropped up to
 * DISCARD_LIMIT_FACTOR times it, then the connection is closed unanswered:
 * a body that never ends would otherwise hold its connection for good,
 * since the idle timeout never fires while it keeps coming.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/socket.h>

#include "api/api.h"
#include "api/api_internal.h"
#include "settings.h"

/* The operations, as botocore's batch model names and routes them. */
typedef struct ApiOperation
{
	const char *name;			/* SubmitServiceJob; its URI is /v1/submitservicejob */
	const char *function;		/* fairshare._api_submit_service_job */
} ApiOperation;

#define OP(n, f) {n, f}
static const ApiOperation operations[] = {
	OP("SubmitServiceJob", "_api_submit_service_job"),
	OP("DescribeServiceJob", "_api_describe_service_job"),
	OP("ListServiceJobs", "_api_list_service_jobs"),
	OP("UpdateServiceJob", "_api_update_service_job"),
	OP("TerminateServiceJob", "_api_terminate_service_job"),
	OP("GetJobQueueSnapshot", "_api_get_job_queue_snapshot"),
	OP("CreateServiceEnvironment", "_api_create_service_environment"),
	OP("UpdateServiceEnvironment", "_api_update_service_environment"),
	OP("DeleteServiceEnvironment", "_api_delete_service_environment"),
	OP("DescribeServiceEnvironments", "_api_describe_service_environments"),
	OP("CreateJobQueue", "_api_create_job_queue"),
	OP("UpdateJobQueue", "_api_update_job_queue"),
	OP("DeleteJobQueue", "_api_delete_job_queue"),
	OP("DescribeJobQueues", "_api_describe_job_queues"),
	OP("CreateSchedulingPolicy", "_api_create_scheduling_policy"),
	OP("UpdateSchedulingPolicy", "_api_update_scheduling_policy"),
	OP("DeleteSchedulingPolicy", "_api_delete_scheduling_policy"),
	OP("DescribeSchedulingPolicies", "_api_describe_scheduling_policies"),
	OP("ListSchedulingPolicies", "_api_list_scheduling_policies"),
	OP("CreateQuotaShare", "_api_create_quota_share"),
	OP("UpdateQuotaShare", "_api_update_quota_share"),
	OP("DeleteQuotaShare", "_api_delete_quota_share"),
	OP("DescribeQuotaShare", "_api_describe_quota_share"),
	OP("ListQuotaShares", "_api_list_quota_shares"),
};

static const ApiOperation op_tag = {"TagResource", "_api_tag_resource"};
static const ApiOperation op_untag = {"UntagResource", "_api_untag_resource"};
static const ApiOperation op_list_tags = {"ListTagsForResource", "_api_list_tags_for_resource"};

/* How much of an oversized body without a Content-Length is read and dropped. */
#define DISCARD_LIMIT_FACTOR 4

/* Per request, from the first callback to the completion notice. */
typedef struct RequestState
{
	char	   *body;
	size_t		len;
	size_t		cap;
	size_t		dropped;		/* bytes of an oversized body read and dropped */
	bool		answered;		/* refused from its headers, before any body */
	bool		too_large;
	bool		headers_too_large;
	bool		too_many_connections;
	bool		tls;
} RequestState;

/*
 * Decode %XX in place.  "+" is left as it is here, but libmicrohttpd has
 * already made a "+" in the query a space, as for a form: AWS clients send
 * "+" as %2B and a space as %20, so only a hand-made request meets that,
 * and its signature then fails.
 * False when it decodes a NUL (%00): the value would end there as a C
 * string, and the operation act on a shorter name than the one sent.
 */
static bool
percent_decode(char *s)
{
	char	   *o = s;
	bool		nul = false;

	for (; *s; s++)
	{
		if (s[0] == '%' && isxdigit((unsigned char) s[1]) && isxdigit((unsigned char) s[2]))
		{
			char		hex[3] = {s[1], s[2], 0};

			*o = (char) strtol(hex, NULL, 16);
			nul |= *o == '\0';
			o++;
			s += 2;
		}
		else
			*o++ = *s;
	}
	*o = '\0';
	return !nul;
}

/* libmicrohttpd leaves the URL as sent: we decode (and sign) it ourselves. */
size_t
fairshare_api_unescape_nothing(void *cls, struct MHD_Connection *c, char *s)
{
	return strlen(s);
}

typedef struct Collect
{
	FsApiRequest *req;
	StringInfo	query;
	int			cap;
} Collect;

static enum MHD_Result
collect_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	Collect    *c = cls;
	FsApiRequest *req = c->req;

	if (req->nheaders >= c->cap)
		return MHD_NO;
	req->header_names[req->nheaders] = key;
	req->header_values[req->nheaders] = value ? value : "";
	req->nheaders++;
	return MHD_YES;
}

static enum MHD_Result
collect_argument(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	Collect    *c = cls;
	FsApiRequest *req = c->req;

	if (c->query->len > 0)
		appendStringInfoChar(c->query, '&');
	appendStringInfoString(c->query, key);
	if (value != NULL)
	{
		appendStringInfoChar(c->query, '=');
		appendStringInfoString(c->query, value);
	}
	if (req->list_query_name != NULL && strcmp(key, req->list_query_name) == 0 && value != NULL)
	{
		char	   *v;

		/* Beyond what we keep: noted, and refused by api_call.c. */
		if (req->nlist_values >= FS_API_MAX_LIST_VALUES)
		{
			req->list_overflow = true;
			return MHD_YES;
		}
		v = pstrdup(value);
		if (!percent_decode(v))
			req->encoded_nul = true;
		req->list_values[req->nlist_values++] = v;
	}
	return MHD_YES;
}

static void
new_request_id(char *out)
{
	unsigned char r[16];

	if (!pg_strong_random(r, sizeof(r)))
		memset(r, 0, sizeof(r));
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
}

/* Does the path have an empty, "." or ".." segment? */
static bool
has_dot_or_empty_segment(const char *path)
{
	for (const char *p = path; *p; p++)
	{
		size_t		n;

		if (*p != '/')
			continue;
		n = strcspn(p + 1, "/");
		if ((n == 0 && p[1] == '/') || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return true;
	}
	return false;
}

/* Find the operation for method and path; NULL (and *resp set) if none. */
static const ApiOperation *
route(const char *method, const char *path, FsApiRequest *req, FsApiResponse *resp)
{
	/*
	 * SigV4 signs a path with its empty, "." and ".." segments taken out
	 * (as botocore does): such a path would be checked as one path and
	 * acted on as another.  No AWS client sends one.
	 */
	if (has_dot_or_empty_segment(path))
	{
		fairshare_api_error(resp, 400, "ClientException",
							"the path has an empty, \".\" or \"..\" segment; send the resource ARN percent-encoded, "
							"as AWS clients do");
		return NULL;
	}
	if (strncmp(path, "/v1/tags/", 9) == 0 && path[9] != '\0')
	{
		const ApiOperation *op = NULL;

		if (strcmp(method, "POST") == 0)
			op = &op_tag;
		else if (strcmp(method, "DELETE") == 0)
			op = &op_untag;
		else if (strcmp(method, "GET") == 0)
			op = &op_list_tags;
		if (op != NULL)
		{
			req->path_param_name = "resourceArn";
			req->path_param = pstrdup(path + 9);
			if (!percent_decode(req->path_param))
				req->encoded_nul = true;
			if (op == &op_untag)
			{
				req->list_query_name = "tagKeys";
				req->list_values = palloc0(FS_API_MAX_LIST_VALUES * sizeof(char *));
			}
			return op;
		}
	}
	else if (strncmp(path, "/v1/", 4) == 0 && strcmp(method, "POST") == 0)
	{
		for (int i = 0; i < lengthof(operations); i++)
			if (pg_strcasecmp(path + 4, operations[i].name) == 0)
				return &operations[i];
	}
	fairshare_api_error(resp, 404, "UnknownOperationException",
						"fairshare serves AWS Batch's service-job operations: POST /v1/<operation>, "
						"and /v1/tags/<resourceArn> for tagging");
	return NULL;
}

static enum MHD_Result
respond(struct MHD_Connection *connection, FsApiResponse *resp, const char *request_id, bool close)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (resp->body == NULL)
		fairshare_api_error(resp, 500, "ServerException", "out of memory");
	if (resp->body == NULL)
		return MHD_NO;
	r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
	if (r == NULL)
	{
		free(resp->body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "x-amzn-RequestId", request_id);
	if (resp->error_type != NULL)
		MHD_add_response_header(r, "x-amzn-ErrorType", resp->error_type);
	if (close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	ret = MHD_queue_response(connection, resp->http_status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Answer the whole request: route, collect, authenticate, run. */
static enum MHD_Result
handle(struct MHD_Connection *connection, RequestState *st, const char *url, const char *method)
{
	FsApiRequest req;
	FsApiResponse resp;
	const ApiOperation *op;
	Collect		c;
	StringInfoData query;
	enum MHD_Result ret;
	MemoryContext old;
	volatile bool failed = false;

	memset(&req, 0, sizeof(req));
	memset(&resp, 0, sizeof(resp));
	new_request_id(req.request_id);
	if (st->too_many_connections)
	{
		fairshare_api_error(&resp, 429, "TooManyRequestsException",
							"Too many connections: the server is at fairshare.api_max_connections; try again");
		return respond(connection, &resp, req.request_id, true);
	}
	if (st->headers_too_large)
	{
		char		msg[160];

		snprintf(msg, sizeof(msg), "the request line and headers are larger than fairshare.api_max_header_size (%d bytes)",
				 fairshare_api_max_header_size);
		fairshare_api_error(&resp, 431, "ClientException", msg);
		return respond(connection, &resp, req.request_id, true);
	}
	if (st->too_large)
	{
		char		msg[160];

		snprintf(msg, sizeof(msg), "the request body is larger than fairshare.api_max_body_size (%d bytes)",
				 fairshare_api_max_body_size);
		fairshare_api_error(&resp, 413, "ClientException", msg);
		return respond(connection, &resp, req.request_id, true);
	}

	/*
	 * Everything below allocates in the request context, reset after the
	 * answer; nothing in it can raise but out-of-memory, which PG_TRY turns
	 * into a ServerException rather than a jump through libmicrohttpd.
	 */
	old = MemoryContextSwitchTo(fairshare_api_request_context);
	PG_TRY();
	{
		op = route(method, url, &req, &resp);
		if (op != NULL)
		{
			req.operation = op->name;
			req.function = op->function;
			req.method = method;
			req.raw_path = url;
			req.scheme = st->tls ? "https" : "http";
			req.body = st->body ? st->body : "";
			req.body_len = st->len;
			c.req = &req;

			/*
			 * Every header is kept, however many: their total size is
			 * already bounded by fairshare.api_max_header_size, and one
			 * left out would fail the signature check for no reason the
			 * client could see.
			 */
			c.cap = MHD_get_connection_values(connection, MHD_HEADER_KIND, NULL, NULL);
			req.header_names = palloc((c.cap + 1) * sizeof(char *));
			req.header_values = palloc((c.cap + 1) * sizeof(char *));
			MHD_get_connection_values(connection, MHD_HEADER_KIND, collect_header, &c);
			initStringInfo(&query);
			c.query = &query;
			MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, collect_argument, &c);
			req.raw_query = query.data;
			req.host = fairshare_api_header(&req, "Host");
			if (req.host == NULL)
				req.host = "";

			/*
			 * A URL's "#" starts its fragment, which a client never sends
			 * and SigV4 does not sign: one here would leave what follows
			 * it out of the signature check.  Clients send it as %23.
			 */
			if (strchr(req.raw_path, '#') != NULL || strchr(req.raw_query, '#') != NULL)
				fairshare_api_error(&resp, 400, "ClientException",
									"a \"#\" in a request's path or query must be sent as %23");
			else
				fairshare_api_execute(&req, &resp);
		}
	}
	PG_CATCH();
	{
		FlushErrorState();
		failed = true;
	}
	PG_END_TRY();
	if (failed)
	{
		free(resp.body);
		fairshare_api_error(&resp, 500, "ServerException", "the server could not take this request");
	}
	MemoryContextSwitchTo(old);
	ret = respond(connection, &resp, req.request_id, false);
	MemoryContextReset(fairshare_api_request_context);
	return ret;
}

static enum MHD_Result
add_header_size(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	size_t	   *size = cls;

	*size += strlen(key) + 2 + (value ? strlen(value) : 0) + 2;	/* "key: value\r\n" */
	return MHD_YES;
}

/* The size of the request line and headers as the client sent them. */
static size_t
header_size(struct MHD_Connection *connection, const char *url, const char *method)
{
	size_t		size = strlen(method) + 1 + strlen(url) + 11;	/* " HTTP/1.1\r\n" */

	MHD_get_connection_values(connection, MHD_HEADER_KIND, add_header_size, &size);
	return size;
}

enum MHD_Result
fairshare_api_access_handler(void *cls, struct MHD_Connection *connection, const char *url,
							 const char *method, const char *version, const char *upload_data,
							 size_t *upload_data_size, void **con_cls)
{
	RequestState *st = *con_cls;

	if (st == NULL)
	{
		const char *length;

		st = calloc(1, sizeof(RequestState));
		if (st == NULL)
			return MHD_NO;
		*con_cls = st;
		st->tls = cls != NULL;
		st->too_many_connections = fairshare_api_open_connections() > fairshare_api_max_connections;
		st->headers_too_large = header_size(connection, url, method) > (size_t) fairshare_api_max_header_size;
		length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (length != NULL && strtoull(length, NULL, 10) > (unsigned long long) fairshare_api_max_body_size)
			st->too_large = true;
		/* known from the headers: answered now, the body never read */
		if (st->too_many_connections || st->headers_too_large || st->too_large)
		{
			st->answered = true;
			return handle(connection, st, url, method);
		}
		return MHD_YES;
	}
	if (st->answered)
	{
		*upload_data_size = 0;
		return MHD_NO;			/* nothing more of this request is wanted */
	}
	if (*upload_data_size > 0)
	{
		size_t		n = *upload_data_size;

		*upload_data_size = 0;
		if (st->too_large)
		{
			/* read and dropped, answered at the end -- up to a point */
			st->dropped += n;
			return st->dropped > (size_t) fairshare_api_max_body_size * DISCARD_LIMIT_FACTOR ? MHD_NO : MHD_YES;
		}
		if (st->len + n > (size_t) fairshare_api_max_body_size)
		{
			st->too_large = true;
			st->dropped = st->len + n;
			free(st->body);
			st->body = NULL;
			st->len = st->cap = 0;
			return MHD_YES;
		}
		if (st->len + n + 1 > st->cap)
		{
			size_t		cap = Max(st->cap * 2, st->len + n + 1);
			char	   *b = realloc(st->body, cap);

			if (b == NULL)
				return MHD_NO;
			st->body = b;
			st->cap = cap;
		}
		memcpy(st->body + st->len, upload_data, n);
		st->len += n;
		st->body[st->len] = '\0';
		return MHD_YES;
	}
	return handle(connection, st, url, method);
}

void
fairshare_api_request_completed(void *cls, struct MHD_Connection *connection,
								void **con_cls, enum MHD_RequestTerminationCode toe)
{
	RequestState *st = *con_cls;

	if (st != NULL)
	{
		free(st->body);
		free(st);
		*con_cls = NULL;
	}
}

void
fairshare_api_connection_notify(void *cls, struct MHD_Connection *connection,
								void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
	{
		const union MHD_ConnectionInfo *info =
			MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		int			one = 1;

		/*
		 * Answers are small and a keep-alive client sends its next request
		 * only after reading one: never let Nagle's algorithm hold the tail
		 * of an answer back waiting for the client's delayed ACK.
		 */
		if (info != NULL)
			(void) setsockopt(info->connect_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fairshare_api_connection_opened();
	}
	else
		fairshare_api_connection_closed();
}
