/*
 * sigv4_driver.c — a standalone program around src/aws/sigv4*.c for tests.
 *
 * Reads request cases from stdin and signs each with fs_sigv4_sign():
 *
 *   begin NAME
 *   method GET
 *   url https://example.amazonaws.com/
 *   header NAME VALUE          (any number, in order; a name may repeat)
 *   body BYTES                 (optional)
 *   region us-east-1
 *   service service
 *   access_key_id AKIDEXAMPLE
 *   secret_access_key SECRET
 *   session_token TOKEN        (optional)
 *   amz_date 20150830T123600Z
 *   expect_signature HEX       (optional, --check mode)
 *   expect_authorization TEXT  (optional, --check mode)
 *   expect_error               (optional, --check mode: signing must fail)
 *   end
 *
 * A value is the rest of its line; "\\" and "\xHH" escape any byte, so
 * binary bodies, control characters and leading spaces can be written.
 * Lines starting with '#' and blank lines between cases are ignored.
 *
 * Default mode prints, for each case, its results with the same escapes
 * (see print_case) for test/sigv4/compare.py to check against botocore.
 * --check mode compares with the expect_* lines and prints TAP-like
 * "ok NAME" / "not ok NAME: why" lines; the exit status is 1 if any failed.
 *
 * Test data only: the secrets here are the published AWS examples or
 * random strings, and printing them is the point.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sigv4.h"

#define MAX_HEADERS 256

typedef struct Field
{
	char	   *data;
	size_t		len;
} Field;

typedef struct Case
{
	char		name[256];
	Field		method,
				url,
				body,
				region,
				service,
				akid,
				secret,
				token,
				amz_date,
				expect_signature,
				expect_authorization;
	int			has_token;
	int			expect_error;
	size_t		nheaders;
	Field		hname[MAX_HEADERS];
	Field		hvalue[MAX_HEADERS];
} Case;

static void
die(const char *msg, long line)
{
	fprintf(stderr, "sigv4_driver: line %ld: %s\n", line, msg);
	exit(2);
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode the escapes of s[0..n) into a fresh NUL-terminated buffer. */
static Field
unescape(const char *s, size_t n, long line)
{
	Field		f;
	size_t		i;

	f.data = malloc(n + 1);
	f.len = 0;
	if (f.data == NULL)
		die("out of memory", line);
	for (i = 0; i < n; i++)
	{
		if (s[i] == '\\')
		{
			if (i + 1 < n && s[i + 1] == '\\')
			{
				f.data[f.len++] = '\\';
				i++;
			}
			else if (i + 3 < n && s[i + 1] == 'x' &&
					 hexval(s[i + 2]) >= 0 && hexval(s[i + 3]) >= 0)
			{
				f.data[f.len++] = (char) (hexval(s[i + 2]) * 16 + hexval(s[i + 3]));
				i += 3;
			}
			else
				die("bad escape", line);
		}
		else
			f.data[f.len++] = s[i];
	}
	f.data[f.len] = '\0';
	return f;
}

static void
print_escaped(const char *key, const char *s, size_t n)
{
	size_t		i;

	fputs(key, stdout);
	fputc(' ', stdout);
	for (i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c <= 0x20 || c >= 0x7F)
			printf("\\x%02x", c);
		else
			fputc(c, stdout);
	}
	fputc('\n', stdout);
}

static void
print_str(const char *key, const char *s)
{
	if (s)
		print_escaped(key, s, strlen(s));
}

static void
free_field(Field *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}

static void
free_case(Case *c)
{
	size_t		i;

	free_field(&c->method);
	free_field(&c->url);
	free_field(&c->body);
	free_field(&c->region);
	free_field(&c->service);
	free_field(&c->akid);
	free_field(&c->secret);
	free_field(&c->token);
	free_field(&c->amz_date);
	free_field(&c->expect_signature);
	free_field(&c->expect_authorization);
	for (i = 0; i < c->nheaders; i++)
	{
		free_field(&c->hname[i]);
		free_field(&c->hvalue[i]);
	}
	memset(c, 0, sizeof(*c));
}

/* Fields that must not hold a NUL byte (they are C strings for the signer). */
static int
has_nul(const Field *f)
{
	return f->data != NULL && strlen(f->data) != f->len;
}

static int
run_case(Case *c, int check)
{
	FsSigV4Header headers[MAX_HEADERS];
	FsSigV4Request req;
	FsSigV4Credentials cred;
	FsSigV4Result res;
	FsSigV4Status st;
	char		err[512];
	size_t		i;
	int			ok = 1;
	int			nul = has_nul(&c->method) || has_nul(&c->url) || has_nul(&c->region) ||
		has_nul(&c->service) || has_nul(&c->akid) || has_nul(&c->secret) ||
		has_nul(&c->token) || has_nul(&c->amz_date);

	for (i = 0; i < c->nheaders; i++)
	{
		headers[i].name = c->hname[i].data;
		headers[i].value = c->hvalue[i].data;
		nul = nul || has_nul(&c->hname[i]) || has_nul(&c->hvalue[i]);
	}
	memset(&req, 0, sizeof(req));
	req.method = c->method.data;
	req.url = c->url.data;
	req.headers = headers;
	req.nheaders = c->nheaders;
	req.body = (const unsigned char *) c->body.data;
	req.body_len = c->body.len;
	req.region = c->region.data;
	req.service = c->service.data;
	req.amz_date = c->amz_date.data;
	cred.access_key_id = c->akid.data;
	cred.secret_access_key = c->secret.data;
	cred.session_token = c->has_token ? c->token.data : NULL;

	if (nul)
	{
		st = FS_SIGV4_INVALID_ARGUMENT;
		snprintf(err, sizeof(err), "a text field holds a NUL byte");
		memset(&res, 0, sizeof(res));
	}
	else
		st = fs_sigv4_sign(&req, &cred, &res, err, sizeof(err));

	if (!check)
	{
		printf("begin %s\n", c->name);
		if (st != FS_SIGV4_OK)
		{
			printf("status error %d\n", (int) st);
			print_str("error", err);
		}
		else
		{
			printf("status ok\n");
			print_str("authorization", res.authorization);
			print_str("x_amz_date", res.amz_date);
			print_str("security_token", res.security_token);
			print_str("content_sha256", res.content_sha256);
			print_str("host", res.host);
			print_str("signed_headers", res.signed_headers);
			print_str("canonical_request", res.canonical_request);
			print_str("string_to_sign", res.string_to_sign);
		}
		printf("end\n");
	}
	else
	{
		char		why[600] = "";

		if (c->expect_error)
		{
			if (st == FS_SIGV4_OK)
				snprintf(why, sizeof(why), "signed, but an error was expected");
			else if (c->secret.data && c->secret.len > 0 && strstr(err, c->secret.data) != NULL)
				snprintf(why, sizeof(why), "the error message shows the secret");
		}
		else if (st != FS_SIGV4_OK)
			snprintf(why, sizeof(why), "signing failed: %s", err);
		else if (c->expect_signature.data && strcmp(c->expect_signature.data, res.signature) != 0)
			snprintf(why, sizeof(why), "signature %s, expected %s", res.signature, c->expect_signature.data);
		else if (c->expect_authorization.data &&
				 strcmp(c->expect_authorization.data, res.authorization) != 0)
			snprintf(why, sizeof(why), "Authorization differs: %s", res.authorization);
		if (why[0])
		{
			ok = 0;
			printf("not ok %s: %s\n", c->name, why);
			if (st == FS_SIGV4_OK)
				print_str("# canonical_request", res.canonical_request);
		}
		else if (c->expect_error)
			printf("ok %s (%s)\n", c->name, err);
		else
			printf("ok %s\n", c->name);
	}
	fs_sigv4_result_free(&res);
	return ok;
}

int
main(int argc, char **argv)
{
	char	   *line = NULL;
	size_t		cap = 0;
	ssize_t		n;
	long		lineno = 0;
	int			in_case = 0;
	int			check = argc > 1 && strcmp(argv[1], "--check") == 0;
	int			failures = 0;
	static Case c;

	while ((n = getline(&line, &cap, stdin)) != -1)
	{
		char	   *sp;
		size_t		klen;
		Field		v;

		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!in_case)
		{
			if (n == 0 || line[0] == '#')
				continue;
			if (strncmp(line, "begin ", 6) != 0)
				die("expected \"begin NAME\"", lineno);
			memset(&c, 0, sizeof(c));
			snprintf(c.name, sizeof(c.name), "%s", line + 6);
			in_case = 1;
			continue;
		}
		if (strcmp(line, "end") == 0)
		{
			if (!run_case(&c, check))
				failures++;
			free_case(&c);
			in_case = 0;
			continue;
		}
		if (strcmp(line, "expect_error") == 0)
		{
			c.expect_error = 1;
			continue;
		}
		sp = strchr(line, ' ');
		klen = sp ? (size_t) (sp - line) : (size_t) n;
		v = unescape(sp ? sp + 1 : line + n, sp ? (size_t) (n - klen - 1) : 0, lineno);

#define FIELD(k, f) else if (klen == strlen(k) && strncmp(line, k, klen) == 0) { free_field(&c.f); c.f = v; }
		if (klen == 6 && strncmp(line, "header", 6) == 0)
		{
			/* split the raw text, so that an escaped space stays in the name */
			char	   *raw = sp ? sp + 1 : line + n;
			char	   *rsp = strchr(raw, ' ');

			free_field(&v);
			if (c.nheaders >= MAX_HEADERS)
				die("too many headers", lineno);
			c.hname[c.nheaders] = unescape(raw, rsp ? (size_t) (rsp - raw) : strlen(raw), lineno);
			c.hvalue[c.nheaders] = rsp ? unescape(rsp + 1, strlen(rsp + 1), lineno)
				: unescape("", 0, lineno);
			c.nheaders++;
		}
		else if (klen == 13 && strncmp(line, "session_token", 13) == 0)
		{
			free_field(&c.token);
			c.token = v;
			c.has_token = 1;
		}
		FIELD("method", method)
		FIELD("url", url)
		FIELD("body", body)
		FIELD("region", region)
		FIELD("service", service)
		FIELD("access_key_id", akid)
		FIELD("secret_access_key", secret)
		FIELD("amz_date", amz_date)
		FIELD("expect_signature", expect_signature)
		FIELD("expect_authorization", expect_authorization)
		else
			die("unknown key", lineno);
#undef FIELD
	}
	if (in_case)
		die("missing \"end\"", lineno);
	free(line);
	if (check)
		printf("# %d failed\n", failures);
	return failures ? 1 : 0;
}
