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
 *	   callback refuses curl's resend (sagemaker_request.c): no name is
 *	   sent twice.
 * curl itself resends a request once when a reused keep-alive connection
 * turns out to have been closed before any byte of the answer came -- which
 * is also what an answer lost after SageMaker acted looks like.  The body
 * goes to curl through a read callback, so such a resend has to rewind it
 * through our seek callback: we count it as one more try, and as an
 * ambiguous one (the first send may have been acted on).
 *
 * The engine is four files sharing sagemaker_internal.h:
 *	 sagemaker_client.c	  this one: the client, its request lists, submitting,
 *						  the retry decision and backoff, pacing, results
 *	 sagemaker_request.c  one try: signing, the header list, the curl easy
 *						  handle and its callbacks
 *	 sagemaker_response.c what a finished try means: the body parsed, the
 *						  error type read, the answer mapped to a class
 *	 sagemaker_wait.c	  the crank: curl's socket and timer callbacks, the
 *						  wait on the latch and sockets, fs_sm_wait, fs_sm_pump
 * Every retry decision is taken here (try_finished, start_ready): the other
 * files say what happened, this one says what happens next.
 *
 * None of these files may write a secret anywhere: the Authorization and
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

#include "common/pg_prng.h"
#include "lib/ilist.h"
#include "storage/ipc.h"

#include "aws/credentials.h"
#include "aws/curl_prelude.h"
#include "aws/http.h"
#include "aws/sagemaker_client.h"
#include "aws/sagemaker_internal.h"
#include "settings.h"

static dlist_head live_clients = DLIST_STATIC_INIT(live_clients);
static bool exit_hook_registered = false;
static int	n_live_clients = 0;
static int	n_live_multi = 0;
int			n_live_easy = 0;	/* sagemaker_request.c counts its handles */

static void client_cleanup(FsSmClient *c);

/* -------------------------------------------------------------- counts */

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
void
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
void
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
void
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

/* ------------------------------------------------------------- retries */

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
void
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

/* ------------------------------------------------- pacing and starting */

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
void
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
int
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
