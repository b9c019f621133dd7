/*-------------------------------------------------------------------------
 *
 * sigv4_url.c
 *		The URL as SigV4 signs it: split as Python's urlsplit does, the
 *		Host value botocore derives from it, the canonical URI (normalized
 *		and encoded once more) and the canonical query string (sorted, not
 *		re-encoded).
 *
 * Plain C, no PostgreSQL (see sigv4.c).  Everything here follows
 * botocore's auth.py; src/aws/README.md lists the points worth knowing
 * ("%2F" is signed as "%252F", the query is not re-encoded, ...).  A URL
 * with user information or control characters is refused, never signed.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigv4.h"
#include "sigv4_internal.h"

/* A query parameter: key and value point into the URL. */
typedef struct QueryParam
{
	const char *key;
	size_t		key_len;
	const char *value;
	size_t		value_len;
} QueryParam;


/* -------------------------------------------------------------------- URL */

/*
 * Split url as Python's urlsplit does for the absolute http(s) URLs we
 * accept: the authority ends at the first '/', '?' or '#'; the fragment is
 * cut at the first '#', then the query at the first '?'.
 */
FsSigV4Status
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
char *
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
void
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
void
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
