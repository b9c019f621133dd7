/*-------------------------------------------------------------------------
 *
 * sagemaker_client.h
 *		The SageMaker request engine: many signed JSON 1.1 calls in flight
 *		at once on libcurl's multi interface, paced, retried, and waited
 *		for on the process latch.
 *
 * The dispatcher queues calls with fs_sm_submit() and collects them with
 * fs_sm_wait(), which returns as soon as one call is final, the timeout
 * passes, or the process latch is set -- so a commit that wakes the
 * dispatcher is seen within milliseconds even while calls are in flight.
 * fairshare.sagemaker_call() runs one call through the same engine.
 *
 * What the engine does with every call (sagemaker_client.c says how, and
 * which of its files does what):
 *	 - signs it when it actually starts (and again before every retry),
 *	   with fs_aws_get_credentials() and fs_sigv4_sign(), service
 *	   "sagemaker": POST to the endpoint URL, X-Amz-Target:
 *	   SageMaker.<Operation>, Content-Type: application/x-amz-json-1.1;
 *	 - runs at most fairshare.max_concurrent_requests at once and starts at
 *	   most fairshare.api_rate_limit tries per second (a token bucket holding
 *	   at most max(1, rate / 20) tokens, i.e. 50 ms worth), both read afresh
 *	   on every turn so a reload applies at once;
 *	 - retries throttling, HTTP 5xx, timeouts and connection failures with
 *	   jittered exponential backoff, up to FsSmOptions.max_tries tries in
 *	   all; drops cached credentials and retries once, at once, when AWS
 *	   answers ExpiredToken*, InvalidSignature* or UnrecognizedClient;
 *	 - unless FsSmOptions.resend_unanswered_creates (true by default), never
 *	   sends a CreateTrainingJob again after a try that was sent and got no
 *	   answer (dropped connection, timeout -- curl's own resend included):
 *	   SageMaker may have acted on it, and the caller had better look the
 *	   name up with DescribeTrainingJob than collect a ResourceInUse.  The
 *	   call is then final at once, FS_SM_RETRYABLE_EXHAUSTED with
 *	   ambiguous_tries > 0, however many tries were left;
 *	 - reports each call exactly once, when it is final, as an FsSmResult.
 * Connections are kept alive and reused between calls (HTTP/1.1, curl's
 * connection cache of the multi handle); TLS is always verified; plain
 * http is refused unless the host is a loopback literal; proxies only as
 * the standard environment variables say (https_proxy, no_proxy, ...),
 * never for loopback.
 *
 * Lifetimes.  A client lives in its own memory context, a child of the
 * context current at fs_sm_client_create(): deleting or resetting that
 * context destroys the client and every curl handle it holds, and so does
 * process exit.  Create the dispatcher's client in a long-lived context;
 * one created in a transaction's context dies with it, even on ERROR.
 * Results are palloc'd in the CurrentMemoryContext of the fs_sm_wait()
 * call that returns them and belong to the caller.
 *
 * Errors.  Per-call failures (SageMaker errors, network failures, a refused
 * endpoint) are results, never ERRORs.  fs_sm_wait() raises ERROR only on a
 * query cancel or shutdown (CHECK_FOR_INTERRUPTS), when the credential
 * chain fails (no credentials; an expired container/IMDS credential that
 * cannot be refreshed), when out of memory, or when curl itself fails.
 * The client stays consistent across such an ERROR: calls not started stay
 * queued, calls in flight go on, and the next fs_sm_wait() continues; call
 * fs_sm_cancel_all() to drop them instead.
 *
 * Nothing here may ever put a secret (secret key, session token, the
 * Authorization header) into a result, a message or a log line; header
 * buffers are wiped before they are freed.  Request and response bodies are
 * never logged either: they are the caller's data.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SAGEMAKER_CLIENT_H
#define FAIRSHARE_SAGEMAKER_CLIENT_H

#include "datatype/timestamp.h"
#include "utils/jsonb.h"

typedef enum FsSmOperation
{
	FS_SM_CREATE_TRAINING_JOB,
	FS_SM_DESCRIBE_TRAINING_JOB,
	FS_SM_STOP_TRAINING_JOB,
	FS_SM_LIST_TRAINING_JOBS,
	FS_SM_LIST_TAGS
} FsSmOperation;

#define FS_SM_NUM_OPERATIONS 5

/*
 * How a call ended.  Everything but FS_SM_OK is final: the engine has
 * already retried what it retries.
 */
typedef enum FsSmErrorClass
{
	FS_SM_OK,					/* 2xx with a JSON (or empty) body */
	FS_SM_RETRYABLE_EXHAUSTED,	/* throttled, 5xx, timed out or connection
								 * failed on every one of max_tries tries
								 * (or on one unanswered create, see
								 * resend_unanswered_creates); or a create
								 * try its gate held back, "Fenced"
								 * (create_gate.h) */
	FS_SM_VALIDATION,			/* ValidationException (not the not-found
								 * kind), SerializationException, ... */
	FS_SM_RESOURCE_IN_USE,		/* ResourceInUse: the name exists already */
	FS_SM_RESOURCE_NOT_FOUND,	/* ResourceNotFound, or SageMaker's real
								 * answer: ValidationException "Requested
								 * resource not found" */
	FS_SM_RESOURCE_LIMIT_EXCEEDED,	/* ResourceLimitExceeded */
	FS_SM_AUTH,					/* credentials refused: bad signature, unknown
								 * key, expired or invalid token, 401 */
	FS_SM_ACCESS_DENIED,		/* AccessDenied*, 403 otherwise: signed fine
								 * but not allowed */
	FS_SM_OTHER_CLIENT_ERROR,	/* any other 4xx (or unexpected status) */
	FS_SM_ENDPOINT,				/* not sent: endpoint URL or region refused
								 * (http to a non-loopback host, no region,
								 * a URL the signer cannot sign) */
	FS_SM_TRANSPORT				/* a transport failure retrying cannot fix:
								 * TLS verification failed, response too
								 * large, unusable URL scheme */
} FsSmErrorClass;

#define FS_SM_NUM_ERROR_CLASSES 11

/*
 * Per-client knobs; fs_sm_default_options() fills in the defaults below.
 * Concurrency and pacing are not here: they are the settings
 * fairshare.max_concurrent_requests and fairshare.api_rate_limit.
 */
typedef struct FsSmOptions
{
	long		connect_timeout_ms; /* TCP + TLS handshake, per try */
	long		timeout_ms;		/* a whole try, connect included */
	int			max_tries;		/* tries per call, 1..10 */
	int			backoff_base_ms;	/* first retry delay ceiling (5xx, network) */
	int			throttle_backoff_base_ms;	/* same, after throttling */
	int			backoff_cap_ms; /* no retry delay ceiling above this */
	bool		resend_unanswered_creates;	/* see "Retries" above */
} FsSmOptions;

#define FS_SM_DEFAULT_CONNECT_TIMEOUT_MS	10000
#define FS_SM_DEFAULT_TIMEOUT_MS			30000
#define FS_SM_DEFAULT_MAX_TRIES				5
#define FS_SM_DEFAULT_BACKOFF_BASE_MS		100
#define FS_SM_DEFAULT_THROTTLE_BACKOFF_BASE_MS 500
#define FS_SM_DEFAULT_BACKOFF_CAP_MS		20000
#define FS_SM_MAX_TRIES_LIMIT				10

/* Responses larger than this are refused (FS_SM_TRANSPORT). */
#define FS_SM_MAX_RESPONSE_BYTES			(8 * 1024 * 1024)

/*
 * One final call.  Everything it points to is palloc'd in the memory
 * context that was current in the fs_sm_wait() call that returned it.
 */
typedef struct FsSmResult
{
	uint64		tag;			/* the caller's, from fs_sm_submit */
	FsSmOperation operation;
	FsSmErrorClass error_class;
	long		http_status;	/* of the last try; 0 if it got no answer */
	char	   *error_type;		/* NULL on success; the __type (or
								 * x-amzn-ErrorType) without its namespace
								 * ("...#") and suffix (":..."), e.g.
								 * "ValidationException"; for failures
								 * without an answer: "Timeout",
								 * "ConnectionFailed", "ConnectionDropped",
								 * "TLSError", "TLSVerificationFailed",
								 * "ResponseTooLarge", "InvalidResponse",
								 * "EndpointRefused", ... */
	char	   *message;		/* NULL on success; the answer's "message" or
								 * "Message", or what went wrong locally */
	Jsonb	   *response;		/* the body as jsonb: the answer on success
								 * ({} when empty), the error document on an
								 * error with a JSON body, else NULL */
	char	   *request_id;		/* x-amzn-RequestId of the last answer, or NULL */
	int			tries;			/* requests sent (0 if never sent), curl's own
								 * resends on a dead reused connection included */
	int			ambiguous_tries;	/* tries that ended with a timeout, a
									 * dropped connection or a 5xx: SageMaker
									 * may have acted on them, so a
									 * ResourceInUse on a create that has
									 * some most likely means "ours" */
	int			new_connections;	/* TCP connections opened, over all tries
									 * (0 when every try reused one) */
	TimestampTz submitted_at;
	TimestampTz first_started_at;	/* 0 if never started */
	TimestampTz finished_at;
	double		elapsed_ms;		/* submitted_at to finished_at */
} FsSmResult;

typedef struct FsSmClient FsSmClient;

/* A new client with default options; see "Lifetimes" above. */
extern FsSmClient *fs_sm_client_create(void);

/* Cancel everything and free the client; same as deleting its context. */
extern void fs_sm_client_destroy(FsSmClient *client);

extern void fs_sm_default_options(FsSmOptions *options);

/* Replace the client's options (checked; ERROR on a bad value). */
extern void fs_sm_client_set_options(FsSmClient *client, const FsSmOptions *options);

/*
 * Queue one call.  endpoint_url and region may be NULL: they are then
 * resolved as fs_sm_resolve_endpoint(NULL, NULL, ...) does.  The request is
 * a JSON object (Jsonb) or its text; it is copied.  An endpoint or region
 * that is refused does not raise: the call is reported by the next
 * fs_sm_wait() with FS_SM_ENDPOINT and tries = 0.  The tag is the
 * caller's, returned in the result; the engine does not look at it.
 */
extern void fs_sm_submit(FsSmClient *client, FsSmOperation op,
						 const char *endpoint_url, const char *region,
						 Jsonb *request, uint64 tag);
extern void fs_sm_submit_text(FsSmClient *client, FsSmOperation op,
							  const char *endpoint_url, const char *region,
							  const char *json_body, uint64 tag);

/*
 * Drive the engine: start what concurrency and pacing allow, move
 * transfers along, retry, and wait for a call to become final.  Returns
 * the number of results stored in done[0..max_done-1] (further final calls
 * wait for the next call).  Returns with 0 when timeout_ms passed (0: do
 * not wait at all; -1: no timeout) or when the process latch is set (it is
 * not reset: the caller resets it and looks for new work, then calls
 * again).  Exits the process if the postmaster dies.  May raise ERROR as
 * described above ("Errors").
 */
extern int	fs_sm_wait(FsSmClient *client, long timeout_ms,
					   FsSmResult **done, int max_done);

/*
 * Move calls along without waiting, for a caller busy with something else
 * (the dispatcher, inside a scheduling pass): start what concurrency,
 * pacing and credentials already at hand allow, hand curl whatever its
 * sockets have ready, and keep calls that became final for the next
 * fs_sm_wait().  Touches no database state and never blocks: calls that
 * would need credentials fetched over the network stay queued.  Call it
 * every few milliseconds; between fs_sm_wait() calls only, never from
 * inside one.  May raise ERROR as fs_sm_wait() does, but not for
 * credentials.
 */
extern void fs_sm_pump(FsSmClient *client);

/* Calls submitted and not yet returned by fs_sm_wait. */
extern int	fs_sm_pending(FsSmClient *client);

/* Calls being sent or waited for right now (easy handles in the multi). */
extern int	fs_sm_in_flight(FsSmClient *client);

/* Calls final and waiting to be returned by the next fs_sm_wait. */
extern int	fs_sm_ready(FsSmClient *client);

/* Drop every call not yet returned, aborting transfers; no results. */
extern void fs_sm_cancel_all(FsSmClient *client);

/* Free a result (it can also just go with its memory context). */
extern void fs_sm_result_free(FsSmResult *result);

/* "CreateTrainingJob", ...; and back, exact spelling (false if unknown). */
extern const char *fs_sm_operation_name(FsSmOperation op);
extern bool fs_sm_operation_from_name(const char *name, FsSmOperation *op);

/* "OK", "RETRYABLE_EXHAUSTED", "VALIDATION", ... */
extern const char *fs_sm_error_class_name(FsSmErrorClass cls);

/*
 * Where to send SageMaker calls (docs/wire.md, 'Credentials, region and
 * endpoint'): the service
 * environment's endpoint_url, else fairshare.endpoint_url, else
 * AWS_ENDPOINT_URL_SAGEMAKER, else https://api.sagemaker.<region>.amazonaws.com;
 * the region: the environment's, else fs_aws_region().  NULL or "" means
 * "not set" for both arguments (the dispatcher passes the environment's
 * columns).  On success sets *url and *region (palloc'd) and *url_source
 * ("service environment", "fairshare.endpoint_url",
 * "AWS_ENDPOINT_URL_SAGEMAKER" or "regional default") and returns true.
 * Returns false with *why (palloc'd, no secret) when there is no region,
 * the region is not a valid region name (fs_aws_valid_region), or the
 * URL is refused (fs_sm_endpoint_url_problem).  Never raises for bad input.
 */
extern bool fs_sm_resolve_endpoint(const char *env_endpoint_url,
								   const char *env_region,
								   char **url, char **region,
								   const char **url_source, char **why);

/*
 * Why a SageMaker endpoint URL would be refused when a call is sent to it,
 * or NULL when it is fine: not an absolute http(s) URL, user information
 * (a password) in it, a fragment, a query string, a blank or control
 * character, or plain http to a host that is not a loopback literal.  The
 * service environments table checks its endpoint_url with this too, so it
 * never holds a URL the sender would refuse.
 */
extern const char *fs_sm_endpoint_url_problem(const char *url);

/*
 * The same, for a URL an admin names (a service environment's endpoint_url),
 * which must also be one of AWS's SageMaker API endpoints (https,
 * api.sagemaker.<region>, api-fips.sagemaker.<region> or a VPC endpoint's
 * <id>.api.sagemaker.<region>.vpce, under amazonaws.com or
 * amazonaws.com.cn) or have the origin of a URL a superuser chose: an entry
 * of fairshare.endpoint_allowlist, fairshare.endpoint_url or
 * AWS_ENDPOINT_URL_SAGEMAKER.  Every call is signed with the server's
 * credentials (the access key id and session token travel in its headers),
 * and its body is a submitter's request: neither goes where no superuser
 * said it may.  The service environments table checks its endpoint_url
 * with this when a row is written.  Returns a palloc'd or constant reason,
 * or NULL.
 */
extern const char *fs_sm_admin_endpoint_url_problem(const char *url);

/* url with its user information (which may hold a password) as "***". */
extern char *fs_sm_redact_url(const char *url);

/*
 * For tests and monitoring: curl easy and multi handles alive in this
 * process, and live clients.  All three are 0 once every client is gone.
 */
extern void fs_sm_handle_counts(int *clients, int *multi_handles, int *easy_handles);

#endif							/* FAIRSHARE_SAGEMAKER_CLIENT_H */
