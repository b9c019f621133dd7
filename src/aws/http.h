/*-------------------------------------------------------------------------
 *
 * http.h
 *		One HTTP request from a backend or the worker, interruptibly.
 *
 * For the few requests a backend makes on its own and waits for: the
 * credential endpoints (container, EC2 instance metadata).  SageMaker calls,
 * one or many, go through the request engine of sagemaker_client.h, which
 * shares the receive buffer and the URL checks below.  Never put a secret
 * in an error message or a log line: callers pass secrets only in headers
 * and bodies, which this code never prints.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_HTTP_H
#define FAIRSHARE_HTTP_H

#ifndef FAIRSHARE_VERSION
#error "FAIRSHARE_VERSION must be defined (the Makefile passes -DFAIRSHARE_VERSION)"
#endif

/*
 * The User-Agent of every request fairshare sends (credential endpoints and
 * SageMaker alike): the version is the Makefile's, read from
 * fairshare.control's default_version, so it cannot drift from the
 * extension's.
 */
#define FS_HTTP_USER_AGENT	"fairshare/" FAIRSHARE_VERSION

typedef struct FsHttpRequest
{
	const char *method;			/* "GET", "PUT", "POST" */
	const char *url;
	const char *const *headers; /* "Name: value" lines; may hold secrets */
	int			nheaders;
	const char *body;			/* may be NULL */
	size_t		body_len;
	long		connect_timeout_ms;
	long		timeout_ms;		/* the whole request */
	size_t		max_response_bytes;
	bool		no_proxy;		/* never go through a proxy */
} FsHttpRequest;

typedef struct FsHttpResponse
{
	long		status;			/* HTTP status, 0 when there was no response */
	char	   *body;			/* palloc'd, NUL-terminated */
	size_t		body_len;
	char		error[512];		/* why fs_http_perform returned false */
} FsHttpResponse;

/*
 * A response body being received: curl's write callback appends to it with
 * malloc (it must not ereport inside curl) and stops the transfer (curl then
 * fails with CURLE_WRITE_ERROR) past max bytes or when memory runs out.
 * data is NUL-terminated once anything arrived.  Start from all zeroes with
 * max set; fs_http_buffer_reset wipes and frees the data and clears the
 * flags, keeping max.
 */
typedef struct FsHttpBuffer
{
	char	   *data;
	size_t		len;
	size_t		cap;
	size_t		max;
	bool		too_large;
	bool		no_memory;
} FsHttpBuffer;

extern size_t fs_http_buffer_write(char *ptr, size_t size, size_t nmemb,
								   void *userdata);
extern void fs_http_buffer_reset(FsHttpBuffer *buf);

/* curl_global_init once per process; ERROR if it fails. */
extern void fs_curl_global_init(void);

/*
 * Perform req, waiting in short slices with CHECK_FOR_INTERRUPTS.  Returns
 * true when a response arrived (any status), false on a transport failure
 * (refused, timed out, response too large...) with resp->error set.  Raises
 * ERROR when curl itself misbehaves; curl handles are released either way.
 * The caller should wipe resp->body when it may hold a secret.
 */
extern bool fs_http_perform(const FsHttpRequest *req, FsHttpResponse *resp);

/*
 * Check an endpoint URL before sending credentials-related requests to it.
 * Returns false with *why set unless url is an absolute http:// or https://
 * URL without user information.  Otherwise sets *is_https, and
 * *host_is_local when the host is a loopback (localhost, 127.0.0.0/8, ::1)
 * or link-local (169.254.0.0/16, fe80::/10, AWS's fd00:ec2::/32) literal:
 * the only hosts plain http may be used with.
 */
extern bool fs_http_url_check(const char *url, bool *is_https,
							  bool *host_is_local, const char **why);

/*
 * The same checks, but *http_allowed is set only for loopback literals and
 * the ECS and EKS container credential endpoints (169.254.170.2,
 * 169.254.170.23, fd00:ec2::23), as the AWS SDKs allow for
 * AWS_CONTAINER_CREDENTIALS_FULL_URI.
 */
extern bool fs_http_url_check_container(const char *url, bool *is_https,
										bool *http_allowed, const char **why);

/*
 * The same checks, but *is_loopback is set only for localhost, 127.0.0.0/8
 * and ::1 literals: the rule for SageMaker endpoints, which plain http may
 * reach only on this machine (an emulator), never on a link-local address.
 */
extern bool fs_http_url_check_loopback(const char *url, bool *is_https,
									   bool *is_loopback, const char **why);

/*
 * The origin of a URL, "scheme://host:port" (the port always written,
 * the default one too; the host lower-case), palloc'd; NULL when the URL
 * is not one the checks above accept.  *host, when not NULL, gets the host
 * alone.  What an allow-list of endpoints compares.
 */
extern char *fs_http_url_origin(const char *url, char **host);

#endif							/* FAIRSHARE_HTTP_H */
