/*-------------------------------------------------------------------------
 *
 * sagemaker_client.c
 *		The SageMaker request engine: signed JSON 1.1 calls on libcurl's
 *		multi interface, paced by a token bucket, retried with jittered
 *		exponential backoff, waited for on the process latch.
 *
 * A call ("request" below) is queued by fs_sm_submit and goes through
 *
 *		queued -> running -> done			(answered, or final failure)
 *				   running -> backoff -> queued  (retryable failure, tries left)
 *				   running -> queued		(credentials refreshed, once)
 *
 * Each state is a list of the client; a request is on exactly one of them,
 * so nothing is lost whatever is raised between two steps.  A "try" is one
 * HTTP request: it gets its own curl easy handle, signed just before it is
 * added to the multi handle; the multi handle keeps the connections alive
 * between tries and calls.
 *
 * fs_sm_wait() turns the crank.  One turn:
 *	 1. CHECK_FOR_INTERRUPTS; backoff requests whose time has come go to the
 *		front of the queue (they are older than anything behind them);
 *	 2. start queued requests while fewer than
 *		fairshare.max_concurrent_requests are running and the token bucket
 *		(fairshare.api_rate_limit tokens per second, at most max(1, rate/20)
 *		of them saved up) has a token: one token per try;
 *	 3. if curl's timer is due, curl_multi_socket_action(CURL_SOCKET_TIMEOUT);
 *	 4. collect finished transfers, classify them (retry, refresh
 *		credentials and retry, or final);
 *	 5. if anything is final, hand it out and return;
 *	 6. otherwise wait on a WaitEventSet of MyLatch, postmaster death and
 *		every socket curl asked us to watch (CURLMOPT_SOCKETFUNCTION), for
 *		at most the time to the earliest of: the caller's timeout, curl's
 *		timer (CURLMOPT_TIMERFUNCTION), the next backoff, the next token;
 *		pass socket events to curl_multi_socket_action.  A set latch ends
 *		the wait and the call, unreset.
 * Nothing in a turn blocks except that wait, and the credential chain when
 * it must fetch from a container or instance-metadata endpoint (bounded by
 * its own short timeouts, interruptible).
 *
 * Retries (the same for every operation):
 *	 - throttling -- ThrottlingException and the other names botocore
 *	   treats as throttling, or HTTP 429 -- backs off from a base of
 *	   throttle_backoff_base_ms (500 ms), and empties the token bucket so
 *	   that no other request starts in a burst right after;
 *	 - HTTP 5xx, 408, the transient names (InternalFailure,
 *	   ServiceUnavailable, RequestTimeout, ...), timeouts, refused or
 *	   dropped connections, TLS handshake failures, DNS failures and
 *	   unparseable 2xx answers back off from backoff_base_ms (100 ms);
 *	 - the delay before try n+1 is "equal jitter":
 *		  ceiling = min(backoff_cap_ms, base * 2^(n-1)),
 *		  delay   = ceiling/2 + uniform(0, ceiling/2);
 *	 - ExpiredToken*, InvalidSignature* and UnrecognizedClientException
 *	   drop the process's cached credentials and retry once, at once (the
 *	   cache may hold credentials that were rotated or revoked);
 *	 - after max_tries tries (5) the call is final: FS_SM_RETRYABLE_EXHAUSTED
 *	   with the last answer's status, type and message;
 *	 - a CreateTrainingJob of a client without resend_unanswered_creates is
 *	   final after a try that was sent and got no answer, and its seek
 *	   callback refuses curl's resend (below): no name is sent twice.
 * curl itself resends a request once when a reused keep-alive connection
 * turns out to have been closed before any byte of the answer came -- which
 * is also what an answer lost after SageMaker acted looks like.  The body
 * goes to curl through a read callback, so such a resend has to rewind it
 * through our seek callback: we count it as one more try, and as an
 * ambiguous one (the first send may have been acted on).
 *
 * This file must never write a secret anywhere: the Authorization and
 * X-Amz-Security-Token header lines are built in scratch memory that is
 * wiped, and the curl header lists are wiped before they are freed.
 * Messages carry operation names, error types, SageMaker's own messages,
 * curl's error text (host and port at most) -- never headers or bodies.
 * curl callbacks must not ereport: they use malloc and set flags.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <math.h>
#include <poll.h>

#include "common/jsonapi.h"
#include "common/pg_prng.h"
#include "lib/ilist.h"
#include "mb/pg_wchar.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "aws/credentials.h"
#include "aws/curl_prelude.h"
#include "aws/http.h"
#include "aws/redact.h"
#include "aws/sagemaker_client.h"
#include "aws/sigv4.h"
#include "create_gate.h"
#include "settings.h"

#define SM_CONTENT_TYPE		"application/x-amz-json-1.1"
#define SM_USER_AGENT		"fairshare/0.1.0"
#define SM_SERVICE			"sagemaker"
#define SM_HEADER_MAX		128

typedef enum RequestState
{
	REQ_QUEUED,
	REQ_BACKOFF,
	REQ_RUNNING,
	REQ_DONE
} RequestState;

/* What the classification of a finished try says to do next. */
typedef enum NextStep
{
	STEP_FINAL,					/* report it */
	STEP_RETRY,					/* back off, then try again */
	STEP_RETRY_THROTTLED,		/* the same, from the throttling base */
	STEP_REFRESH_CREDENTIALS	/* forget credentials, try again at once */
} NextStep;

typedef struct SmRequest
{
	dlist_node	node;			/* in the list of its state */
	RequestState state;
	uint64		tag;
	FsSmOperation op;
	char	   *url;
	char	   *region;
	char	   *body;
	size_t		body_len;
	bool		no_proxy;		/* loopback endpoint */
	TimestampTz submitted_at;
	TimestampTz first_started_at;
	TimestampTz finished_at;
	TimestampTz not_before;		/* in backoff: when to queue again */
	int			tries;
	int			ambiguous_tries;
	int			new_connections;
	bool		credentials_refreshed;
	size_t		read_pos;		/* of the body, for curl's read callback */
	int			resends;		/* curl's own resends in this try */
	bool		no_resend;		/* a create that must not be sent twice */

	/* the try in flight; all but easy/headers are written by curl callbacks */
	CURL	   *easy;
	bool		in_multi;
	struct curl_slist *headers; /* malloc'd by curl; holds the signature */
	FsHttpBuffer buf;
	char		errbuf[CURL_ERROR_SIZE];
	char		hdr_request_id[SM_HEADER_MAX];
	char		hdr_error_type[SM_HEADER_MAX];

	/* the outcome of the last try */
	FsSmErrorClass error_class;
	long		http_status;
	char	   *error_type;
	char	   *message;
	Jsonb	   *response;
	char	   *request_id;
} SmRequest;

typedef struct SockEntry
{
	curl_socket_t fd;
	int			what;			/* CURL_POLL_IN, _OUT, _INOUT */
} SockEntry;

struct FsSmClient
{
	MemoryContext cxt;			/* the client and its requests */
	MemoryContext scratch;		/* reset on every turn of fs_sm_wait */
	MemoryContextCallback cleanup_cb;
	dlist_node	live_node;		/* in live_clients */
	bool		cleaned;

	CURLM	   *multi;
	long		maxconnects;	/* CURLMOPT_MAXCONNECTS last set */
	FsSmOptions opts;

	dlist_head	queued;
	dlist_head	backoff;
	dlist_head	running;
	dlist_head	done;
	int			n_queued;
	int			n_backoff;
	int			n_running;
	int			n_done;

	/* sockets curl wants watched (malloc'd: filled inside curl) */
	SockEntry  *socks;
	int			nsocks;
	int			socks_cap;
	bool		socks_oom;

	/* curl's single timer */
	bool		timer_set;
	TimestampTz timer_at;

	/* token bucket */
	double		tokens;
	TimestampTz bucket_at;		/* 0: not started yet (starts full) */
};

static dlist_head live_clients = DLIST_STATIC_INIT(live_clients);
static bool exit_hook_registered = false;
static int	n_live_clients = 0;
static int	n_live_multi = 0;
static int	n_live_easy = 0;

static const char *const operation_names[FS_SM_NUM_OPERATIONS] = {
	"CreateTrainingJob",
	"DescribeTrainingJob",
	"StopTrainingJob",
	"ListTrainingJobs",
	"ListTags"
};

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

static void client_cleanup(FsSmClient *c);

/* -------------------------------------------------------------- names */

const char *
fs_sm_operation_name(FsSmOperation op)
{
	if ((int) op < 0 || (int) op >= FS_SM_NUM_OPERATIONS)
		return "unknown";
	return operation_names[op];
}

bool
fs_sm_operation_from_name(const char *name, FsSmOperation *op)
{
	int			i;

	for (i = 0; i < FS_SM_NUM_OPERATIONS; i++)
	{
		if (strcmp(name, operation_names[i]) == 0)
		{
			*op = (FsSmOperation) i;
			return true;
		}
	}
	return false;
}

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

void
fs_sm_handle_counts(int *clients, int *multi_handles, int *easy_handles)
{
	*clients = n_live_clients;
	*multi_handles = n_live_multi;
	*easy_handles = n_live_easy;
}

/* -------------------------------------------------------------- options */

void
fs_sm_default_options(FsSmOptions *o)
{
	o->connect_timeout_ms = FS_SM_DEFAULT_CONNECT_TIMEOUT_MS;
	o->timeout_ms = FS_SM_DEFAULT_TIMEOUT_MS;
	o->max_tries = FS_SM_DEFAULT_MAX_TRIES;
	o->backoff_base_ms = FS_SM_DEFAULT_BACKOFF_BASE_MS;
	o->throttle_backoff_base_ms = FS_SM_DEFAULT_THROTTLE_BACKOFF_BASE_MS;
	o->backoff_cap_ms = FS_SM_DEFAULT_BACKOFF_CAP_MS;
	o->resend_unanswered_creates = true;
}

static void
check_range(const char *name, long value, long min, long max)
{
	if (value < min || value > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("SageMaker client option %s must be between %ld and %ld, not %ld",
						name, min, max, value)));
}

void
fs_sm_client_set_options(FsSmClient *c, const FsSmOptions *o)
{
	check_range("connect_timeout_ms", o->connect_timeout_ms, 1, 3600 * 1000L);
	check_range("timeout_ms", o->timeout_ms, 1, 3600 * 1000L);
	check_range("max_tries", o->max_tries, 1, FS_SM_MAX_TRIES_LIMIT);
	check_range("backoff_base_ms", o->backoff_base_ms, 0, 3600 * 1000L);
	check_range("throttle_backoff_base_ms", o->throttle_backoff_base_ms, 0, 3600 * 1000L);
	check_range("backoff_cap_ms", o->backoff_cap_ms, 0, 3600 * 1000L);
	c->opts = *o;
}

/* ----------------------------------------------------- curl callbacks */

/*
 * CURLMOPT_SOCKETFUNCTION: remember which sockets to watch for what.  Must
 * not ereport; a failure to grow the table is reported after curl returns.
 */
static int
socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	FsSmClient *c = (FsSmClient *) userp;
	int			i;

	for (i = 0; i < c->nsocks; i++)
		if (c->socks[i].fd == s)
			break;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < c->nsocks)
			c->socks[i] = c->socks[--c->nsocks];
		return 0;
	}
	if (i == c->nsocks)
	{
		if (c->nsocks == c->socks_cap)
		{
			int			cap = c->socks_cap ? c->socks_cap * 2 : 16;
			SockEntry  *n = realloc(c->socks, cap * sizeof(SockEntry));

			if (n == NULL)
			{
				c->socks_oom = true;
				return 0;
			}
			c->socks = n;
			c->socks_cap = cap;
		}
		c->socks[i].fd = s;
		c->nsocks++;
	}
	c->socks[i].what = what;
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: curl's one timer; -1 deletes it. */
static int
timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	FsSmClient *c = (FsSmClient *) userp;

	if (timeout_ms < 0)
		c->timer_set = false;
	else
	{
		c->timer_set = true;
		c->timer_at = GetCurrentTimestamp() + (TimestampTz) timeout_ms * 1000;
	}
	return 0;
}

/* Copy a header value, trimmed, into a fixed buffer (never a secret). */
static void
keep_header_value(char *dst, const char *v, size_t len)
{
	while (len > 0 && (*v == ' ' || *v == '\t'))
		v++, len--;
	while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' ||
					   v[len - 1] == ' ' || v[len - 1] == '\t'))
		len--;
	if (len >= SM_HEADER_MAX)
		len = SM_HEADER_MAX - 1;
	memcpy(dst, v, len);
	dst[len] = '\0';
}

/*
 * CURLOPT_HEADERFUNCTION: keep x-amzn-RequestId and x-amzn-ErrorType of
 * the final response (a status line starts a new response: 100 Continue,
 * or curl's own resend).
 */
static size_t
header_cb(char *buffer, size_t size, size_t nitems, void *userdata)
{
	SmRequest  *r = (SmRequest *) userdata;
	size_t		n = size * nitems;
	static const char rid[] = "x-amzn-requestid:";
	static const char etype[] = "x-amzn-errortype:";

	if (n >= 5 && strncmp(buffer, "HTTP/", 5) == 0)
	{
		r->hdr_request_id[0] = '\0';
		r->hdr_error_type[0] = '\0';
	}
	else if (n > sizeof(rid) - 1 && pg_strncasecmp(buffer, rid, sizeof(rid) - 1) == 0)
		keep_header_value(r->hdr_request_id, buffer + sizeof(rid) - 1, n - (sizeof(rid) - 1));
	else if (n > sizeof(etype) - 1 && pg_strncasecmp(buffer, etype, sizeof(etype) - 1) == 0)
		keep_header_value(r->hdr_error_type, buffer + sizeof(etype) - 1, n - (sizeof(etype) - 1));
	return n;
}

/* CURLOPT_READFUNCTION: the request body. */
static size_t
read_cb(char *buffer, size_t size, size_t nitems, void *userdata)
{
	SmRequest  *r = (SmRequest *) userdata;
	size_t		n = Min(size * nitems, r->body_len - r->read_pos);

	memcpy(buffer, r->body + r->read_pos, n);
	r->read_pos += n;
	return n;
}

/*
 * CURLOPT_SEEKFUNCTION: curl rewinds the body to send it again -- on a
 * fresh connection after a reused one died under the request.
 */
static int
seek_cb(void *userdata, curl_off_t offset, int origin)
{
	SmRequest  *r = (SmRequest *) userdata;

	if (origin != SEEK_SET || offset < 0 || (size_t) offset > r->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	if (offset == 0 && r->read_pos > 0)
	{
		/* the first send may have been acted on: refused for such creates */
		if (r->no_resend)
			return CURL_SEEKFUNC_FAIL;
		r->resends++;
	}
	r->read_pos = (size_t) offset;
	return CURL_SEEKFUNC_OK;
}

/* ------------------------------------------------------- request lists */

static dlist_head *
list_of(FsSmClient *c, RequestState st, int **count)
{
	switch (st)
	{
		case REQ_QUEUED:
			*count = &c->n_queued;
			return &c->queued;
		case REQ_BACKOFF:
			*count = &c->n_backoff;
			return &c->backoff;
		case REQ_RUNNING:
			*count = &c->n_running;
			return &c->running;
		case REQ_DONE:
			break;
	}
	*count = &c->n_done;
	return &c->done;
}

/* Move r to the tail (or head) of the list of state st. */
static void
move_to(FsSmClient *c, SmRequest *r, RequestState st, bool at_head)
{
	int		   *count;
	dlist_head *to;

	(void) list_of(c, r->state, &count);
	dlist_delete(&r->node);
	(*count)--;
	to = list_of(c, st, &count);
	if (at_head)
		dlist_push_head(to, &r->node);
	else
		dlist_push_tail(to, &r->node);
	(*count)++;
	r->state = st;
}

static void
wipe_slist(struct curl_slist *l)
{
	struct curl_slist *s;

	for (s = l; s != NULL; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	curl_slist_free_all(l);
}

/* Release the curl side of r's try, if any.  Never raises. */
static void
release_try(FsSmClient *c, SmRequest *r)
{
	if (r->easy)
	{
		if (r->in_multi)
			curl_multi_remove_handle(c->multi, r->easy);
		curl_easy_cleanup(r->easy);
		n_live_easy--;
		r->easy = NULL;
		r->in_multi = false;
	}
	if (r->headers)
	{
		wipe_slist(r->headers);
		r->headers = NULL;
	}
	fs_http_buffer_reset(&r->buf);
}

static void
free_outcome(SmRequest *r)
{
	if (r->error_type)
		pfree(r->error_type);
	if (r->message)
		pfree(r->message);
	if (r->response)
		pfree(r->response);
	if (r->request_id)
		pfree(r->request_id);
	r->error_type = r->message = r->request_id = NULL;
	r->response = NULL;
}

/* Unlink, release and free a request. */
static void
drop_request(FsSmClient *c, SmRequest *r)
{
	int		   *count;

	release_try(c, r);
	(void) list_of(c, r->state, &count);
	dlist_delete(&r->node);
	(*count)--;
	free_outcome(r);
	pfree(r->url);
	pfree(r->region);
	if (r->body)
	{
		explicit_bzero(r->body, r->body_len);
		pfree(r->body);
	}
	pfree(r);
}

/* --------------------------------------------------------- the client */

static void
client_cleanup_cb(void *arg)
{
	client_cleanup((FsSmClient *) arg);
}

static void
exit_hook(int code, Datum arg)
{
	while (!dlist_is_empty(&live_clients))
		client_cleanup(dlist_container(FsSmClient, live_node,
									   dlist_head_node(&live_clients)));
}

/*
 * Release every curl resource of the client.  Called when its memory
 * context goes (delete or reset of it or of an ancestor: the requests are
 * still readable then, as callbacks run before the memory is freed) or at
 * process exit.  Never raises.
 */
static void
client_cleanup(FsSmClient *c)
{
	dlist_head *lists[4];
	int			i;

	if (c->cleaned)
		return;
	c->cleaned = true;
	lists[0] = &c->queued;
	lists[1] = &c->backoff;
	lists[2] = &c->running;
	lists[3] = &c->done;
	for (i = 0; i < 4; i++)
	{
		dlist_iter	it;

		dlist_foreach(it, lists[i])
			release_try(c, dlist_container(SmRequest, node, it.cur));
	}
	if (c->multi)
	{
		curl_multi_cleanup(c->multi);
		c->multi = NULL;
		n_live_multi--;
	}
	free(c->socks);
	c->socks = NULL;
	c->nsocks = c->socks_cap = 0;
	dlist_delete(&c->live_node);
	n_live_clients--;
}

FsSmClient *
fs_sm_client_create(void)
{
	MemoryContext cxt;
	FsSmClient *c;

	fs_curl_global_init();
	if (!exit_hook_registered)
	{
		on_proc_exit(exit_hook, (Datum) 0);
		exit_hook_registered = true;
	}

	cxt = AllocSetContextCreate(CurrentMemoryContext, "fairshare SageMaker client",
								ALLOCSET_DEFAULT_SIZES);
	c = MemoryContextAllocZero(cxt, sizeof(FsSmClient));
	c->cxt = cxt;
	c->scratch = AllocSetContextCreate(cxt, "fairshare SageMaker client turn",
									   ALLOCSET_DEFAULT_SIZES);
	fs_sm_default_options(&c->opts);
	dlist_init(&c->queued);
	dlist_init(&c->backoff);
	dlist_init(&c->running);
	dlist_init(&c->done);

	c->multi = curl_multi_init();
	if (c->multi == NULL)
	{
		MemoryContextDelete(cxt);
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("curl_multi_init() failed")));
	}
	n_live_multi++;
	dlist_push_tail(&live_clients, &c->live_node);
	n_live_clients++;
	c->cleanup_cb.func = client_cleanup_cb;
	c->cleanup_cb.arg = c;
	MemoryContextRegisterResetCallback(cxt, &c->cleanup_cb);

	/* from here on, an ERROR leaves the client to its context's cleanup */
	FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb));
	FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_SOCKETDATA, (void *) c));
	FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_TIMERFUNCTION, timer_cb));
	FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_TIMERDATA, (void *) c));
	/* HTTP/1.1 keep-alive, no pipelining; we bound concurrency ourselves */
	FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_PIPELINING, (long) CURLPIPE_NOTHING));
	return c;
}

void
fs_sm_client_destroy(FsSmClient *c)
{
	MemoryContextDelete(c->cxt);	/* the reset callback does the curl side */
}

void
fs_sm_cancel_all(FsSmClient *c)
{
	dlist_head *lists[4];
	int			i;

	lists[0] = &c->queued;
	lists[1] = &c->backoff;
	lists[2] = &c->running;
	lists[3] = &c->done;
	for (i = 0; i < 4; i++)
	{
		dlist_mutable_iter it;

		dlist_foreach_modify(it, lists[i])
			drop_request(c, dlist_container(SmRequest, node, it.cur));
	}
}

int
fs_sm_pending(FsSmClient *c)
{
	return c->n_queued + c->n_backoff + c->n_running + c->n_done;
}

int
fs_sm_in_flight(FsSmClient *c)
{
	return c->n_running;
}

int
fs_sm_ready(FsSmClient *c)
{
	return c->n_done;
}

/* ------------------------------------------------------------ outcomes */

/* Make r final with this outcome (strings are copied) and move it to done. */
static void
finish(FsSmClient *c, SmRequest *r, FsSmErrorClass cls, const char *type,
	   const char *message)
{
	MemoryContext old = MemoryContextSwitchTo(c->cxt);

	r->error_class = cls;
	if (type)
	{
		if (r->error_type)
			pfree(r->error_type);
		r->error_type = pstrdup(type);
	}
	if (message)
	{
		if (r->message)
			pfree(r->message);
		r->message = pstrdup(message);
	}
	MemoryContextSwitchTo(old);
	r->finished_at = GetCurrentTimestamp();
	release_try(c, r);
	move_to(c, r, REQ_DONE, false);
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
		JsonLexContext *lex = makeJsonLexContextCstringLen(text, strlen(text),
														   GetDatabaseEncoding(), true);

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
static bool
request_was_sent(SmRequest *r)
{
	long		sent = 0;

	if (curl_easy_getinfo(r->easy, CURLINFO_REQUEST_SIZE, &sent) != CURLE_OK)
		return true;
	return sent > 0;
}

/* A try ended without an HTTP answer: what next. */
static NextStep
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
static NextStep
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

/* Equal jitter: ceiling/2 + uniform(0, ceiling/2), in microseconds. */
static TimestampTz
backoff_delay(FsSmClient *c, bool throttled, int failed_tries)
{
	double		base = throttled ? c->opts.throttle_backoff_base_ms : c->opts.backoff_base_ms;
	double		ceiling = base * pow(2.0, Min(failed_tries - 1, 30));

	if (ceiling > c->opts.backoff_cap_ms)
		ceiling = c->opts.backoff_cap_ms;
	return (TimestampTz) ((ceiling / 2.0 + pg_prng_double(&pg_global_prng_state) * ceiling / 2.0) * 1000.0);
}

/* A transfer of r is complete (rc from curl): retry it or make it final. */
static void
try_finished(FsSmClient *c, SmRequest *r, CURLcode rc)
{
	FsSmErrorClass cls;
	NextStep	step;
	const char *transport_type = NULL;
	long		connects = 0;
	TimestampTz delay;

	if (curl_easy_getinfo(r->easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK)
		r->new_connections += (int) connects;
	r->tries += r->resends;
	r->ambiguous_tries += r->resends;
	free_outcome(r);
	r->http_status = 0;

	if (rc == CURLE_OK)
	{
		long		status = 0;

		FS_CURL_CHECK(curl_easy_getinfo, (r->easy, CURLINFO_RESPONSE_CODE, &status));
		r->http_status = status;
		if (r->hdr_request_id[0])
			r->request_id = MemoryContextStrdup(c->cxt, r->hdr_request_id);
		step = classify_answer(c, r, &cls);
	}
	else
	{
		step = classify_transport(c, r, rc, &cls, &transport_type);
		r->error_type = MemoryContextStrdup(c->cxt, transport_type);
		r->message = MemoryContextStrdup(c->cxt, r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc));
	}

	if (step == STEP_REFRESH_CREDENTIALS)
	{
		if (!r->credentials_refreshed && r->tries < c->opts.max_tries)
		{
			ereport(DEBUG1,
					(errmsg_internal("fairshare: SageMaker %s answered %s; fetching credentials again and retrying",
									 fs_sm_operation_name(r->op), r->error_type)));
			r->credentials_refreshed = true;
			fs_aws_forget_credentials();
			release_try(c, r);
			move_to(c, r, REQ_QUEUED, true);
			return;
		}
		step = STEP_FINAL;
	}
	/*
	 * A create sent without an answer may exist now: with no_resend the
	 * caller looks it up before anything sends it again.  (A 5xx is still
	 * retried: it is an answer, and SageMaker rarely acts before one.)
	 */
	if (step == STEP_RETRY && r->no_resend && rc != CURLE_OK && request_was_sent(r))
		step = STEP_FINAL;
	if ((step == STEP_RETRY || step == STEP_RETRY_THROTTLED) && r->tries < c->opts.max_tries)
	{
		delay = backoff_delay(c, step == STEP_RETRY_THROTTLED, r->tries);
		if (step == STEP_RETRY_THROTTLED)
			c->tokens = 0;
		ereport(DEBUG1,
				(errmsg_internal("fairshare: SageMaker %s try %d of %d failed with %s; next try in %.0f ms",
								 fs_sm_operation_name(r->op), r->tries, c->opts.max_tries,
								 r->error_type ? r->error_type : "an error", delay / 1000.0)));
		r->not_before = GetCurrentTimestamp() + delay;
		release_try(c, r);
		move_to(c, r, REQ_BACKOFF, false);
		return;
	}
	finish(c, r, cls, NULL, NULL);
}

/* Hand every finished transfer to try_finished. */
static void
collect_finished(FsSmClient *c)
{
	CURLMsg    *msg;
	int			left;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL)
	{
		SmRequest  *r = NULL;
		CURLcode	rc;

		if (msg->msg != CURLMSG_DONE)
			continue;
		rc = msg->data.result;
		FS_CURL_CHECK(curl_easy_getinfo, (msg->easy_handle, CURLINFO_PRIVATE, (char **) &r));
		if (r == NULL || r->easy != msg->easy_handle)
			elog(ERROR, "curl reported a transfer fairshare does not know");
		FS_CURLM_CHECK(curl_multi_remove_handle, (c->multi, r->easy));
		r->in_multi = false;
		PG_TRY();
		{
			try_finished(c, r, rc);
		}
		PG_CATCH();
		{
			/*
			 * Out of the multi handle but still "running", r would never
			 * finish: its caller would wait for it for ever and its
			 * concurrency slot would be gone.  Make it final as a
			 * transport failure (a create then counts as unanswered and
			 * is looked up) without allocating, and let the ERROR go on.
			 */
			if (r->state == REQ_RUNNING)
			{
				r->error_class = FS_SM_TRANSPORT;
				r->finished_at = GetCurrentTimestamp();
				release_try(c, r);
				move_to(c, r, REQ_DONE, false);
			}
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
}

/* ------------------------------------------------------------- starting */

/* Append a header line to r's list (curl copies it). */
static void
add_header_line(SmRequest *r, const char *line)
{
	struct curl_slist *n = curl_slist_append(r->headers, line);

	if (n == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("curl_slist_append() failed: out of memory")));
	r->headers = n;
}

/* Append "Name: value"; our copy of the line is wiped (it may be secret). */
static void
add_header(SmRequest *r, const char *name, const char *value)
{
	char	   *line = psprintf("%s: %s", name, value);

	PG_TRY();
	{
		add_header_line(r, line);
	}
	PG_FINALLY();
	{
		explicit_bzero(line, strlen(line));
		pfree(line);
	}
	PG_END_TRY();
}

/*
 * Sign r and start a try of it.  On return r is running, or final (the
 * create gate or the signer refused it: nothing was sent).  An ERROR leaves r
 * queued; whatever curl handles it got are released on its next start, by
 * fs_sm_cancel_all or with the client.
 */
static void
start_try(FsSmClient *c, SmRequest *r, const FsAwsCredentials *cred)
{
	char		amz_date[FS_SIGV4_AMZ_DATE_LEN + 1];
	char	   *target = psprintf("SageMaker.%s", fs_sm_operation_name(r->op));
	FsSigV4Header h[2];
	FsSigV4Request req;
	FsSigV4Credentials sc;
	FsSigV4Result res;
	FsSigV4Status st;
	char		err[256];
	CURL	   *easy;

	release_try(c, r);
	/* a create goes out only if its process's gate agrees (create_gate.h) */
	if (r->op == FS_SM_CREATE_TRAINING_JOB && !fairshare_create_may_go())
	{
		finish(c, r, FS_SM_RETRYABLE_EXHAUSTED, "Fenced", "not sent: the dispatcher's fence held it back");
		return;
	}
	if (!fs_sigv4_format_amz_date(time(NULL), amz_date))
		elog(ERROR, "the current time cannot be written as an X-Amz-Date");
	h[0].name = "Content-Type";
	h[0].value = SM_CONTENT_TYPE;
	h[1].name = "X-Amz-Target";
	h[1].value = target;
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = r->url;
	req.headers = h;
	req.nheaders = 2;
	req.body = (const unsigned char *) r->body;
	req.body_len = r->body_len;
	req.region = r->region;
	req.service = SM_SERVICE;
	req.amz_date = amz_date;
	sc.access_key_id = cred->access_key_id;
	sc.secret_access_key = cred->secret_access_key;
	sc.session_token = cred->session_token;

	st = fs_sigv4_sign(&req, &sc, &res, err, sizeof(err));
	if (st == FS_SIGV4_OUT_OF_MEMORY)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory while signing a SageMaker request")));
	if (st == FS_SIGV4_CRYPTO_FAILURE)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("could not sign a SageMaker request: %s", err)));
	if (st != FS_SIGV4_OK)
	{
		char	   *msg = psprintf("the request cannot be signed for endpoint \"%s\" and region \"%s\": %s",
								   r->url, r->region, err);

		finish(c, r, FS_SM_ENDPOINT, "EndpointRefused", msg);
		return;
	}

	PG_TRY();
	{
		/*
		 * The Host that was signed, not curl's own from the URL: curl keeps
		 * "LOCALHOST" as written and rewrites "127.1" to "127.0.0.1", and
		 * either way the signature would not match.
		 */
		add_header(r, "Host", res.host);
		add_header(r, "Content-Type", SM_CONTENT_TYPE);
		add_header(r, "X-Amz-Target", target);
		add_header(r, "X-Amz-Date", res.amz_date);
		add_header(r, "Authorization", res.authorization);
		if (res.security_token)
			add_header(r, "X-Amz-Security-Token", res.security_token);
	}
	PG_FINALLY();
	{
		fs_sigv4_result_free(&res);
	}
	PG_END_TRY();
	/* no 100-continue round trip ("Expect:" with no value removes it) */
	add_header_line(r, "Expect:");
	add_header_line(r, "Accept: application/json");

	easy = curl_easy_init();
	if (easy == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("curl_easy_init() failed")));
	r->easy = easy;
	n_live_easy++;
	r->errbuf[0] = '\0';
	r->read_pos = 0;
	r->resends = 0;
	r->hdr_request_id[0] = '\0';
	r->hdr_error_type[0] = '\0';
	r->buf.max = FS_SM_MAX_RESPONSE_BYTES;

	FS_CURL_SETOPT(easy, CURLOPT_URL, r->url);
	FS_CURL_SETOPT(easy, CURLOPT_PRIVATE, (char *) r);
	FS_CURL_SETOPT(easy, CURLOPT_NOSIGNAL, 1L);
	FS_CURL_SETOPT(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	FS_CURL_SETOPT(easy, CURLOPT_FOLLOWLOCATION, 0L);
	FS_CURL_SETOPT(easy, CURLOPT_SSL_VERIFYPEER, 1L);
	FS_CURL_SETOPT(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	FS_CURL_SETOPT(easy, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
	FS_CURL_SETOPT(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	FS_CURL_SETOPT(easy, CURLOPT_CONNECTTIMEOUT_MS, c->opts.connect_timeout_ms);
	FS_CURL_SETOPT(easy, CURLOPT_TIMEOUT_MS, c->opts.timeout_ms);
	FS_CURL_SETOPT(easy, CURLOPT_ERRORBUFFER, r->errbuf);
	FS_CURL_SETOPT(easy, CURLOPT_USERAGENT, SM_USER_AGENT);
	FS_CURL_SETOPT(easy, CURLOPT_WRITEFUNCTION, fs_http_buffer_write);
	FS_CURL_SETOPT(easy, CURLOPT_WRITEDATA, (void *) &r->buf);
	FS_CURL_SETOPT(easy, CURLOPT_HEADERFUNCTION, header_cb);
	FS_CURL_SETOPT(easy, CURLOPT_HEADERDATA, (void *) r);
	FS_CURL_SETOPT(easy, CURLOPT_HTTPHEADER, r->headers);
	FS_CURL_SETOPT(easy, CURLOPT_POST, 1L);
	FS_CURL_SETOPT(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) r->body_len);
	FS_CURL_SETOPT(easy, CURLOPT_READFUNCTION, read_cb);
	FS_CURL_SETOPT(easy, CURLOPT_READDATA, (void *) r);
	FS_CURL_SETOPT(easy, CURLOPT_SEEKFUNCTION, seek_cb);
	FS_CURL_SETOPT(easy, CURLOPT_SEEKDATA, (void *) r);
	if (r->no_proxy)
		FS_CURL_SETOPT(easy, CURLOPT_NOPROXY, "*");

	FS_CURLM_CHECK(curl_multi_add_handle, (c->multi, easy));
	r->in_multi = true;
	r->tries++;
	if (r->first_started_at == 0)
		r->first_started_at = GetCurrentTimestamp();
	move_to(c, r, REQ_RUNNING, false);
}

static void
refill_bucket(FsSmClient *c, TimestampTz now)
{
	double		rate = Max(1, fairshare_api_rate_limit);
	double		cap = Max(1.0, rate / 20.0);

	if (c->bucket_at == 0)
		c->tokens = cap;
	else if (now > c->bucket_at)
		c->tokens += (double) (now - c->bucket_at) / USECS_PER_SEC * rate;
	if (c->tokens > cap)
		c->tokens = cap;
	c->bucket_at = now;
}

/*
 * Start queued requests as concurrency and pacing allow.  Without
 * may_fetch, only with credentials at hand (fs_aws_credentials_without_fetch):
 * the pump must not wait on a credential endpoint.
 */
static void
start_ready(FsSmClient *c, TimestampTz now, bool may_fetch)
{
	const FsAwsCredentials *cred = NULL;
	int			max_running = Max(1, fairshare_max_concurrent_requests);
	long		maxconnects = Max(4, max_running);

	if (maxconnects != c->maxconnects)
	{
		FS_CURLM_CHECK(curl_multi_setopt, (c->multi, CURLMOPT_MAXCONNECTS, maxconnects));
		c->maxconnects = maxconnects;
	}

	/* backoffs that are due go first: they are older than the queue */
	if (c->n_backoff > 0)
	{
		dlist_mutable_iter it;
		dlist_head	due;

		dlist_init(&due);
		dlist_foreach_modify(it, &c->backoff)
		{
			SmRequest  *r = dlist_container(SmRequest, node, it.cur);

			if (r->not_before <= now)
			{
				dlist_delete(&r->node);
				c->n_backoff--;
				dlist_push_tail(&due, &r->node);
			}
		}
		while (!dlist_is_empty(&due))
		{
			SmRequest  *r = dlist_container(SmRequest, node, dlist_tail_node(&due));

			dlist_delete(&r->node);
			dlist_push_head(&c->queued, &r->node);
			c->n_queued++;
			r->state = REQ_QUEUED;
		}
	}

	refill_bucket(c, now);
	while (c->n_queued > 0 && c->n_running < max_running && c->tokens >= 1.0)
	{
		SmRequest  *r = dlist_container(SmRequest, node, dlist_head_node(&c->queued));

		if (cred == NULL)
		{
			/* once per turn; may ERROR, leaving r queued */
			cred = may_fetch ? fs_aws_get_credentials() : fs_aws_credentials_without_fetch();
			if (cred == NULL)
				break;
		}
		start_try(c, r, cred);
		if (r->state == REQ_RUNNING)
			c->tokens -= 1.0;
	}
}

/* ------------------------------------------------------------- submitting */

static void
submit(FsSmClient *c, FsSmOperation op, const char *endpoint_url,
	   const char *region, const char *body, uint64 tag)
{
	MemoryContext old;
	SmRequest  *r;
	char	   *url;
	char	   *reg;
	const char *src;
	char	   *why;
	bool		ok;
	bool		https;
	bool		loopback;
	bool		no_proxy = false;
	const char *reason;

	if ((int) op < 0 || (int) op >= FS_SM_NUM_OPERATIONS)
		elog(ERROR, "unknown SageMaker operation %d", (int) op);

	/* resolve in scratch memory, cleared at the end */
	old = MemoryContextSwitchTo(c->scratch);
	ok = fs_sm_resolve_endpoint(endpoint_url, region, &url, &reg, &src, &why);
	if (!ok)
	{
		url = endpoint_url ? (char *) endpoint_url : "";
		reg = region ? (char *) region : "";
	}
	else if (fs_http_url_check_loopback(url, &https, &loopback, &reason))
		no_proxy = loopback;

	MemoryContextSwitchTo(c->cxt);
	r = palloc0(sizeof(SmRequest));
	r->state = REQ_QUEUED;
	r->tag = tag;
	r->op = op;
	r->url = pstrdup(url);
	r->region = pstrdup(reg);
	r->no_proxy = no_proxy;
	r->body = pstrdup(body);
	r->body_len = strlen(body);
	r->submitted_at = GetCurrentTimestamp();
	r->no_resend = op == FS_SM_CREATE_TRAINING_JOB && !c->opts.resend_unanswered_creates;
	r->buf.max = FS_SM_MAX_RESPONSE_BYTES;
	dlist_push_tail(&c->queued, &r->node);
	c->n_queued++;
	MemoryContextSwitchTo(old);

	if (!ok)
		finish(c, r, FS_SM_ENDPOINT, "EndpointRefused", why);
	/* submit is never called inside a turn: the scratch is ours to clear */
	MemoryContextReset(c->scratch);
}

void
fs_sm_submit(FsSmClient *c, FsSmOperation op, const char *endpoint_url,
			 const char *region, Jsonb *request, uint64 tag)
{
	char	   *body;
	MemoryContext old = MemoryContextSwitchTo(c->scratch);

	body = JsonbToCString(NULL, &request->root, VARSIZE(request));
	MemoryContextSwitchTo(old);
	submit(c, op, endpoint_url, region, body, tag);
}

void
fs_sm_submit_text(FsSmClient *c, FsSmOperation op, const char *endpoint_url,
				  const char *region, const char *json_body, uint64 tag)
{
	submit(c, op, endpoint_url, region, json_body, tag);
}

/* ------------------------------------------------------------- results */

static char *
copy_or_null(const char *s)
{
	return s ? pstrdup(s) : NULL;
}

/* Move up to max final requests into results palloc'd in cxt. */
static int
hand_out(FsSmClient *c, MemoryContext cxt, FsSmResult **done, int max)
{
	int			n = 0;

	while (n < max && c->n_done > 0)
	{
		SmRequest  *r = dlist_container(SmRequest, node, dlist_head_node(&c->done));
		MemoryContext old = MemoryContextSwitchTo(cxt);
		FsSmResult *res = palloc0(sizeof(FsSmResult));

		res->tag = r->tag;
		res->operation = r->op;
		res->error_class = r->error_class;
		res->http_status = r->http_status;
		if (r->error_class != FS_SM_OK)
		{
			res->error_type = copy_or_null(r->error_type);
			res->message = copy_or_null(r->message);
		}
		if (r->response)
		{
			res->response = palloc(VARSIZE(r->response));
			memcpy(res->response, r->response, VARSIZE(r->response));
		}
		res->request_id = copy_or_null(r->request_id);
		res->tries = r->tries;
		res->ambiguous_tries = r->ambiguous_tries;
		res->new_connections = r->new_connections;
		res->submitted_at = r->submitted_at;
		res->first_started_at = r->first_started_at;
		res->finished_at = r->finished_at;
		res->elapsed_ms = (double) (r->finished_at - r->submitted_at) / 1000.0;
		MemoryContextSwitchTo(old);
		done[n++] = res;
		drop_request(c, r);
	}
	return n;
}

void
fs_sm_result_free(FsSmResult *res)
{
	if (res->error_type)
		pfree(res->error_type);
	if (res->message)
		pfree(res->message);
	if (res->response)
		pfree(res->response);
	if (res->request_id)
		pfree(res->request_id);
	pfree(res);
}

/* ------------------------------------------------------------- waiting */

static void
check_socket_table(FsSmClient *c)
{
	if (c->socks_oom)
	{
		c->socks_oom = false;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory tracking SageMaker connections")));
	}
}

static void
socket_action(FsSmClient *c, curl_socket_t fd, int mask)
{
	int			running;

	FS_CURLM_CHECK(curl_multi_socket_action, (c->multi, fd, mask, &running));
	check_socket_table(c);
}

/* Milliseconds from now to t, rounded up; 0 if t is past. */
static long
ms_until(TimestampTz t, TimestampTz now)
{
	if (t <= now)
		return 0;
	return (long) ((t - now + 999) / 1000);
}

/*
 * How long the engine may sleep: until curl's timer, the first backoff
 * due, or the next token when a request waits only for one; -1 for
 * "until something happens".
 */
static long
next_wake_ms(FsSmClient *c, TimestampTz now)
{
	long		ms = -1;
	dlist_iter	it;

#define CONSIDER(x) do { long x_ = (x); if (ms < 0 || x_ < ms) ms = x_; } while (0)
	if (c->timer_set)
		CONSIDER(ms_until(c->timer_at, now));
	dlist_foreach(it, &c->backoff)
		CONSIDER(ms_until(dlist_container(SmRequest, node, it.cur)->not_before, now));
	if (c->n_queued > 0 && c->n_running < Max(1, fairshare_max_concurrent_requests))
	{
		/* a request waits for a token only, or (requeued just now) for nothing */
		double		rate = Max(1, fairshare_api_rate_limit);
		double		tokens = c->tokens;

		if (c->bucket_at != 0 && now > c->bucket_at)
			tokens += (double) (now - c->bucket_at) / USECS_PER_SEC * rate;
		if (tokens >= 1.0)
			CONSIDER(0);
		else
			CONSIDER((long) ceil((1.0 - tokens) / rate * 1000.0));
	}
#undef CONSIDER
	return ms;
}

/*
 * One WaitEventSetWait on the latch, postmaster death and curl's sockets
 * for at most wait_ms (-1: no limit).  The wait event set lives only in
 * here and is freed whatever happens (PostgreSQL 15 does not track it).
 */
static int
wait_once(FsSmClient *c, long wait_ms, WaitEvent *events, int nevents)
{
	WaitEventSet *volatile wes = NULL;
	volatile int n = 0;
	int			i;

	PG_TRY();
	{
		wes = CreateWaitEventSet(c->scratch, nevents);
		AddWaitEventToSet(wes, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		if (IsUnderPostmaster)
			AddWaitEventToSet(wes, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		for (i = 0; i < c->nsocks; i++)
		{
			uint32		ev = 0;

			if (c->socks[i].what & CURL_POLL_IN)
				ev |= WL_SOCKET_READABLE;
			if (c->socks[i].what & CURL_POLL_OUT)
				ev |= WL_SOCKET_WRITEABLE;
			if (ev)
				AddWaitEventToSet(wes, ev, c->socks[i].fd, NULL, NULL);
		}
		n = WaitEventSetWait(wes, wait_ms, events, nevents, PG_WAIT_EXTENSION);
	}
	PG_CATCH();
	{
		if (wes)
			FreeWaitEventSet(wes);
		PG_RE_THROW();
	}
	PG_END_TRY();
	FreeWaitEventSet(wes);
	return n;
}

/*
 * Wait as wait_once does, then give curl the socket events.  Returns true
 * when the latch is set.
 */
static bool
wait_for_events(FsSmClient *c, long wait_ms)
{
	int			nevents = c->nsocks + 2;
	WaitEvent  *events = palloc(nevents * sizeof(WaitEvent));
	curl_socket_t *fds = palloc(nevents * sizeof(curl_socket_t));
	int		   *masks = palloc(nevents * sizeof(int));
	int			n;
	int			i;
	int			nready = 0;
	bool		latch = false;

	n = wait_once(c, wait_ms, events, nevents);
	for (i = 0; i < n; i++)
	{
		if (events[i].events & WL_LATCH_SET)
			latch = true;
		else if (events[i].events & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
		{
			int			mask = 0;

			if (events[i].events & WL_SOCKET_READABLE)
				mask |= CURL_CSELECT_IN;
			if (events[i].events & WL_SOCKET_WRITEABLE)
				mask |= CURL_CSELECT_OUT;
			fds[nready] = events[i].fd;
			masks[nready] = mask;
			nready++;
		}
	}
	/* curl may change its socket table while we hand it these */
	for (i = 0; i < nready; i++)
		socket_action(c, fds[i], masks[i]);
	return latch;
}

/*
 * Turn the crank (see the top of the file) until something is final (and
 * the caller wants results), the latch is set, or the deadline passes.
 * Runs in the client's scratch context.
 */
static void
drive(FsSmClient *c, bool has_deadline, TimestampTz deadline, int max_done)
{
	for (;;)
	{
		TimestampTz now;
		long		wait_ms;
		bool		last = false;
		bool		latch;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(c->scratch);

		now = GetCurrentTimestamp();
		start_ready(c, now, true);
		/* a request just started set curl's timer to "now": send it at once */
		if (c->timer_set && c->timer_at <= GetCurrentTimestamp())
		{
			c->timer_set = false;
			socket_action(c, CURL_SOCKET_TIMEOUT, 0);
		}
		collect_finished(c);
		if (c->n_done > 0 && max_done > 0)
			return;

		now = GetCurrentTimestamp();
		wait_ms = next_wake_ms(c, now);
		if (has_deadline)
		{
			long		left = ms_until(deadline, now);

			if (left == 0)
				last = true;
			if (wait_ms < 0 || left < wait_ms)
				wait_ms = left;
		}
		latch = wait_for_events(c, wait_ms);
		collect_finished(c);
		if ((c->n_done > 0 && max_done > 0) || latch || last)
			return;
	}
}

int
fs_sm_wait(FsSmClient *c, long timeout_ms, FsSmResult **done, int max_done)
{
	MemoryContext caller = CurrentMemoryContext;
	volatile TimestampTz deadline = 0;
	int			n;

	if (c->cleaned)
		elog(ERROR, "SageMaker client used after it was destroyed");
	if (max_done > 0 && done == NULL)
		elog(ERROR, "fs_sm_wait needs a result array");
	if (timeout_ms >= 0)
		deadline = GetCurrentTimestamp() + (TimestampTz) timeout_ms * 1000;

	MemoryContextSwitchTo(c->scratch);
	PG_TRY();
	{
		drive(c, timeout_ms >= 0, deadline, max_done);
	}
	PG_CATCH();
	{
		/* whoever catches this must not find itself in our scratch memory */
		MemoryContextSwitchTo(caller);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	n = max_done > 0 ? hand_out(c, caller, done, max_done) : 0;
	MemoryContextReset(c->scratch);
	return n;
}

/*
 * One turn of the crank that never waits (see fs_sm_pump in the header):
 * start what may start, give curl the socket events that are ready now
 * (poll(2) with a zero timeout on the sockets curl watches), fire curl's
 * timer if due, and keep what became final for the next fs_sm_wait().
 */
static void
pump(FsSmClient *c)
{
	struct pollfd *fds;
	int			nfds = 0;
	int			n;

	start_ready(c, GetCurrentTimestamp(), false);
	if (c->nsocks > 0)
	{
		fds = palloc(sizeof(struct pollfd) * c->nsocks);
		for (int i = 0; i < c->nsocks; i++)
		{
			short		ev = 0;

			if (c->socks[i].what & CURL_POLL_IN)
				ev |= POLLIN;
			if (c->socks[i].what & CURL_POLL_OUT)
				ev |= POLLOUT;
			if (ev == 0)
				continue;
			fds[nfds].fd = c->socks[i].fd;
			fds[nfds].events = ev;
			fds[nfds].revents = 0;
			nfds++;
		}
		n = nfds > 0 ? poll(fds, nfds, 0) : 0;
		/* EINTR and friends: nothing is ready this time round */
		for (int i = 0; n > 0 && i < nfds; i++)
		{
			int			mask = 0;

			if (fds[i].revents == 0)
				continue;
			if (fds[i].revents & (POLLIN | POLLHUP))
				mask |= CURL_CSELECT_IN;
			if (fds[i].revents & POLLOUT)
				mask |= CURL_CSELECT_OUT;
			if (fds[i].revents & (POLLERR | POLLNVAL))
				mask |= CURL_CSELECT_ERR;
			socket_action(c, fds[i].fd, mask);
		}
	}
	if (c->timer_set && c->timer_at <= GetCurrentTimestamp())
	{
		c->timer_set = false;
		socket_action(c, CURL_SOCKET_TIMEOUT, 0);
	}
	collect_finished(c);
	/* what became final just now may free a slot for the queue */
	start_ready(c, GetCurrentTimestamp(), false);
}

void
fs_sm_pump(FsSmClient *c)
{
	MemoryContext caller = CurrentMemoryContext;

	if (c->cleaned)
		elog(ERROR, "SageMaker client used after it was destroyed");
	MemoryContextSwitchTo(c->scratch);
	PG_TRY();
	{
		pump(c);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(caller);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	MemoryContextReset(c->scratch);
}
