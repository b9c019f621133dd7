/*-------------------------------------------------------------------------
 *
 * redact.c
 *		Removing credentials from text that comes back from AWS.
 *
 * Three kinds of thing are removed, in this order:
 *	1. the secret key and session token the server signs with, wherever they
 *	   appear verbatim (the caller passes the credentials in use);
 *	2. the value after a marker that names a credential: a session token
 *	   header or field ("x-amz-security-token:", "SessionToken": ...), a
 *	   secret key field, and "Signature=" (a signature proves nothing once
 *	   its request is gone, but it is a credential-derived value and has no
 *	   place in a job's history);
 *	3. AWS access key ids (AKIA..., ASIA..., ...), masked to their last four
 *	   characters as "aws configure list" shows them.
 * Markers match without regard to case; a value runs to the next blank,
 * quote, backslash (an escape in JSON text), comma, ampersand or
 * semicolon.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "lib/stringinfo.h"

#include "aws/redact.h"

#define REDACTED "<redacted>"

/* Markers after which a credential follows (then ':' or '=', maybe quoted). */
static const char *const credential_markers[] = {
	"x-amz-security-token", "aws_session_token", "sessiontoken", "\"token\"",
	"aws_secret_access_key", "secret_access_key", "secretaccesskey",
	"signature", NULL
};

/* First four characters of the kinds of AWS access key id. */
static const char *const key_prefixes[] = {
	"AKIA", "ASIA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ASCA", "AGPA",
	"ABIA", "ACCA", "APKA", NULL
};

static bool
is_alnum(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool
ends_value(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\'' ||
		c == '"' || c == '\\' || c == ',' || c == '&' || c == ';';
}

/* Every occurrence of secret (when long enough to be one) replaced. */
static char *
replace_literal(char *text, const char *secret)
{
	StringInfoData out;
	const char *p = text;
	const char *hit;
	size_t		n;

	if (secret == NULL || (n = strlen(secret)) < 8 || strstr(text, secret) == NULL)
		return text;
	initStringInfo(&out);
	while ((hit = strstr(p, secret)) != NULL)
	{
		appendBinaryStringInfo(&out, p, hit - p);
		appendStringInfoString(&out, REDACTED);
		p = hit + n;
	}
	appendStringInfoString(&out, p);
	return out.data;
}

/*
 * If a credential marker starts at p, the length of what precedes its
 * value (marker, separator, quotes and blanks); 0 if none does.
 */
static size_t
marker_at(const char *p)
{
	for (int m = 0; credential_markers[m] != NULL; m++)
	{
		size_t		n = strlen(credential_markers[m]);
		const char *q = p + n;

		if (pg_strncasecmp(p, credential_markers[m], n) != 0)
			continue;
		/* "signature" only as Signature=...; the others as field or header */
		if (strcmp(credential_markers[m], "signature") == 0)
			return *q == '=' ? n + 1 : 0;
		if (*q == '"')
			q++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != ':' && *q != '=')
			continue;
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q == '"')
			q++;
		return q - p;
	}
	return 0;
}

/* If an access key id starts at p (and p starts a word), its length. */
static size_t
access_key_at(const char *text, const char *p)
{
	size_t		n = 0;

	if (p > text && is_alnum(p[-1]))
		return 0;
	for (int k = 0; key_prefixes[k] != NULL; k++)
		if (strncmp(p, key_prefixes[k], 4) == 0)
		{
			while ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= '0' && p[n] <= '9'))
				n++;
			return (n >= 16 && n <= 128 && !is_alnum(p[n])) ? n : 0;
		}
	return 0;
}

char *
fs_aws_mask_key(const char *key)
{
	size_t		n = strlen(key);
	char	   *m = palloc(n + 1);

	for (size_t i = 0; i < n; i++)
		m[i] = (n > 4 && i >= n - 4) ? key[i] : '*';
	m[n] = '\0';
	return m;
}

char *
fs_aws_redact(const char *text, const FsAwsCredentials *cred)
{
	char	   *work = (char *) text;
	StringInfoData out;
	const char *p;
	bool		changed = false;

	if (text == NULL)
		return NULL;
	if (cred != NULL)
	{
		work = replace_literal(work, cred->session_token);
		work = replace_literal(work, cred->secret_access_key);
	}

	initStringInfo(&out);
	p = work;
	while (*p)
	{
		size_t		n;

		if ((n = marker_at(p)) > 0)
		{
			const char *v = p + n;
			const char *e = v;

			while (!ends_value(*e))
				e++;
			appendBinaryStringInfo(&out, p, n);
			if (e > v && strncmp(v, REDACTED, strlen(REDACTED)) != 0)
			{
				appendStringInfoString(&out, REDACTED);
				changed = true;
			}
			else
				appendBinaryStringInfo(&out, v, e - v);
			p = e;
		}
		else if ((n = access_key_at(work, p)) > 0)
		{
			char	   *key = pnstrdup(p, n);

			appendStringInfoString(&out, fs_aws_mask_key(key));
			pfree(key);
			changed = true;
			p += n;
		}
		else
			appendStringInfoChar(&out, *p++);
	}
	if (!changed && work == text)
	{
		pfree(out.data);
		return (char *) text;
	}
	return out.data;
}
