/*-------------------------------------------------------------------------
 *
 * api.h
 *		The AWS Batch API server: a background worker ("fairshare api") that
 *		serves AWS Batch's rest-json protocol over libmicrohttpd, so that
 *		boto3 and the SageMaker SDK work against fairshare (docs/api.md).
 *
 * Files:
 *	 api_worker.c	the workers: settings, listening sockets, the latch loop
 *	 api_shared.c	what the workers share: connection count, rate buckets
 *	 api_http.c		one HTTP request: limits, routing, the AWS error shape
 *	 api_auth.c		SigV4 verification of a request against fairshare.api_keys
 *	 api_call.c		one operation: a short transaction as the key's role
 *
 * Nothing here runs on a thread of its own: libmicrohttpd runs in
 * "external" mode, its epoll descriptor sits in the worker's WaitEventSet,
 * and every callback (so every PostgreSQL call) happens inside MHD_run()
 * on the worker's one thread.  Several such worker processes
 * (fairshare.api_workers) listen on the same port, each with its own
 * socket (SO_REUSEPORT), and the kernel spreads connections over them.  No PostgreSQL error may unwind through
 * libmicrohttpd: api_call.c contains every one of them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_API_H
#define FAIRSHARE_API_H

#include <stdbool.h>
#include <stddef.h>

/* Register the workers; from _PG_init while preloading. */
extern void fairshare_register_api_server(void);

/* Most API worker processes (fairshare.api_workers). */
#define FS_API_MAX_WORKERS 32

/* fairshare.api_workers resolved: 0 means two per CPU core, at most 4. */
extern int	fairshare_api_worker_count(void);

/* NULL when a fairshare.api_listen_addresses value is usable, else why not. */
extern const char *fairshare_api_listen_addresses_problem(const char *value);

/* The outcome of one API request, whatever happened. */
typedef struct FsApiResponse
{
	int			http_status;
	const char *error_type;		/* NULL on success, else __type / x-amzn-ErrorType */
	char	   *body;			/* JSON, malloc'd, UTF-8 */
	size_t		body_len;
} FsApiResponse;

/* A request as the HTTP layer hands it to authentication and the operation. */
typedef struct FsApiRequest
{
	const char *method;
	const char *raw_path;		/* as sent, still percent-encoded */
	const char *raw_query;		/* as sent, "" when none */
	const char *host;			/* Host header ("" when missing) */
	const char *scheme;			/* "http" or "https" */
	const char *body;
	size_t		body_len;
	/* headers, in order; names as sent */
	int			nheaders;
	const char **header_names;
	const char **header_values;
	/* the operation, found by routing */
	const char *operation;		/* e.g. SubmitServiceJob */
	const char *function;		/* e.g. _api_submit_service_job */
	const char *path_param_name;	/* e.g. resourceArn, or NULL */
	char	   *path_param;		/* decoded, or NULL */
	const char *list_query_name;	/* e.g. tagKeys, or NULL */
	int			nlist_values;
	char	  **list_values;	/* decoded, at most FS_API_MAX_LIST_VALUES */
	bool		list_overflow;	/* it was given more often than that */
	bool		encoded_nul;	/* the path parameter or a list value held %00 */
	char		request_id[37];
} FsApiRequest;

/*
 * The most values of a repeated query parameter (tagKeys) a request keeps;
 * a request that gives more is refused, never cut short.
 */
#define FS_API_MAX_LIST_VALUES 64

/* Run an authenticated operation; fills *resp.  Never throws. */
extern void fairshare_api_execute(FsApiRequest *req, FsApiResponse *resp);

/* Fill *resp with an AWS error (message is copied). */
extern void fairshare_api_error(FsApiResponse *resp, int http_status,
								const char *error_type, const char *message);

/*
 * SigV4 verification (api_auth.c).  Parses the Authorization header and
 * returns the access key id it names in *access_key_id (malloc'd), or an
 * error.  Then fairshare_api_verify_signature() recomputes the signature
 * with the secret and compares in constant time.
 */
typedef enum FsApiAuthStatus
{
	FS_API_AUTH_OK = 0,
	FS_API_AUTH_MISSING,		/* no or unparseable Authorization */
	FS_API_AUTH_TOKEN,			/* x-amz-security-token given */
	FS_API_AUTH_BAD_SCOPE,		/* region, service or date of the scope */
	FS_API_AUTH_STALE,			/* X-Amz-Date missing, malformed or > 15 min off */
	FS_API_AUTH_BAD_SIGNATURE
} FsApiAuthStatus;

typedef struct FsApiAuth
{
	char		access_key_id[129];
	char		signed_headers[1024];
	char		signature[65];
	char		scope_date[9];
	char		scope_region[64];
	char		scope_service[32];
	char		amz_date[17];
} FsApiAuth;

extern FsApiAuthStatus fairshare_api_parse_auth(const FsApiRequest *req, FsApiAuth *auth,
												const char *region, long now_epoch,
												char *why, size_t why_len);
extern FsApiAuthStatus fairshare_api_verify_signature(const FsApiRequest *req, const FsApiAuth *auth,
													  const char *region, const char *secret,
													  char *why, size_t why_len);

/* A request header's first value (case-insensitive name), or NULL. */
extern const char *fairshare_api_header(const FsApiRequest *req, const char *name);

/* How far X-Amz-Date may be from our clock. */
#define FS_API_MAX_CLOCK_SKEW_S (15 * 60)

#endif							/* FAIRSHARE_API_H */
