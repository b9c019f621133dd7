/*-------------------------------------------------------------------------
 *
 * sagemaker_internal.h
 *		What the files of the SageMaker engine share: a call's record and
 *		states, the client's struct, and the functions each file offers
 *		the others.  Only the four files below include it; everyone
 *		else uses sagemaker_client.h.
 *
 *	 sagemaker_client.c	  the client, its request lists, submitting, retries,
 *						  pacing, results
 *	 sagemaker_request.c  one try: signing, headers, the curl easy handle
 *	 sagemaker_response.c what a finished try means: parsing, error mapping
 *	 sagemaker_wait.c	  the crank: curl's callbacks, the latch, fs_sm_wait
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SAGEMAKER_INTERNAL_H
#define FAIRSHARE_SAGEMAKER_INTERNAL_H

#include "lib/ilist.h"

#include "aws/credentials.h"
#include "aws/curl_prelude.h"
#include "aws/http.h"
#include "aws/sagemaker_client.h"

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

/*
 * The functions below keep the short names they had when the engine was
 * one file.  PostgreSQL 15 builds modules without -fvisibility=hidden, so
 * they are hidden here by hand: they stay out of the library's exported
 * symbols, where such names could clash with another library's.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* sagemaker_client.c: the request lists and the engine's decisions */
extern int	n_live_easy;
extern void move_to(FsSmClient *c, SmRequest *r, RequestState st, bool at_head);
extern void release_try(FsSmClient *c, SmRequest *r);
extern void finish(FsSmClient *c, SmRequest *r, FsSmErrorClass cls, const char *type,
				   const char *message);
extern void collect_finished(FsSmClient *c);
extern void start_ready(FsSmClient *c, TimestampTz now, bool may_fetch);
extern int	hand_out(FsSmClient *c, MemoryContext cxt, FsSmResult **done, int max);

/* sagemaker_request.c: one try */
extern void start_try(FsSmClient *c, SmRequest *r, const FsAwsCredentials *cred);

/* sagemaker_response.c: what a finished try means */
extern bool request_was_sent(SmRequest *r);
extern NextStep classify_transport(FsSmClient *c, SmRequest *r, CURLcode rc,
								   FsSmErrorClass *cls, const char **type);
extern NextStep classify_answer(FsSmClient *c, SmRequest *r, FsSmErrorClass *cls);

/* sagemaker_wait.c: curl's multi callbacks */
extern int	socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp);
extern int	timer_cb(CURLM *multi, long timeout_ms, void *userp);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* FAIRSHARE_SAGEMAKER_INTERNAL_H */
