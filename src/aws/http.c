/*-------------------------------------------------------------------------
 *
 * http.c
 *		One HTTP request at a time through libcurl, interruptibly.
 *
 * A backend (or the worker) that must wait for a single response — the
 * container or instance-metadata credential endpoints, one SageMaker call —
 * uses fs_http_perform().  It drives a curl multi handle in slices of at
 * most 100 ms with CHECK_FOR_INTERRUPTS() between them, so a query cancel or
 * a shutdown is never held up by the network, and it releases every curl
 * handle in PG_FINALLY whatever is raised.  Redirects are never followed;
 * TLS verification is always on.
 *
 * It must never log or report a header or a body: they may carry secrets
 * (an authorization token, credentials in a response).  Buffers that held
 * them are wiped before they are freed.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <arpa/inet.h>

#include "aws/curl_prelude.h"
#include "aws/http.h"

#define FS_HTTP_SLICE_MS	100

static bool curl_initialized = false;

void
fs_curl_global_init(void)
{
	CURLcode	rc;

	if (curl_initialized)
		return;
	rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
				 errmsg("curl_global_init() failed: %s", curl_easy_strerror(rc))));
	curl_initialized = true;
}

/*
 * curl's write callback (CURLOPT_WRITEFUNCTION with an FsHttpBuffer as
 * CURLOPT_WRITEDATA).  It must not ereport (we are inside curl), so it
 * uses malloc and tells curl to stop (by returning less than it was given)
 * when the response is too large or memory runs out.
 */
size_t
fs_http_buffer_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	FsHttpBuffer *b = (FsHttpBuffer *) userdata;
	size_t		n = size * nmemb;

	if (n > b->max - b->len)
	{
		b->too_large = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 1024;
		char	   *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = malloc(cap);
		if (p == NULL)
		{
			b->no_memory = true;
			return 0;
		}
		if (b->data)
		{
			memcpy(p, b->data, b->len);
			explicit_bzero(b->data, b->cap);
			free(b->data);
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

void
fs_http_buffer_reset(FsHttpBuffer *b)
{
	if (b->data)
	{
		explicit_bzero(b->data, b->cap);
		free(b->data);
	}
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->too_large = false;
	b->no_memory = false;
}

bool
fs_http_perform(const FsHttpRequest *req, FsHttpResponse *resp)
{
	CURL	   *volatile easy = NULL;
	CURLM	   *volatile multi = NULL;
	struct curl_slist *volatile hdrs = NULL;
	FsHttpBuffer *volatile rb = NULL;
	char	   *volatile errbuf = NULL;
	volatile bool added = false;
	volatile bool ok = false;

	fs_curl_global_init();
	memset(resp, 0, sizeof(*resp));

	rb = calloc(1, sizeof(FsHttpBuffer));
	errbuf = calloc(1, CURL_ERROR_SIZE);
	if (rb == NULL || errbuf == NULL)
	{
		free(rb);
		free(errbuf);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	}
	rb->max = req->max_response_bytes;

	PG_TRY();
	{
		CURLMsg    *msg;
		int			left;
		CURLcode	result;
		int			i;

		easy = curl_easy_init();
		if (easy == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("curl_easy_init() failed")));
		multi = curl_multi_init();
		if (multi == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("curl_multi_init() failed")));
		for (i = 0; i < req->nheaders; i++)
		{
			struct curl_slist *n = curl_slist_append(hdrs, req->headers[i]);

			if (n == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_OUT_OF_MEMORY),
						 errmsg("curl_slist_append() failed: out of memory")));
			hdrs = n;
		}

		FS_CURL_SETOPT(easy, CURLOPT_URL, req->url);
		FS_CURL_SETOPT(easy, CURLOPT_NOSIGNAL, 1L);
		FS_CURL_SETOPT(easy, CURLOPT_PROTOCOLS_STR, "http,https");
		FS_CURL_SETOPT(easy, CURLOPT_FOLLOWLOCATION, 0L);
		FS_CURL_SETOPT(easy, CURLOPT_SSL_VERIFYPEER, 1L);
		FS_CURL_SETOPT(easy, CURLOPT_SSL_VERIFYHOST, 2L);
		FS_CURL_SETOPT(easy, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
		FS_CURL_SETOPT(easy, CURLOPT_TIMEOUT_MS, req->timeout_ms);
		FS_CURL_SETOPT(easy, CURLOPT_ERRORBUFFER, (char *) errbuf);
		FS_CURL_SETOPT(easy, CURLOPT_USERAGENT, FS_HTTP_USER_AGENT);
		FS_CURL_SETOPT(easy, CURLOPT_WRITEFUNCTION, fs_http_buffer_write);
		FS_CURL_SETOPT(easy, CURLOPT_WRITEDATA, (void *) rb);
		if (hdrs)
			FS_CURL_SETOPT(easy, CURLOPT_HTTPHEADER, (struct curl_slist *) hdrs);
		if (req->no_proxy)
			FS_CURL_SETOPT(easy, CURLOPT_NOPROXY, "*");
		if (strcmp(req->method, "GET") == 0)
			FS_CURL_SETOPT(easy, CURLOPT_HTTPGET, 1L);
		else
		{
			FS_CURL_SETOPT(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_len);
			FS_CURL_SETOPT(easy, CURLOPT_POSTFIELDS, req->body ? req->body : "");
			if (strcmp(req->method, "POST") != 0)
				FS_CURL_SETOPT(easy, CURLOPT_CUSTOMREQUEST, req->method);
		}

		FS_CURLM_CHECK(curl_multi_add_handle, (multi, easy));
		added = true;
		for (;;)
		{
			int			running = 0;

			CHECK_FOR_INTERRUPTS();
			FS_CURLM_CHECK(curl_multi_perform, (multi, &running));
			if (running == 0)
				break;
			FS_CURLM_CHECK(curl_multi_poll, (multi, NULL, 0, FS_HTTP_SLICE_MS, NULL));
		}

		msg = curl_multi_info_read(multi, &left);
		result = (msg && msg->msg == CURLMSG_DONE) ? msg->data.result : CURLE_FAILED_INIT;
		if (result == CURLE_OK)
		{
			long		status = 0;

			FS_CURL_CHECK(curl_easy_getinfo, (easy, CURLINFO_RESPONSE_CODE, &status));
			resp->status = status;
			resp->body_len = rb->len;
			resp->body = palloc(rb->len + 1);
			if (rb->len > 0)
				memcpy(resp->body, rb->data, rb->len);
			resp->body[rb->len] = '\0';
			ok = true;
		}
		else if (rb->too_large)
			snprintf(resp->error, sizeof(resp->error),
					 "response larger than %zu bytes", req->max_response_bytes);
		else if (rb->no_memory)
			snprintf(resp->error, sizeof(resp->error), "out of memory reading the response");
		else
			snprintf(resp->error, sizeof(resp->error), "%s",
					 errbuf[0] ? errbuf : curl_easy_strerror(result));
	}
	PG_FINALLY();
	{
		struct curl_slist *s;

		if (added)
			curl_multi_remove_handle(multi, easy);
		if (easy)
			curl_easy_cleanup(easy);
		if (multi)
			curl_multi_cleanup(multi);
		for (s = hdrs; s != NULL; s = s->next)
			explicit_bzero(s->data, strlen(s->data));
		curl_slist_free_all(hdrs);
		fs_http_buffer_reset(rb);
		free(rb);
		free(errbuf);
	}
	PG_END_TRY();

	return ok;
}

/*
 * How far a host, as curl gives it (IPv6 in brackets), is trusted for plain
 * http, least first.  Only literals count: a name that resolves to a
 * loopback address is not trusted.
 */
typedef enum HostKind
{
	HOST_REMOTE,
	HOST_LINK_LOCAL,			/* 169.254.0.0/16, fe80::/10, fd00:ec2::/32 */
	HOST_CONTAINER,				/* ECS and EKS credential endpoints, also link-local */
	HOST_LOOPBACK				/* localhost, 127.0.0.0/8, ::1 */
} HostKind;

static HostKind
classify_host(const char *host)
{
	unsigned char a[16];
	char		buf[64];
	size_t		len = strlen(host);

	if (pg_strcasecmp(host, "localhost") == 0)
		return HOST_LOOPBACK;
	if (inet_pton(AF_INET, host, a) == 1)
	{
		if (a[0] == 127)
			return HOST_LOOPBACK;
		if (a[0] == 169 && a[1] == 254 && a[2] == 170 && (a[3] == 2 || a[3] == 23))
			return HOST_CONTAINER;
		return (a[0] == 169 && a[1] == 254) ? HOST_LINK_LOCAL : HOST_REMOTE;
	}
	if (len >= 2 && host[0] == '[' && host[len - 1] == ']' && len - 2 < sizeof(buf))
	{
		memcpy(buf, host + 1, len - 2);
		buf[len - 2] = '\0';
		host = buf;
	}
	if (inet_pton(AF_INET6, host, a) == 1)
	{
		static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
		static const unsigned char eks6[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x23};

		if (memcmp(a, loop6, 16) == 0)
			return HOST_LOOPBACK;
		if (memcmp(a, eks6, 16) == 0)
			return HOST_CONTAINER;
		if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
			return HOST_LINK_LOCAL; /* fe80::/10 */
		if (a[0] == 0xfd && a[1] == 0x00 && a[2] == 0x0e && a[3] == 0xc2)
			return HOST_LINK_LOCAL; /* fd00:ec2::/32, AWS metadata */
	}
	return HOST_REMOTE;
}

/* The checks of the fs_http_url_check functions, and the kind of host. */
static bool
url_check(const char *url, bool *is_https, HostKind *kind, const char **why)
{
	CURLU	   *u = curl_url();
	char	   *scheme = NULL;
	char	   *host = NULL;
	char	   *user = NULL;
	bool		ok = false;

	*why = NULL;
	if (u == NULL)
	{
		*why = "out of memory";
		return false;
	}
	for (const unsigned char *p = (const unsigned char *) url; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
		{
			curl_url_cleanup(u);
			*why = "it contains a blank or a control character";
			return false;
		}
	if (strchr(url, '#') != NULL)
		*why = "it must not contain a #fragment";
	else if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
		curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
		curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		*why = "it is not a valid absolute URL";
	else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
		*why = "only http:// and https:// URLs are supported";
	else if (curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER)
		*why = "it must not contain user information";
	else
	{
		*is_https = strcmp(scheme, "https") == 0;
		*kind = classify_host(host);
		ok = true;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_url_cleanup(u);
	return ok;
}

char *
fs_http_url_origin(const char *url, char **host_out)
{
	bool		is_https;
	HostKind	kind;
	const char *why;
	CURLU	   *u;
	char	   *scheme = NULL;
	char	   *host = NULL;
	char	   *port = NULL;
	char	   *origin = NULL;

	if (host_out != NULL)
		*host_out = NULL;
	if (!url_check(url, &is_https, &kind, &why) || (u = curl_url()) == NULL)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
		curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
	{
		char	   *lower = pstrdup(host);

		for (char *p = lower; *p; p++)
			*p = pg_ascii_tolower((unsigned char) *p);
		origin = psprintf("%s://%s:%s", scheme, lower, port);
		if (host_out != NULL)
			*host_out = lower;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return origin;
}

/* The kinds are in order of trust: plain http is allowed from `least' up. */
static bool
url_check_trusting(const char *url, bool *is_https, bool *http_allowed, const char **why,
				   HostKind least)
{
	HostKind	kind;

	if (!url_check(url, is_https, &kind, why))
		return false;
	*http_allowed = kind >= least;
	return true;
}

bool
fs_http_url_check(const char *url, bool *is_https, bool *local, const char **why)
{
	return url_check_trusting(url, is_https, local, why, HOST_LINK_LOCAL);
}

bool
fs_http_url_check_container(const char *url, bool *is_https, bool *allowed, const char **why)
{
	return url_check_trusting(url, is_https, allowed, why, HOST_CONTAINER);
}

bool
fs_http_url_check_loopback(const char *url, bool *is_https, bool *loopback,
						   const char **why)
{
	return url_check_trusting(url, is_https, loopback, why, HOST_LOOPBACK);
}
