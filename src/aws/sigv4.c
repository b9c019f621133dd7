/*-------------------------------------------------------------------------
 *
 * sigv4.c
 *		AWS Signature Version 4 signing, matching botocore byte for byte:
 *		the signer's entry points -- the arguments checked, the headers to
 *		sign chosen, the canonical request, the string to sign and the
 *		Authorization header put together -- and the X-Amz-Date helpers.
 *
 * See sigv4.h for what is signed and how.  The signer is four files that
 * share sigv4_internal.h:
 *	 sigv4.c		 this one: fs_sigv4_sign, its arguments and headers
 *	 sigv4_url.c	 the URL as it is signed: split, Host, canonical URI
 *					 and canonical query string
 *	 sigv4_crypto.c	 SHA-256, HMAC and the signing key derivation (OpenSSL)
 *	 sigv4_text.c	 wiped buffers, character classes, UTF-8, botocore's
 *					 white-space trimming, error messages
 *
 * All four must stay plain C with OpenSSL only: no PostgreSQL header, no
 * ereport, no palloc, no clock, no environment, no I/O (the test driver
 * test/sigv4/sigv4_driver.c links them alone).  Every allocation is
 * malloc'd and released before returning (or handed to the caller in
 * FsSigV4Result); every OpenSSL call is checked.  Buffers that held key
 * material are wiped before release.
 *
 * It must never write a secret anywhere: error messages name the faulty
 * argument, never its value.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sigv4.h"
#include "sigv4_internal.h"

#define SIGV4_ALGORITHM		"AWS4-HMAC-SHA256"

/* A header after validation, with its name lower-cased. */
typedef struct Hdr
{
	char	   *lname;			/* malloc'd */
	const char *value;			/* caller's, or one of ours */
	size_t		order;			/* position, for a stable sort */
} Hdr;

static const char *const unsigned_headers[] = {"expect", "user-agent", "x-amzn-trace-id"};

/* ------------------------------------------------------------------- date */

static int
digits(const char *s, int n, int *out)
{
	int			v = 0,
				i;

	for (i = 0; i < n; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 1;
}

int
fs_sigv4_valid_amz_date(const char *d)
{
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int			y,
				mo,
				day,
				h,
				mi,
				s,
				dim;

	if (d == NULL || strlen(d) != FS_SIGV4_AMZ_DATE_LEN || d[8] != 'T' || d[15] != 'Z')
		return 0;
	if (!digits(d, 4, &y) || !digits(d + 4, 2, &mo) || !digits(d + 6, 2, &day) ||
		!digits(d + 9, 2, &h) || !digits(d + 11, 2, &mi) || !digits(d + 13, 2, &s))
		return 0;
	if (y < 1 || mo < 1 || mo > 12 || h > 23 || mi > 59 || s > 59)
		return 0;
	dim = mdays[mo - 1];
	if (mo == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		dim = 29;
	return day >= 1 && day <= dim;
}

int
fs_sigv4_format_amz_date(time_t t, char *out)
{
	struct tm	tm;

	if (gmtime_r(&t, &tm) == NULL)
		return 0;
	if (strftime(out, FS_SIGV4_AMZ_DATE_LEN + 1, "%Y%m%dT%H%M%SZ", &tm) != FS_SIGV4_AMZ_DATE_LEN)
		return 0;
	return 1;
}

/* --------------------------------------------------------------- headers */

static int
cmp_hdr(const void *a, const void *b)
{
	const Hdr  *x = a;
	const Hdr  *y = b;
	int			c = strcmp(x->lname, y->lname);

	if (c != 0)
		return c;
	return (x->order > y->order) - (x->order < y->order);
}

static char *
lower_dup(const char *s)
{
	char	   *p = str_dup(s);
	char	   *q;

	if (p)
		for (q = p; *q; q++)
			*q = ascii_lower(*q);
	return p;
}

static void
free_hdrs(Hdr *h, size_t n)
{
	size_t		i;

	if (h == NULL)
		return;
	for (i = 0; i < n; i++)
		free(h[i].lname);
	free(h);
}

static int
is_unsigned_header(const char *lname)
{
	size_t		i;

	for (i = 0; i < sizeof(unsigned_headers) / sizeof(unsigned_headers[0]); i++)
		if (strcmp(lname, unsigned_headers[i]) == 0)
			return 1;
	return 0;
}

static int
valid_simple(const char *s, const char *forbidden)
{
	const unsigned char *p;

	if (s == NULL || *s == '\0')
		return 0;
	for (p = (const unsigned char *) s; *p; p++)
		if (*p <= 0x20 || *p >= 0x7F || strchr(forbidden, *p) != NULL)
			return 0;
	return 1;
}

static FsSigV4Status
check_arguments(const FsSigV4Request *req, const FsSigV4Credentials *cred,
				char *errbuf, size_t errbuf_len)
{
	const char *p;
	size_t		i;

	if (req == NULL || cred == NULL || req->method == NULL || req->url == NULL ||
		(req->nheaders > 0 && req->headers == NULL) ||
		(req->body_len > 0 && req->body == NULL))
	{
		set_error(errbuf, errbuf_len, "request is incomplete");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (req->method[0] == '\0')
	{
		set_error(errbuf, errbuf_len, "method must not be empty");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	for (p = req->method; *p; p++)
	{
		if (!is_tchar((unsigned char) *p))
		{
			set_error(errbuf, errbuf_len, "method must be an HTTP token such as GET or POST");
			return FS_SIGV4_INVALID_ARGUMENT;
		}
	}
	if (!valid_simple(req->region, "/,;=\"\\"))
	{
		set_error(errbuf, errbuf_len, "region must be a non-empty name without spaces or '/', such as us-east-1");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (!valid_simple(req->service, "/,;=\"\\"))
	{
		set_error(errbuf, errbuf_len, "service must be a non-empty name without spaces or '/', such as sagemaker");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (!valid_simple(cred->access_key_id, "/,;=\"\\"))
	{
		set_error(errbuf, errbuf_len, "access key id must be non-empty printable ASCII without spaces, '/' or ','");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (cred->secret_access_key == NULL || cred->secret_access_key[0] == '\0' ||
		!valid_text(cred->secret_access_key, 0))
	{
		set_error(errbuf, errbuf_len, "secret access key must be non-empty text without control characters");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (cred->session_token != NULL && !valid_text(cred->session_token, 0))
	{
		set_error(errbuf, errbuf_len, "session token must be text without control characters");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	if (!fs_sigv4_valid_amz_date(req->amz_date))
	{
		set_error(errbuf, errbuf_len, "amz_date must be a UTC time written YYYYMMDDTHHMMSSZ, such as 20150830T123600Z");
		return FS_SIGV4_INVALID_DATE;
	}
	for (i = 0; i < req->nheaders; i++)
	{
		const char *name = req->headers[i].name;
		const char *value = req->headers[i].value;

		if (name == NULL || name[0] == '\0')
		{
			set_error(errbuf, errbuf_len, "header %zu has an empty name", i + 1);
			return FS_SIGV4_INVALID_HEADER;
		}
		for (p = name; *p; p++)
		{
			if (!is_tchar((unsigned char) *p))
			{
				set_error(errbuf, errbuf_len,
						  "header %zu has a name that is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", i + 1);
				return FS_SIGV4_INVALID_HEADER;
			}
		}
		if (value == NULL || !valid_text(value, 1))
		{
			set_error(errbuf, errbuf_len,
					  "header \"%s\" must have a UTF-8 value without control characters other than tab", name);
			return FS_SIGV4_INVALID_HEADER;
		}
		if (strlen(name) == 4 && ci_prefix(name, "date"))
		{
			set_error(errbuf, errbuf_len,
					  "header \"%s\" is not supported: the signature date comes from amz_date and is sent as X-Amz-Date", name);
			return FS_SIGV4_INVALID_HEADER;
		}
	}
	return FS_SIGV4_OK;
}

/* ----------------------------------------------------------------- signing */

FsSigV4Status
fs_sigv4_sign(const FsSigV4Request *req, const FsSigV4Credentials *cred,
			  FsSigV4Result *result, char *errbuf, size_t errbuf_len)
{
	FsSigV4Status st;
	ParsedUrl	pu;
	Hdr		   *hdrs = NULL;
	size_t		nh = 0,
				i;
	int			s3,
				has_host = 0,
				has_token;
	char		body_hash[65];
	const char *payload = NULL;
	char		date8[9];
	Buf			cr = {0},
				sts = {0},
				sh = {0},
				auth = {0},
				scope = {0};
	char		creq_hash[65];

	if (errbuf && errbuf_len)
		errbuf[0] = '\0';
	if (result == NULL)
	{
		set_error(errbuf, errbuf_len, "no place for the result");
		return FS_SIGV4_INVALID_ARGUMENT;
	}
	memset(result, 0, sizeof(*result));

	st = check_arguments(req, cred, errbuf, errbuf_len);
	if (st != FS_SIGV4_OK)
		return st;
	st = parse_url(req->url, &pu, errbuf, errbuf_len);
	if (st != FS_SIGV4_OK)
		return st;

	s3 = strcmp(req->service, "s3") == 0;
	has_token = cred->session_token != NULL && cred->session_token[0] != '\0';
	memcpy(date8, req->amz_date, 8);
	date8[8] = '\0';

	if (!fs_sigv4_sha256_hex(req->body, req->body_len, body_hash))
	{
		set_error(errbuf, errbuf_len, "SHA-256 of the body failed in OpenSSL");
		return FS_SIGV4_CRYPTO_FAILURE;
	}

	result->amz_date = str_dup(req->amz_date);
	result->security_token = has_token ? str_dup(cred->session_token) : NULL;
	result->content_sha256 = s3 ? str_dup(body_hash) : NULL;
	result->host = host_value(&pu);
	if (result->amz_date == NULL || result->host == NULL ||
		(has_token && result->security_token == NULL) ||
		(s3 && result->content_sha256 == NULL))
		goto oom;

	/*
	 * The headers as botocore has them after _modify_request_before_signing:
	 * the caller's, without the ones we replace, then ours.
	 */
	hdrs = calloc(req->nheaders + 4, sizeof(*hdrs));
	if (hdrs == NULL)
		goto oom;
	for (i = 0; i < req->nheaders; i++)
	{
		char	   *l = lower_dup(req->headers[i].name);

		if (l == NULL)
			goto oom;
		if (strcmp(l, "authorization") == 0 ||
			strcmp(l, "x-amz-date") == 0 ||
			(has_token && strcmp(l, "x-amz-security-token") == 0) ||
			(s3 && strcmp(l, "x-amz-content-sha256") == 0))
		{
			free(l);
			continue;
		}
		hdrs[nh].lname = l;
		hdrs[nh].value = req->headers[i].value;
		hdrs[nh].order = nh;
		nh++;
	}
#define ADD_HDR(n, v) \
	do { \
		if ((hdrs[nh].lname = str_dup(n)) == NULL) \
			goto oom; \
		hdrs[nh].value = (v); \
		hdrs[nh].order = nh; \
		nh++; \
	} while (0)
	ADD_HDR("x-amz-date", result->amz_date);
	if (has_token)
		ADD_HDR("x-amz-security-token", result->security_token);
	if (s3)
		ADD_HDR("x-amz-content-sha256", result->content_sha256);

	/* payload hash: a given X-Amz-Content-SHA256 (the first) wins */
	for (i = 0; i < nh; i++)
	{
		if (strcmp(hdrs[i].lname, "x-amz-content-sha256") == 0)
		{
			payload = hdrs[i].value;
			break;
		}
	}
	if (payload == NULL)
		payload = body_hash;

	/* headers to sign: all but a few, plus host when the caller gave none */
	{
		size_t		kept = 0;

		for (i = 0; i < nh; i++)
		{
			if (is_unsigned_header(hdrs[i].lname))
			{
				free(hdrs[i].lname);
				continue;
			}
			if (strcmp(hdrs[i].lname, "host") == 0)
				has_host = 1;
			hdrs[kept++] = hdrs[i];
		}
		nh = kept;
	}
	if (!has_host)
		ADD_HDR("host", result->host);
#undef ADD_HDR
	qsort(hdrs, nh, sizeof(*hdrs), cmp_hdr);

	/* canonical request */
	for (i = 0; req->method[i]; i++)
		buf_addc(&cr, ascii_upper(req->method[i]));
	buf_addc(&cr, '\n');
	if (s3)
		buf_add(&cr, pu.path, pu.path_len);
	else
		add_canonical_path(&cr, pu.path, pu.path_len);
	buf_addc(&cr, '\n');
	add_canonical_query(&cr, pu.query, pu.query_len);
	buf_addc(&cr, '\n');
	for (i = 0; i < nh; i++)
	{
		if (i == 0 || strcmp(hdrs[i].lname, hdrs[i - 1].lname) != 0)
		{
			if (i > 0)
			{
				buf_addc(&cr, '\n');
				buf_addc(&sh, ';');
			}
			buf_adds(&cr, hdrs[i].lname);
			buf_addc(&cr, ':');
			buf_adds(&sh, hdrs[i].lname);
		}
		else
			buf_addc(&cr, ',');
		buf_add_trimmed(&cr, hdrs[i].value);
	}
	buf_adds(&cr, "\n\n");
	buf_add(&cr, sh.data ? sh.data : "", sh.len);
	buf_addc(&cr, '\n');
	buf_adds(&cr, payload);
	if (cr.failed || sh.failed)
		goto oom;

	/* string to sign */
	buf_addall(&scope, date8, "/", req->region, "/", req->service, "/aws4_request", NULL);
	if (!fs_sigv4_sha256_hex((unsigned char *) cr.data, cr.len, creq_hash))
	{
		set_error(errbuf, errbuf_len, "SHA-256 of the canonical request failed in OpenSSL");
		st = FS_SIGV4_CRYPTO_FAILURE;
		goto fail;
	}
	buf_addall(&sts, SIGV4_ALGORITHM "\n", req->amz_date, "\n",
			   scope.data ? scope.data : "", "\n", creq_hash, NULL);
	if (sts.failed || scope.failed)
		goto oom;

	if (!compute_signature(cred->secret_access_key, date8, req->region,
						   req->service, sts.data, result->signature))
	{
		set_error(errbuf, errbuf_len, "HMAC-SHA256 failed in OpenSSL");
		st = FS_SIGV4_CRYPTO_FAILURE;
		goto fail;
	}

	buf_addall(&auth, SIGV4_ALGORITHM " Credential=", cred->access_key_id, "/", scope.data,
			   ", SignedHeaders=", sh.data ? sh.data : "", ", Signature=", result->signature,
			   NULL);

	result->authorization = buf_take(&auth);
	result->signed_headers = buf_take(&sh);
	result->canonical_request = buf_take(&cr);
	result->string_to_sign = buf_take(&sts);
	buf_wipe(&scope);
	free_hdrs(hdrs, nh);
	if (result->authorization == NULL || result->signed_headers == NULL ||
		result->canonical_request == NULL || result->string_to_sign == NULL)
	{
		fs_sigv4_result_free(result);
		set_error(errbuf, errbuf_len, "out of memory while signing");
		return FS_SIGV4_OUT_OF_MEMORY;
	}
	return FS_SIGV4_OK;

oom:
	set_error(errbuf, errbuf_len, "out of memory while signing");
	st = FS_SIGV4_OUT_OF_MEMORY;
fail:
	free_hdrs(hdrs, nh);
	buf_wipe(&cr);
	buf_wipe(&sts);
	buf_wipe(&sh);
	buf_wipe(&auth);
	buf_wipe(&scope);
	fs_sigv4_result_free(result);
	return st;
}

void
fs_sigv4_result_free(FsSigV4Result *r)
{
	if (r == NULL)
		return;
	str_free_wipe(r->authorization);
	str_free_wipe(r->amz_date);
	str_free_wipe(r->security_token);
	str_free_wipe(r->content_sha256);
	str_free_wipe(r->host);
	str_free_wipe(r->signed_headers);
	str_free_wipe(r->canonical_request);
	str_free_wipe(r->string_to_sign);
	OPENSSL_cleanse(r->signature, sizeof(r->signature));
	memset(r, 0, sizeof(*r));
}
