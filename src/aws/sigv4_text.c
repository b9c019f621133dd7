/*-------------------------------------------------------------------------
 *
 * sigv4_text.c
 *		The signer's text toolkit: growable buffers that are wiped before
 *		they are freed, character classes, strict UTF-8, the white space
 *		botocore trims from header values, and error messages.
 *
 * Plain C, no PostgreSQL (see sigv4.c).  Every buffer here may hold a
 * secret (the secret key passes through one on its way to the HMAC), so
 * every release goes through OPENSSL_cleanse first.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sigv4.h"
#include "sigv4_internal.h"

void
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

void
buf_add(Buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	if (b->failed)
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_adds(Buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_addc(Buf *b, char c)
{
	buf_add(b, &c, 1);
}

/*
 * Append every string of a NULL-terminated list, in order: one line for a
 * scope, a string to sign or an Authorization header instead of one call
 * per piece.  The pieces hold no NUL (they are C strings or Bufs).
 */
void
buf_addall(Buf *b,...)
{
	va_list		ap;
	const char *s;

	va_start(ap, b);
	while ((s = va_arg(ap, const char *)) != NULL)
		buf_adds(b, s);
	va_end(ap);
}

void
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
char *
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

char *
str_dup(const char *s)
{
	size_t		n = strlen(s);
	char	   *p = malloc(n + 1);

	if (p)
		memcpy(p, s, n + 1);
	return p;
}

void
str_free_wipe(char *s)
{
	if (s)
	{
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

/* --------------------------------------------------------- character sets */

int
is_alnum(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* RFC 9110 token characters, for methods and header names. */
int
is_tchar(unsigned char c)
{
	return is_alnum(c) || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* What Python's quote() never encodes, plus '/' (botocore's safe='/~'). */
int
is_path_safe(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/';
}

char
ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

char
ascii_upper(char c)
{
	return (c >= 'a' && c <= 'z') ? (char) (c - 'a' + 'A') : c;
}

/* Whether s begins with prefix (written in lower case), in any ASCII case. */
int
ci_prefix(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (ascii_lower(*s) != *prefix)
			return 0;
	return 1;
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
int
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
void
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
