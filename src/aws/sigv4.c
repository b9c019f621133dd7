/*-------------------------------------------------------------------------
 *
 * sigv4.c
 *		AWS Signature Version 4 signing, matching botocore byte for byte.
 *
 * See sigv4.h for what is signed and how.  This file must stay plain C with
 * OpenSSL only: no PostgreSQL header, no ereport, no palloc, no clock, no
 * environment, no I/O.  Every allocation is malloc'd and released before
 * returning (or handed to the caller in FsSigV4Result); every OpenSSL call
 * is checked.  Buffers that held key material are wiped before release.
 *
 * It must never write a secret anywhere: error messages name the faulty
 * argument, never its value.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sigv4.h"

#define SIGV4_ALGORITHM		"AWS4-HMAC-SHA256"
#define SHA256_LEN			32

/* A growable string; "failed" records an allocation failure. */
typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			failed;
} Buf;

/* A header after validation, with its name lower-cased. */
typedef struct Hdr
{
	char	   *lname;			/* malloc'd */
	const char *value;			/* caller's, or one of ours */
	size_t		order;			/* position, for a stable sort */
} Hdr;

/* A query parameter: key and value point into the URL. */
typedef struct QueryParam
{
	const char *key;
	size_t		key_len;
	const char *value;
	size_t		value_len;
} QueryParam;

/* The parts of the URL that are signed. */
typedef struct ParsedUrl
{
	int			https;
	const char *host;
	size_t		host_len;
	int			host_is_ipv6;
	long		port;			/* -1 when none */
	const char *path;
	size_t		path_len;
	const char *query;
	size_t		query_len;
} ParsedUrl;

static const char *const unsigned_headers[] = {"expect", "user-agent", "x-amzn-trace-id"};

static void
set_error(char *errbuf, size_t errbuf_len, const char *fmt,...)
__attribute__((format(printf, 3, 4)));

static void
set_error(char *errbuf, size_t errbuf_len, const char *fmt,...)
{
	va_list		ap;

	if (errbuf == NULL || errbuf_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errbuf_len, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- buffers */

static void
buf_reserve(Buf *b, size_t extra)
{
	size_t		need;
	size_t		cap;
	char	   *p;

	if (b->failed)
		return;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = malloc(cap);
	if (p == NULL)
	{
		b->failed = 1;
		return;
	}
	if (b->data)
	{
		memcpy(p, b->data, b->len);
		/* the buffer may have held a secret: wipe before release */
		OPENSSL_cleanse(b->data, b->cap);
		free(b->data);
	}
	b->data = p;
	b->cap = cap;
	b->data[b->len] = '\0';
}

static void
buf_add(Buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	if (b->failed)
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void
buf_adds(Buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void
buf_addc(Buf *b, char c)
{
	buf_add(b, &c, 1);
}

static void
buf_wipe(Buf *b)
{
	if (b->data)
	{
		OPENSSL_cleanse(b->data, b->cap);
		free(b->data);
	}
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Hand the buffer's string over to the caller; NULL if anything failed. */
static char *
buf_take(Buf *b)
{
	char	   *s;

	if (b->failed)
	{
		buf_wipe(b);
		return NULL;
	}
	if (b->data == NULL)
	{
		buf_reserve(b, 0);
		if (b->failed)
			return NULL;
	}
	s = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

static char *
str_dup(const char *s)
{
	size_t		n = strlen(s);
	char	   *p = malloc(n + 1);

	if (p)
		memcpy(p, s, n + 1);
	return p;
}

static void
str_free_wipe(char *s)
{
	if (s)
	{
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* --------------------------------------------------------- character sets */

static int
is_alnum(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 9110 token characters, for methods and header names. */
static int
is_tchar(unsigned char c)
{
	return is_alnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* What Python's quote() never encodes, plus '/' (botocore's safe='/~'). */
static int
is_path_safe(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/';
}

static char
ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

static char
ascii_upper(char c)
{
	return (c >= 'a' && c <= 'z') ? (char) (c - 'a' + 'A') : c;
}

/*
 * Length of the well-formed UTF-8 sequence at s (at most n bytes), 0 if it
 * is not one: overlong forms, surrogates and code points past U+10FFFF are
 * rejected, as Python's strict UTF-8 decoder (and PostgreSQL) reject them.
 */
static size_t
utf8_len(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned long c;
	size_t		len,
				i;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
	{
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
	{
		len = 2;
		c = s[0] & 0x1F;
	}
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
	{
		len = 3;
		c = s[0] & 0x0F;
	}
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
	{
		len = 4;
		c = s[0] & 0x07;
	}
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
	{
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
		(c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return 0;
	*cp = c;
	return len;
}

/*
 * True if s is UTF-8 text without control characters (a tab is allowed
 * when allow_tab).  Everything we sign or send as a header passes this, so
 * no CR, LF or NUL can reach the wire.
 */
static int
valid_text(const char *s, int allow_tab)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		n = strlen(s);

	while (n > 0)
	{
		unsigned long cp;
		size_t		l = utf8_len(p, n, &cp);

		if (l == 0)
			return 0;
		if ((cp < 0x20 && !(allow_tab && cp == '\t')) || cp == 0x7F)
			return 0;
		p += l;
		n -= l;
	}
	return 1;
}

/*
 * Byte length of the white-space character at s, 0 if it is not one.  The
 * set is what Python's str.split() splits on (str.isspace()), which is how
 * botocore trims header values; control characters other than tab never
 * get here (valid_text), so only these remain.
 */
static size_t
space_len(const unsigned char *s, size_t n)
{
	unsigned long cp;
	size_t		l = utf8_len(s, n, &cp);

	if (l == 0)
		return 0;
	switch (cp)
	{
		case 0x09:
		case 0x20:
		case 0x85:
		case 0xA0:
		case 0x1680:
		case 0x2028:
		case 0x2029:
		case 0x202F:
		case 0x205F:
		case 0x3000:
			return l;
		default:
			if (cp >= 0x2000 && cp <= 0x200A)
				return l;
			return 0;
	}
}

/* Append value with its white space trimmed and runs collapsed to one space. */
static void
buf_add_trimmed(Buf *b, const char *value)
{
	const unsigned char *p = (const unsigned char *) value;
	size_t		n = strlen(value);
	int			pending_space = 0;
	int			any = 0;

	while (n > 0)
	{
		size_t		sl = space_len(p, n);

		if (sl > 0)
		{
			pending_space = any;
			p += sl;
			n -= sl;
			continue;
		}
		if (pending_space)
			buf_addc(b, ' ');
		pending_space = 0;
		any = 1;
		buf_addc(b, (char) *p);
		p++;
		n--;
	}
}

/* ----------------------------------------------------------------- crypto */

static const char hexdigits[] = "0123456789abcdef";

static void
to_hex(const unsigned char *in, size_t n, char *out)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		out[2 * i] = hexdigits[in[i] >> 4];
		out[2 * i + 1] = hexdigits[in[i] & 0x0F];
	}
	out[2 * n] = '\0';
}

static int
sha256(const unsigned char *data, size_t len, unsigned char *out)
{
	const EVP_MD *md = EVP_sha256();
	unsigned int outlen = 0;
	static const unsigned char empty[1] = {0};

	if (md == NULL)
		return 0;
	if (EVP_Digest(data ? data : empty, len, out, &outlen, md, NULL) != 1)
		return 0;
	return outlen == SHA256_LEN;
}

int
fs_sigv4_sha256_hex(const unsigned char *data, size_t len, char *out)
{
	unsigned char md[SHA256_LEN];

	if (!sha256(data, len, md))
		return 0;
	to_hex(md, SHA256_LEN, out);
	return 1;
}

static int
hmac_sha256(const unsigned char *key, size_t key_len,
			const char *msg, size_t msg_len, unsigned char *out)
{
	const EVP_MD *md = EVP_sha256();
	unsigned int outlen = 0;

	if (md == NULL || key_len > 0x7FFFFFFF)
		return 0;
	if (HMAC(md, key, (int) key_len, (const unsigned char *) msg, msg_len,
			 out, &outlen) == NULL)
		return 0;
	return outlen == SHA256_LEN;
}

/*
 * signature = hex(HMAC(kSigning, string_to_sign)), where kSigning derives
 * from "AWS4" + secret through the date, the region, the service and
 * "aws4_request".  Every intermediate key is wiped.
 */
static int
compute_signature(const char *secret, const char *date8, const char *region,
				  const char *service, const char *sts, char *out_hex)
{
	Buf			k0 = {0};
	unsigned char k1[SHA256_LEN],
				k2[SHA256_LEN],
				k3[SHA256_LEN],
				k4[SHA256_LEN],
				sig[SHA256_LEN];
	int			ok;

	buf_adds(&k0, "AWS4");
	buf_adds(&k0, secret);
	ok = !k0.failed &&
		hmac_sha256((unsigned char *) k0.data, k0.len, date8, 8, k1) &&
		hmac_sha256(k1, SHA256_LEN, region, strlen(region), k2) &&
		hmac_sha256(k2, SHA256_LEN, service, strlen(service), k3) &&
		hmac_sha256(k3, SHA256_LEN, "aws4_request", 12, k4) &&
		hmac_sha256(k4, SHA256_LEN, sts, strlen(sts), sig);
	if (ok)
		to_hex(sig, SHA256_LEN, out_hex);
	buf_wipe(&k0);
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
	OPENSSL_cleanse(k3, sizeof(k3));
	OPENSSL_cleanse(k4, sizeof(k4));
	OPENSSL_cleanse(sig, sizeof(sig));
	return ok;
}

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

/* -------------------------------------------------------------------- URL */

static int
ci_prefix(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (ascii_lower(*s) != *prefix)
			return 0;
	return 1;
}

/*
 * Split url as Python's urlsplit does for the absolute http(s) URLs we
 * accept: the authority ends at the first '/', '?' or '#'; the fragment is
 * cut at the first '#', then the query at the first '?'.
 */
static FsSigV4Status
parse_url(const char *url, ParsedUrl *pu, char *errbuf, size_t errbuf_len)
{
	const char *p,
			   *auth,
			   *auth_end,
			   *rest,
			   *hash,
			   *qmark,
			   *portp;
	size_t		i;

	memset(pu, 0, sizeof(*pu));
	pu->port = -1;
	if (!valid_text(url, 0))
	{
		set_error(errbuf, errbuf_len, "url must be UTF-8 text without control characters");
		return FS_SIGV4_INVALID_URL;
	}
	if (ci_prefix(url, "https://"))
	{
		pu->https = 1;
		auth = url + 8;
	}
	else if (ci_prefix(url, "http://"))
		auth = url + 7;
	else
	{
		set_error(errbuf, errbuf_len, "url must begin with https:// or http://");
		return FS_SIGV4_INVALID_URL;
	}
	auth_end = auth + strcspn(auth, "/?#");
	rest = auth_end;

	for (p = auth; p < auth_end; p++)
	{
		if (*p == '@')
		{
			set_error(errbuf, errbuf_len, "url must not contain user information (user@host)");
			return FS_SIGV4_INVALID_URL;
		}
	}

	if (auth < auth_end && *auth == '[')
	{
		const char *close = memchr(auth, ']', auth_end - auth);

		if (close == NULL || close == auth + 1)
		{
			set_error(errbuf, errbuf_len, "url has an invalid IPv6 host");
			return FS_SIGV4_INVALID_URL;
		}
		pu->host = auth + 1;
		pu->host_len = close - pu->host;
		pu->host_is_ipv6 = 1;
		if (memchr(pu->host, ':', pu->host_len) == NULL)
		{
			set_error(errbuf, errbuf_len, "url has an invalid IPv6 host");
			return FS_SIGV4_INVALID_URL;
		}
		for (i = 0; i < pu->host_len; i++)
		{
			unsigned char c = (unsigned char) pu->host[i];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
				  (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
			{
				set_error(errbuf, errbuf_len, "url has an invalid IPv6 host");
				return FS_SIGV4_INVALID_URL;
			}
		}
		p = close + 1;
		if (p < auth_end && *p != ':')
		{
			set_error(errbuf, errbuf_len, "url has characters after its IPv6 host");
			return FS_SIGV4_INVALID_URL;
		}
		portp = (p < auth_end) ? p + 1 : NULL;
	}
	else
	{
		const char *colon = memchr(auth, ':', auth_end - auth);

		pu->host = auth;
		pu->host_len = (colon ? colon : auth_end) - auth;
		portp = colon ? colon + 1 : NULL;
		if (pu->host_len == 0)
		{
			set_error(errbuf, errbuf_len, "url has no host");
			return FS_SIGV4_INVALID_URL;
		}
		for (i = 0; i < pu->host_len; i++)
		{
			unsigned char c = (unsigned char) pu->host[i];

			if (!(is_alnum(c) || c == '-' || c == '.' || c == '_'))
			{
				set_error(errbuf, errbuf_len,
						  "url host may contain only letters, digits, '-', '_' and '.'");
				return FS_SIGV4_INVALID_URL;
			}
		}
	}

	/* An empty port ("host:") means no port, as in urlsplit. */
	if (portp != NULL && portp < auth_end)
	{
		long		port = 0;

		for (p = portp; p < auth_end; p++)
		{
			if (*p < '0' || *p > '9')
			{
				set_error(errbuf, errbuf_len, "url has a port that is not a number");
				return FS_SIGV4_INVALID_URL;
			}
			port = port * 10 + (*p - '0');
			if (port > 65535)
			{
				set_error(errbuf, errbuf_len, "url has a port out of range 0 to 65535");
				return FS_SIGV4_INVALID_URL;
			}
		}
		pu->port = port;
	}

	hash = strchr(rest, '#');
	if (hash == NULL)
		hash = rest + strlen(rest);
	qmark = memchr(rest, '?', hash - rest);
	pu->path = rest;
	if (qmark)
	{
		pu->path_len = qmark - rest;
		pu->query = qmark + 1;
		pu->query_len = hash - pu->query;
	}
	else
	{
		pu->path_len = hash - rest;
		pu->query = hash;
		pu->query_len = 0;
	}
	return FS_SIGV4_OK;
}

/* host[:port] as botocore's _host_from_url: lower case, no default port. */
static char *
host_value(const ParsedUrl *pu)
{
	Buf			b = {0};
	size_t		i;

	if (pu->host_is_ipv6)
		buf_addc(&b, '[');
	for (i = 0; i < pu->host_len; i++)
		buf_addc(&b, ascii_lower(pu->host[i]));
	if (pu->host_is_ipv6)
		buf_addc(&b, ']');
	if (pu->port >= 0 && pu->port != (pu->https ? 443 : 80))
	{
		char		tmp[24];

		snprintf(tmp, sizeof(tmp), ":%ld", pu->port);
		buf_adds(&b, tmp);
	}
	return buf_take(&b);
}

/*
 * botocore's normalize_url_path then quote(safe='/~'): drop empty and "."
 * segments, let ".." remove the one before, keep a leading and (when any
 * segment is left) a trailing slash, then percent-encode every byte that is
 * not unreserved or '/'.  '%' is encoded too: "%2F" is signed as "%252F".
 */
static void
add_canonical_path(Buf *out, const char *path, size_t len)
{
	const char **seg;
	size_t	   *seglen;
	size_t		nseg = 0,
				i,
				start;
	Buf			norm = {0};

	if (len == 0)
	{
		buf_addc(out, '/');
		return;
	}
	/* at most len / 2 + 1 segments */
	seg = malloc((len / 2 + 1) * sizeof(*seg));
	seglen = malloc((len / 2 + 1) * sizeof(*seglen));
	if (seg == NULL || seglen == NULL)
	{
		free(seg);
		free(seglen);
		out->failed = 1;
		return;
	}
	start = 0;
	for (i = 0; i <= len; i++)
	{
		if (i == len || path[i] == '/')
		{
			const char *s = path + start;
			size_t		n = i - start;

			if (n == 0 || (n == 1 && s[0] == '.'))
				;				/* dropped */
			else if (n == 2 && s[0] == '.' && s[1] == '.')
			{
				if (nseg > 0)
					nseg--;
			}
			else
			{
				seg[nseg] = s;
				seglen[nseg] = n;
				nseg++;
			}
			start = i + 1;
		}
	}
	if (path[0] == '/')
		buf_addc(&norm, '/');
	for (i = 0; i < nseg; i++)
	{
		if (i > 0)
			buf_addc(&norm, '/');
		buf_add(&norm, seg[i], seglen[i]);
	}
	if (path[len - 1] == '/' && nseg > 0)
		buf_addc(&norm, '/');
	free(seg);
	free(seglen);

	if (norm.failed)
		out->failed = 1;
	else
	{
		for (i = 0; i < norm.len; i++)
		{
			unsigned char c = (unsigned char) norm.data[i];

			if (is_path_safe(c))
				buf_addc(out, (char) c);
			else
			{
				char		enc[3];

				enc[0] = '%';
				enc[1] = "0123456789ABCDEF"[c >> 4];
				enc[2] = "0123456789ABCDEF"[c & 0x0F];
				buf_add(out, enc, 3);
			}
		}
	}
	buf_wipe(&norm);
}

static int
mem_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int			c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* Order of Python tuples (key, value) of str: code point = UTF-8 byte order. */
static int
cmp_query_param(const void *a, const void *b)
{
	const QueryParam *x = a;
	const QueryParam *y = b;
	int			c = mem_cmp(x->key, x->key_len, y->key, y->key_len);

	if (c != 0)
		return c;
	return mem_cmp(x->value, x->value_len, y->value, y->value_len);
}

/*
 * botocore's _canonical_query_string_url: every '&'-separated piece (empty
 * ones too) split at its first '=', sorted by key then value, joined as
 * key=value with '&', without any re-encoding.
 */
static void
add_canonical_query(Buf *out, const char *q, size_t len)
{
	QueryParam *params;
	size_t		n = 1,
				i,
				k,
				start;

	if (len == 0)
		return;
	for (i = 0; i < len; i++)
		if (q[i] == '&')
			n++;
	params = malloc(n * sizeof(*params));
	if (params == NULL)
	{
		out->failed = 1;
		return;
	}
	start = 0;
	k = 0;
	for (i = 0; i <= len; i++)
	{
		if (i == len || q[i] == '&')
		{
			const char *piece = q + start;
			size_t		plen = i - start;
			const char *eq = memchr(piece, '=', plen);

			params[k].key = piece;
			params[k].key_len = eq ? (size_t) (eq - piece) : plen;
			params[k].value = eq ? eq + 1 : piece + plen;
			params[k].value_len = eq ? plen - params[k].key_len - 1 : 0;
			k++;
			start = i + 1;
		}
	}
	qsort(params, n, sizeof(*params), cmp_query_param);
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			buf_addc(out, '&');
		buf_add(out, params[i].key, params[i].key_len);
		buf_addc(out, '=');
		buf_add(out, params[i].value, params[i].value_len);
	}
	free(params);
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
	buf_adds(&scope, date8);
	buf_addc(&scope, '/');
	buf_adds(&scope, req->region);
	buf_addc(&scope, '/');
	buf_adds(&scope, req->service);
	buf_adds(&scope, "/aws4_request");
	if (!fs_sigv4_sha256_hex((unsigned char *) cr.data, cr.len, creq_hash))
	{
		set_error(errbuf, errbuf_len, "SHA-256 of the canonical request failed in OpenSSL");
		st = FS_SIGV4_CRYPTO_FAILURE;
		goto fail;
	}
	buf_adds(&sts, SIGV4_ALGORITHM "\n");
	buf_adds(&sts, req->amz_date);
	buf_addc(&sts, '\n');
	buf_add(&sts, scope.data ? scope.data : "", scope.len);
	buf_addc(&sts, '\n');
	buf_adds(&sts, creq_hash);
	if (sts.failed || scope.failed)
		goto oom;

	if (!compute_signature(cred->secret_access_key, date8, req->region,
						   req->service, sts.data, result->signature))
	{
		set_error(errbuf, errbuf_len, "HMAC-SHA256 failed in OpenSSL");
		st = FS_SIGV4_CRYPTO_FAILURE;
		goto fail;
	}

	buf_adds(&auth, SIGV4_ALGORITHM " Credential=");
	buf_adds(&auth, cred->access_key_id);
	buf_addc(&auth, '/');
	buf_add(&auth, scope.data, scope.len);
	buf_adds(&auth, ", SignedHeaders=");
	buf_add(&auth, sh.data ? sh.data : "", sh.len);
	buf_adds(&auth, ", Signature=");
	buf_adds(&auth, result->signature);

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
