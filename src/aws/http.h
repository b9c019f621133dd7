/*-------------------------------------------------------------------------
 *
 * http.h
 *		One HTTP request from a backend or the worker, interruptibly.
 *
 * For the few requests a backend makes on its own and waits for: the
 * credential endpoints (container, EC2 instance metadata) and a single
 * SageMaker call.  The dispatcher's many concurrent calls use curl multi
 * directly.  Never put a secret in an error message or a log line: callers
 * pass secrets only in headers and bodies, which this code never prints.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_HTTP_H
#define FAIRSHARE_HTTP_H

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

#endif							/* FAIRSHARE_HTTP_H */
