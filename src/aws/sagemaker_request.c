/*-------------------------------------------------------------------------
 *
 * sagemaker_request.c
 *		One try of a SageMaker call: the request signed with SigV4 just
 *		before it starts, its header list, its curl easy handle and the
 *		callbacks curl calls while it runs.
 *
 * What goes on the wire is decided here and only here: POST to the
 * endpoint URL, X-Amz-Target: SageMaker.<Operation>, Content-Type:
 * application/x-amz-json-1.1, the Host, X-Amz-Date, Authorization (and
 * X-Amz-Security-Token) the signer produced, no "Expect: 100-continue",
 * TLS always verified, redirects never followed.  The engine
 * (sagemaker_client.c) decides when a try starts and what its end means;
 * this file only builds it.
 *
 * Secrets: the Authorization and X-Amz-Security-Token lines are built in
 * scratch memory that is wiped, and curl's copies are wiped with the list
 * (release_try).  The curl callbacks must not ereport: curl is not
 * prepared to be unwound through, so they only copy bytes and set fields.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "aws/credentials.h"
#include "aws/curl_prelude.h"
#include "aws/http.h"
#include "aws/sagemaker_client.h"
#include "aws/sagemaker_internal.h"
#include "aws/sigv4.h"
#include "create_gate.h"

#define SM_CONTENT_TYPE		"application/x-amz-json-1.1"
#define SM_SERVICE			"sagemaker"

static const char *const operation_names[FS_SM_NUM_OPERATIONS] = {
	"CreateTrainingJob",
	"DescribeTrainingJob",
	"StopTrainingJob",
	"ListTrainingJobs",
	"ListTags"
};

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

/* ----------------------------------------------------- curl callbacks */

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

/* ------------------------------------------------------------- one try */

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
void
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
	FS_CURL_SETOPT(easy, CURLOPT_USERAGENT, FS_HTTP_USER_AGENT);
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
