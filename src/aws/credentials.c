/*-------------------------------------------------------------------------
 *
 * credentials.c
 *		The AWS credential chain: environment, shared credentials file,
 *		container endpoint, EC2 instance metadata (IMDSv2).
 *
 * fs_aws_get_credentials() walks the chain in that order and the first
 * source that has credentials wins (see credentials.h).  The environment
 * and the file are read on every call: they are cheap, and a rotated file
 * is picked up without a restart.  Temporary credentials from the container
 * endpoint or the instance metadata service are cached in this process
 * (TopMemoryContext) and fetched again from their refresh time on:
 *
 *		refresh_at = expires_at - min(5 minutes, lifetime / 2)
 *
 * where lifetime is expires_at minus the time they were fetched.  So hour-
 * long credentials are renewed 5 minutes before they expire, and short ones
 * halfway through their life (a 6-second credential after 3 seconds).  If a
 * refresh fails while the cached credentials have not expired yet, they are
 * used on with a WARNING; once expired, the failure is an ERROR.  The cache
 * is per process: each backend and the dispatcher hold their own.
 *
 * Responses are parsed with PostgreSQL's JSON parser (pg_parse_json), whose
 * errors are reported without echoing the input.  Requests go through
 * fs_http_perform (interruptible, bounded by connect and total timeouts,
 * never through a proxy).  Plain http is used only with loopback hosts,
 * the container credential endpoints and (for IMDS) link-local hosts, as
 * the AWS SDKs allow for these endpoints.
 *
 * This file must never write a secret anywhere: not the secret access key,
 * the session token, the container authorization token or the IMDS token.
 * Messages name sources, variables, files, line numbers and URLs; buffers
 * that held secrets are wiped before they are freed.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "storage/fd.h"

#include "aws/credentials.h"
#include "aws/http.h"
#include "settings.h"

#define REFRESH_MARGIN_MAX	(5 * 60 * USECS_PER_SEC)
#define MAX_FILE_BYTES		(1024 * 1024)
#define MAX_TOKEN_FILE_BYTES (16 * 1024)
#define MAX_RESPONSE_BYTES	(64 * 1024)

#define CONTAINER_HOST_URL	"http://169.254.170.2"
#define IMDS_IPV4_URL		"http://169.254.169.254"
#define IMDS_IPV6_URL		"http://[fd00:ec2::254]"
#define IMDS_TOKEN_TTL		"21600"

/* The credentials handed out last; temporary ones double as the cache. */
static FsAwsCredentials *current = NULL;

/* ------------------------------------------------------------- helpers */

static void
wipe_free(char *s)
{
	if (s)
	{
		explicit_bzero(s, strlen(s));
		pfree(s);
	}
}

static void
free_credentials(FsAwsCredentials *c)
{
	if (c == NULL)
		return;
	wipe_free(c->access_key_id);
	wipe_free(c->secret_access_key);
	wipe_free(c->session_token);
	if (c->origin)
		pfree(c->origin);
	pfree(c);
}

static const FsAwsCredentials *
install(FsAwsCredentials *fresh)
{
	if (current != fresh)
		free_credentials(current);
	current = fresh;
	return current;
}

const FsAwsCredentials *
fs_aws_credentials_without_fetch(void)
{
	if (current == NULL)
		return NULL;
	if (current->expires && GetCurrentTimestamp() >= current->refresh_at)
		return NULL;
	return current;
}

void
fs_aws_forget_credentials(void)
{
	free_credentials(current);
	current = NULL;
}

const char *
fs_aws_source_name(FsAwsCredentialSource source)
{
	switch (source)
	{
		case FS_AWS_SOURCE_ENVIRONMENT:
			return "environment";
		case FS_AWS_SOURCE_SHARED_FILE:
			return "shared_file";
		case FS_AWS_SOURCE_CONTAINER:
			return "container";
		case FS_AWS_SOURCE_IMDS:
			return "imds";
	}
	return "unknown";
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return (v && v[0]) ? v : NULL;
}

/* New credentials in TopMemoryContext; token may be NULL or "". */
static FsAwsCredentials *
make_credentials(FsAwsCredentialSource source, const char *akid,
				 const char *secret, const char *token, const char *origin)
{
	FsAwsCredentials *c;

	c = MemoryContextAllocZero(TopMemoryContext, sizeof(FsAwsCredentials));
	c->source = source;
	c->access_key_id = MemoryContextStrdup(TopMemoryContext, akid);
	c->secret_access_key = MemoryContextStrdup(TopMemoryContext, secret);
	c->session_token = (token && token[0]) ? MemoryContextStrdup(TopMemoryContext, token) : NULL;
	c->origin = origin ? MemoryContextStrdup(TopMemoryContext, origin) : NULL;
	return c;
}

/* Printable ASCII without spaces: what keys and tokens look like. */
static bool
plain_token(const char *s, size_t maxlen)
{
	size_t		n = 0;

	if (s == NULL || s[0] == '\0')
		return false;
	for (; *s; s++, n++)
		if ((unsigned char) *s <= 0x20 || (unsigned char) *s >= 0x7F || n >= maxlen)
			return false;
	return true;
}

/* Format a TimestampTz as ISO 8601 UTC, e.g. 2025-01-31T12:00:00Z. */
char *
fs_aws_iso8601(TimestampTz t)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(t, NULL, &tm, &fsec, NULL, NULL) != 0)
		return pstrdup("(out of range)");
	return psprintf("%04d-%02d-%02dT%02d:%02d:%02dZ",
					tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/*
 * Parse an ISO 8601 time as AWS writes Expiration ("2025-01-31T12:00:00Z",
 * maybe with fractions or an offset).  The shape is checked first so that
 * timestamptz_in only sees strings it parses.
 */
static bool
parse_expiration(const char *s, TimestampTz *out)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	const char *p = s;
	int			i;

	for (i = 0; shape[i]; i++, p++)
	{
		if (shape[i] == 'd' ? !isdigit((unsigned char) *p) : *p != shape[i])
			return false;
	}
	if (*p == '.')
	{
		p++;
		if (!isdigit((unsigned char) *p))
			return false;
		while (isdigit((unsigned char) *p))
			p++;
	}
	if (*p == 'Z' && p[1] == '\0')
		;
	else if ((*p == '+' || *p == '-') && isdigit((unsigned char) p[1]) &&
			 isdigit((unsigned char) p[2]) &&
			 (p[3] == '\0' ||
			  (p[3] == ':' && isdigit((unsigned char) p[4]) && isdigit((unsigned char) p[5]) && p[6] == '\0') ||
			  (isdigit((unsigned char) p[3]) && isdigit((unsigned char) p[4]) && p[5] == '\0')))
		;
	else
		return false;
	/*
	 * The fields in range too: timestamptz_in raises on "2030-02-30", and an
	 * ERROR here would skip keeping the cached credentials that are still
	 * good (a bad answer at refresh must only make us use them longer).
	 */
	{
		static const int days_in_month[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
		int			year = atoi(s),
					month = atoi(s + 5),
					day = atoi(s + 8),
					hour = atoi(s + 11),
					minute = atoi(s + 14),
					second = atoi(s + 17);
		bool		leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

		if (year < 1 || month < 1 || month > 12 || day < 1 || day > days_in_month[month - 1] ||
			(month == 2 && day == 29 && !leap) || hour > 23 || minute > 59 || second > 59)
			return false;
		/* an offset PostgreSQL takes: hours to 15, minutes to 59 */
		if (*p != 'Z' && ((p[1] - '0') * 10 + (p[2] - '0') > 15 ||
						  (p[3] != '\0' && (p[p[3] == ':' ? 4 : 3] - '0') > 5)))
			return false;
	}
	*out = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
												   CStringGetDatum(s),
												   ObjectIdGetDatum(InvalidOid),
												   Int32GetDatum(-1)));
	return true;
}

/*
 * Read a whole small file.  Returns NULL with *missing set when it does not
 * exist; raises ERROR on other failures.  The caller wipes the result.
 */
static char *
read_small_file(const char *path, size_t maxlen, const char *what,
				bool *missing, size_t *lenp)
{
	int			fd;
	struct stat st;
	char	   *buf;
	size_t		len = 0;

	*missing = false;
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
		{
			*missing = true;
			return NULL;
		}
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open %s \"%s\": %m", what, path),
				 errhint("The file must be readable by the operating-system user the server runs as.")));
	}
	if (fstat(fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat %s \"%s\": %m", what, path)));
	if (!S_ISREG(st.st_mode) || (size_t) st.st_size > maxlen)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" is not a regular file of at most %zu bytes",
						what, path, maxlen)));
	buf = palloc((size_t) st.st_size + 1);
	while (len < (size_t) st.st_size)
	{
		ssize_t		n = read(fd, buf + len, (size_t) st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
		{
			int			save_errno = errno;

			explicit_bzero(buf, len);
			CloseTransientFile(fd);
			errno = save_errno;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read %s \"%s\": %m", what, path)));
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*lenp = len;
	CloseTransientFile(fd);
	if (strlen(buf) != len)
	{
		explicit_bzero(buf, len);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("%s \"%s\" contains a NUL byte", what, path)));
	}
	return buf;
}

/* --------------------------------------------------------- JSON fields */

/*
 * Collects the string values of some top-level fields of a JSON object,
 * through pg_parse_json's callbacks.  Values are palloc'd; the caller
 * wipes them.  Any other token is wiped as soon as it is seen.
 */
typedef struct JsonFields
{
	int			depth;
	bool		top_is_object;
	int			nfields;
	const char *const *names;
	char	  **values;
	int			next;			/* field whose value comes next, or -1 */
} JsonFields;

static void
jf_object_start(void *state)
{
	JsonFields *jf = state;

	if (jf->depth == 0)
		jf->top_is_object = true;
	jf->depth++;
}

static void
jf_nest_start(void *state)
{
	((JsonFields *) state)->depth++;
}

static void
jf_nest_end(void *state)
{
	((JsonFields *) state)->depth--;
}

static void
jf_field_start(void *state, char *fname, bool isnull)
{
	JsonFields *jf = state;
	int			i;

	jf->next = -1;
	if (jf->depth == 1)
	{
		for (i = 0; i < jf->nfields; i++)
			if (strcmp(fname, jf->names[i]) == 0)
				jf->next = i;
	}
	pfree(fname);
}

static void
jf_scalar(void *state, char *token, JsonTokenType type)
{
	JsonFields *jf = state;

	if (jf->depth == 1 && jf->next >= 0 && type == JSON_TOKEN_STRING &&
		jf->values[jf->next] == NULL)
	{
		jf->values[jf->next] = token;
		jf->next = -1;
		return;
	}
	jf->next = -1;
	wipe_free(token);
}

/*
 * Fill values[i] with the string value of field names[i] of the JSON object
 * in text, or NULL.  Returns false if text is not a JSON object; never
 * reports any part of text.
 */
static bool
json_string_fields(char *text, size_t len, int nfields,
				   const char *const *names, char **values)
{
	JsonLexContext *lex;
	JsonSemAction sem;
	JsonFields	jf;
	JsonParseErrorType rc;
	int			i;

	memset(values, 0, sizeof(char *) * nfields);
	memset(&jf, 0, sizeof(jf));
	jf.nfields = nfields;
	jf.names = names;
	jf.values = values;
	jf.next = -1;
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &jf;
	sem.object_start = jf_object_start;
	sem.object_end = jf_nest_end;
	sem.array_start = jf_nest_start;
	sem.array_end = jf_nest_end;
	sem.object_field_start = jf_field_start;
	sem.scalar = jf_scalar;

	lex = makeJsonLexContextCstringLen(text, (int) len, GetDatabaseEncoding(), true);
	rc = pg_parse_json(lex, &sem);
	/* the lexer keeps the last strings it saw in its buffer */
	if (lex->strval)
		explicit_bzero(lex->strval->data, lex->strval->maxlen);
	if (rc != JSON_SUCCESS || !jf.top_is_object)
	{
		for (i = 0; i < nfields; i++)
		{
			wipe_free(values[i]);
			values[i] = NULL;
		}
		return false;
	}
	return true;
}

/*
 * Turn a credentials response (container or IMDS) into credentials.
 * Returns NULL with *why set when it lacks what we need.
 */
static FsAwsCredentials *
credentials_from_json(FsAwsCredentialSource source, char *body, size_t len,
					  const char *origin, const char **why)
{
	static const char *const names[] = {"AccessKeyId", "SecretAccessKey", "Token",
	"Expiration", "Code"};
	char	   *v[lengthof(names)];
	FsAwsCredentials *c = NULL;
	TimestampTz expires_at = 0;
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	*why = NULL;
	if (!json_string_fields(body, len, lengthof(names), names, v))
		*why = "the response is not a JSON object";
	else if (v[4] != NULL && strcmp(v[4], "Success") != 0)
		*why = "the response has a Code other than \"Success\"";
	else if (v[0] == NULL || v[1] == NULL)
		*why = "the response lacks AccessKeyId or SecretAccessKey";
	else if (!plain_token(v[0], 128) || !plain_token(v[1], 1024) ||
			 (v[2] != NULL && !plain_token(v[2], 64 * 1024)))
		*why = "the response has an AccessKeyId, SecretAccessKey or Token that is not printable ASCII";
	else if (v[3] == NULL)
		*why = "the response lacks Expiration";
	else if (!parse_expiration(v[3], &expires_at))
		*why = "the response has an Expiration that is not an ISO 8601 time";
	else if (expires_at <= now)
		*why = "the response holds credentials that have already expired";
	else
	{
		c = make_credentials(source, v[0], v[1], v[2], origin);
		c->expires = true;
		c->expires_at = expires_at;
		c->refresh_at = expires_at - Min(REFRESH_MARGIN_MAX, (expires_at - now) / 2);
	}
	for (i = 0; i < lengthof(names); i++)
		wipe_free(v[i]);
	return c;
}

/* ------------------------------------------------------------ sources */

static FsAwsCredentials *
from_environment(StringInfo tried)
{
	const char *akid = env("AWS_ACCESS_KEY_ID");
	const char *secret = env("AWS_SECRET_ACCESS_KEY");

	if (akid == NULL)
	{
		appendStringInfoString(tried, "environment: AWS_ACCESS_KEY_ID is not set");
		return NULL;
	}
	if (secret == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("AWS_ACCESS_KEY_ID is set in the server's environment but AWS_SECRET_ACCESS_KEY is not"),
				 errhint("Set both (and AWS_SESSION_TOKEN for temporary credentials), or neither to use another credential source.")));
	if (!plain_token(akid, 128) || !plain_token(secret, 1024))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY in the server's environment is not printable ASCII without spaces")));
	if (env("AWS_SESSION_TOKEN") && !plain_token(env("AWS_SESSION_TOKEN"), 64 * 1024))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("AWS_SESSION_TOKEN in the server's environment is not printable ASCII without spaces")));
	return make_credentials(FS_AWS_SOURCE_ENVIRONMENT, akid, secret,
							env("AWS_SESSION_TOKEN"), NULL);
}

static char *
trim(char *s)
{
	char	   *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * The shared credentials file, read as botocore's configparser does for the
 * parts we use: "[profile]" headers (the name between the first '[' and the
 * last ']', as written), "key = value" or "key: value" lines (key
 * lower-cased, both trimmed), '#' and ';' comment lines, blank lines.
 * Indented continuation lines belong to the key above and are skipped.  A
 * line that is none of these, or a key repeated in the profile we read, is
 * an error, as it is for botocore.  Errors give line numbers, never text.
 */
#define FILE_ERROR(...) \
	do { \
		explicit_bzero(buf, buflen); \
		ereport(ERROR, (errcode(ERRCODE_CONFIG_FILE_ERROR), errmsg(__VA_ARGS__))); \
	} while (0)

static FsAwsCredentials *
from_shared_file(StringInfo tried)
{
	const char *path_env = env("AWS_SHARED_CREDENTIALS_FILE");
	const char *profile_env = env("AWS_PROFILE");
	const char *profile = profile_env ? profile_env : "default";
	char	   *path;
	char	   *buf;
	size_t		buflen = 0;
	char	   *line;
	char	   *next;
	bool		missing;
	bool		in_profile = false;
	bool		seen_profile = false;
	int			key_indent = -1;	/* indent of the last key line, -1: none
									 * since the last header */
	int			lineno = 0;
	char	   *akid = NULL,
			   *secret = NULL,
			   *token = NULL,
			   *legacy_token = NULL;
	FsAwsCredentials *c = NULL;

	if (path_env && strncmp(path_env, "~/", 2) != 0)
		path = pstrdup(path_env);
	else
	{
		const char *home = env("HOME");
		struct passwd *pw;

		if (home == NULL && (pw = getpwuid(geteuid())) != NULL)
			home = pw->pw_dir;
		if (home == NULL)
		{
			appendStringInfoString(tried, "; shared credentials file: the server's user has no home directory");
			return NULL;
		}
		path = psprintf("%s/%s", home, path_env ? path_env + 2 : ".aws/credentials");
	}

	buf = read_small_file(path, MAX_FILE_BYTES, "shared credentials file", &missing, &buflen);
	if (buf == NULL)
	{
		if (profile_env)
			ereport(ERROR,
					(errcode(ERRCODE_CONFIG_FILE_ERROR),
					 errmsg("AWS_PROFILE is \"%s\" but the shared credentials file \"%s\" does not exist",
							profile, path),
					 errhint("Unset AWS_PROFILE, or set AWS_SHARED_CREDENTIALS_FILE to a file the server can read.")));
		appendStringInfo(tried, "; shared credentials file \"%s\": not found", path);
		pfree(path);
		return NULL;
	}

	for (line = buf; line != NULL; line = next)
	{
		char	   *nl = strchr(line, '\n');
		char	   *text;

		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		{
			size_t		len = strlen(line);

			if (len > 0 && line[len - 1] == '\r')
				line[len - 1] = '\0';	/* CRLF, or a CR ending the file */
		}
		lineno++;
		text = trim(line);
		if (*text == '\0' || *text == '#' || *text == ';')
			continue;

		/*
		 * As botocore's configparser: a line indented deeper than the key
		 * line above it continues that key's value; otherwise (right
		 * after a header, or a file indented throughout) it is a line of
		 * its own.
		 */
		if (key_indent >= 0 && (int) strspn(line, " \t") > key_indent)
			continue;
		if (*text == '[')
		{
			char	   *close = strrchr(text, ']');

			key_indent = -1;
			if (close == NULL || close == text + 1)
				FILE_ERROR("line %d of shared credentials file \"%s\" is not a valid [profile] header",
						   lineno, path);
			*close = '\0';
			in_profile = strcmp(text + 1, profile) == 0;
			if (in_profile && seen_profile)
				FILE_ERROR("profile \"%s\" appears twice in shared credentials file \"%s\" (again at line %d)",
						   profile, path, lineno);
			seen_profile = seen_profile || in_profile;
		}
		else
		{
			size_t		klen = strcspn(text, "=:");
			char	   *key;
			char	  **slot = NULL;
			char	   *k;

			if (text[klen] == '\0' || klen == 0)
				FILE_ERROR("line %d of shared credentials file \"%s\" is neither a [profile] header nor a key = value line",
						   lineno, path);
			key_indent = (int) strspn(line, " \t");
			if (!in_profile)
				continue;
			text[klen] = '\0';
			key = trim(text);
			for (k = key; *k; k++)
				*k = pg_ascii_tolower((unsigned char) *k);
			if (strcmp(key, "aws_access_key_id") == 0)
				slot = &akid;
			else if (strcmp(key, "aws_secret_access_key") == 0)
				slot = &secret;
			else if (strcmp(key, "aws_session_token") == 0)
				slot = &token;
			else if (strcmp(key, "aws_security_token") == 0)
				slot = &legacy_token;
			if (slot == NULL)
				continue;
			if (*slot != NULL)
			{
				char	   *keycopy = pstrdup(key);

				FILE_ERROR("profile \"%s\" of shared credentials file \"%s\" sets %s twice (again at line %d)",
						   profile, path, keycopy, lineno);
			}
			*slot = trim(text + klen + 1);
		}
	}

	if (!seen_profile && profile_env)
		FILE_ERROR("profile \"%s\" (AWS_PROFILE) is not in shared credentials file \"%s\"",
				   profile, path);
	if (akid == NULL || akid[0] == '\0')
		appendStringInfo(tried, "; shared credentials file \"%s\": no aws_access_key_id in profile \"%s\"",
						 path, profile);
	else if (secret == NULL || secret[0] == '\0')
		FILE_ERROR("profile \"%s\" of shared credentials file \"%s\" has aws_access_key_id but no aws_secret_access_key",
				   profile, path);
	else if (!plain_token(akid, 128) || !plain_token(secret, 1024) ||
			 (token && token[0] && !plain_token(token, 64 * 1024)) ||
			 (legacy_token && legacy_token[0] && !plain_token(legacy_token, 64 * 1024)))
		FILE_ERROR("profile \"%s\" of shared credentials file \"%s\" has a key or token that is not printable ASCII without spaces",
				   profile, path);
	else
		c = make_credentials(FS_AWS_SOURCE_SHARED_FILE, akid, secret,
							 (token && token[0]) ? token : legacy_token, profile);

	/* the file is all secrets: wipe every byte of it */
	explicit_bzero(buf, buflen);
	pfree(buf);
	pfree(path);
	return c;
}

#undef FILE_ERROR

/* A value we may send as an HTTP header: no control characters at all. */
static bool
header_safe(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return false;
	for (; *s; s++)
		if ((unsigned char) *s < 0x20 || (unsigned char) *s == 0x7F)
			return false;
	return true;
}

/*
 * The container credentials endpoint (ECS task roles, EKS pod identity).
 * *configured tells whether AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or
 * _FULL_URI is set.  A configuration error is an ERROR; a failed fetch
 * returns NULL with *why, so the caller can fall back on cached credentials.
 */
static FsAwsCredentials *
from_container(bool *configured, char **url_out, const char **why)
{
	const char *rel = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *token_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *token_env = env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	char	   *url;
	char	   *token = NULL;
	const char *token_from = NULL;
	const char *headers[2];
	int			nheaders = 0;
	char	   *volatile auth_line = NULL;
	FsHttpRequest req;
	FsHttpResponse resp;
	FsAwsCredentials *c;
	volatile bool got = false;

	*configured = rel != NULL || full != NULL;
	*why = NULL;
	if (!*configured)
		return NULL;

	if (rel)
	{
		if (rel[0] != '/')
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI must start with \"/\"")));
		url = psprintf("%s%s", CONTAINER_HOST_URL, rel);
	}
	else
	{
		bool		https,
					http_allowed;
		const char *bad;

		url = pstrdup(full);
		if (!fs_http_url_check_container(url, &https, &http_allowed, &bad))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("AWS_CONTAINER_CREDENTIALS_FULL_URI cannot be used: %s", bad)));
		if (!https && !http_allowed)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("AWS_CONTAINER_CREDENTIALS_FULL_URI \"%s\" must use https, or http with a loopback host or a container credential endpoint",
							url),
					 errhint("Plain http is allowed to 127.0.0.0/8, ::1, localhost, 169.254.170.2, 169.254.170.23 and fd00:ec2::23, as in the AWS SDKs.")));
	}
	*url_out = url;

	/* the token file wins over the variable, as in the AWS SDKs */
	if (token_file)
	{
		bool		missing;
		size_t		len;
		char	   *buf = read_small_file(token_file, MAX_TOKEN_FILE_BYTES,
										  "container authorization token file",
										  &missing, &len);

		if (buf == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FILE),
					 errmsg("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE \"%s\" does not exist", token_file)));
		/* a trailing newline is an editor's, not the token's */
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' ||
						   buf[len - 1] == ' ' || buf[len - 1] == '\t'))
			buf[--len] = '\0';
		token = buf;
		token_from = "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE";
	}
	else if (token_env)
	{
		token = pstrdup(token_env);
		token_from = "AWS_CONTAINER_AUTHORIZATION_TOKEN";
	}
	if (token && !header_safe(token))
	{
		wipe_free(token);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the container authorization token from %s is empty or holds control characters",
						token_from)));
	}

	headers[nheaders++] = "Accept: application/json";
	if (token)
	{
		auth_line = psprintf("Authorization: %s", token);
		wipe_free(token);
		headers[nheaders++] = (const char *) auth_line;
	}

	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.url = url;
	req.headers = headers;
	req.nheaders = nheaders;
	req.connect_timeout_ms = 2000;
	req.timeout_ms = 5000;
	req.max_response_bytes = MAX_RESPONSE_BYTES;
	req.no_proxy = true;
	PG_TRY();
	{
		got = fs_http_perform(&req, &resp);
	}
	PG_FINALLY();
	{
		wipe_free(auth_line);
	}
	PG_END_TRY();

	if (!got)
	{
		*why = pstrdup(resp.error);
		return NULL;
	}
	if (resp.status != 200)
	{
		*why = psprintf("it answered HTTP status %ld", resp.status);
		wipe_free(resp.body);
		return NULL;
	}
	c = credentials_from_json(FS_AWS_SOURCE_CONTAINER, resp.body, resp.body_len, url, why);
	wipe_free(resp.body);
	return c;
}

/* One request to the instance metadata service; NULL body on failure. */
static bool
imds_request(const char *method, const char *url, const char *header,
			 long timeout_ms, FsHttpResponse *resp)
{
	FsHttpRequest req;
	const char *headers[1];

	memset(&req, 0, sizeof(req));
	headers[0] = header;
	req.method = method;
	req.url = url;
	req.headers = headers;
	req.nheaders = 1;
	req.connect_timeout_ms = timeout_ms;
	req.timeout_ms = 2 * timeout_ms;
	req.max_response_bytes = MAX_RESPONSE_BYTES;
	req.no_proxy = true;
	return fs_http_perform(&req, resp);
}

/* IAM role names: letters, digits and +=,.@_- */
static bool
valid_role_name(const char *s)
{
	size_t		n = strlen(s);

	if (n == 0 || n > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char) *s) && strchr("+=,.@_-", *s) == NULL)
			return false;
	return true;
}

/* Steps 2 and 3 of IMDSv2: the role name, then its credentials. */
static FsAwsCredentials *
imds_role_credentials(const char *base, const char *token_line,
					  long timeout_ms, const char **why)
{
	FsHttpResponse resp;
	char	   *role = NULL;
	char	   *url;
	FsAwsCredentials *c = NULL;

	url = psprintf("%s/latest/meta-data/iam/security-credentials/", base);
	if (!imds_request("GET", url, token_line, timeout_ms, &resp))
		*why = psprintf("no IAM role name: %s", resp.error);
	else if (resp.status == 404)
		*why = "no IAM role is attached to this instance";
	else if (resp.status != 200)
		*why = psprintf("no IAM role name: GET /latest/meta-data/iam/security-credentials/ answered HTTP status %ld",
						resp.status);
	else
	{
		role = pstrdup(resp.body);
		role[strcspn(role, "\r\n")] = '\0';
		if (!valid_role_name(role))
			*why = "the IAM role name it gave is not a valid role name";
	}
	if (resp.body)
		wipe_free(resp.body);
	if (*why != NULL)
		return NULL;

	url = psprintf("%s/latest/meta-data/iam/security-credentials/%s", base, role);
	if (!imds_request("GET", url, token_line, timeout_ms, &resp))
		*why = psprintf("no credentials for IAM role \"%s\": %s", role, resp.error);
	else if (resp.status != 200)
		*why = psprintf("no credentials for IAM role \"%s\": HTTP status %ld", role, resp.status);
	else
	{
		c = credentials_from_json(FS_AWS_SOURCE_IMDS, resp.body, resp.body_len, base, why);
		if (c == NULL)
			*why = psprintf("credentials for IAM role \"%s\": %s", role, *why);
	}
	if (resp.body)
		wipe_free(resp.body);
	return c;
}

/*
 * EC2 instance metadata, IMDSv2: PUT a session token, then GET the role
 * name and the role's credentials with it.  There is no IMDSv1 fallback.
 * Any failure returns NULL with *why: off EC2 this source simply has nothing.
 */
static FsAwsCredentials *
from_imds(char **endpoint_out, const char **why)
{
	const char *endpoint = env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	const char *timeout_s = env("AWS_METADATA_SERVICE_TIMEOUT");
	volatile long timeout_ms = 1000;
	char	   *base;
	size_t		len;
	bool		https,
				local;
	const char *bad;
	FsHttpResponse resp;
	char	   *volatile token_line = NULL;
	char	   *url;
	FsAwsCredentials *volatile c = NULL;

	*why = NULL;
	if (endpoint == NULL)
		endpoint = (mode && pg_strcasecmp(mode, "IPv6") == 0) ? IMDS_IPV6_URL : IMDS_IPV4_URL;
	base = pstrdup(endpoint);
	len = strlen(base);
	while (len > 0 && base[len - 1] == '/')
		base[--len] = '\0';
	*endpoint_out = base;
	if (!fs_http_url_check(base, &https, &local, &bad))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS_EC2_METADATA_SERVICE_ENDPOINT cannot be used: %s", bad)));
	if (!https && !local)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("AWS_EC2_METADATA_SERVICE_ENDPOINT \"%s\" must use https, or http with a loopback or link-local host",
						base)));
	if (timeout_s)
	{
		char	   *end;
		long		t = strtol(timeout_s, &end, 10);

		if (*end != '\0' || t < 1 || t > 60)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("AWS_METADATA_SERVICE_TIMEOUT must be a whole number of seconds from 1 to 60")));
		timeout_ms = t * 1000;
	}

	/* 1. the session token */
	url = psprintf("%s/latest/api/token", base);
	if (!imds_request("PUT", url, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL,
					  timeout_ms, &resp))
	{
		*why = psprintf("no session token: %s", resp.error);
		return NULL;
	}
	if (resp.status != 200 || !plain_token(resp.body, 4096))
	{
		*why = resp.status != 200
			? psprintf("no session token: PUT /latest/api/token answered HTTP status %ld", resp.status)
			: "no session token: PUT /latest/api/token answered something that is not a token";
		wipe_free(resp.body);
		return NULL;
	}
	token_line = psprintf("X-aws-ec2-metadata-token: %s", resp.body);
	wipe_free(resp.body);

	PG_TRY();
	{
		c = imds_role_credentials(base, token_line, timeout_ms, why);
	}
	PG_FINALLY();
	{
		wipe_free(token_line);
	}
	PG_END_TRY();
	return c;
}

/* -------------------------------------------------------------- chain */

/* Cached credentials of this source that have not expired yet, or NULL. */
static FsAwsCredentials *
still_valid(FsAwsCredentialSource source, TimestampTz now)
{
	if (current && current->expires && current->source == source && now < current->expires_at)
		return current;
	return NULL;
}

static const FsAwsCredentials *
use_fetched(FsAwsCredentials *fresh)
{
	ereport(DEBUG1,
			(errmsg_internal("fairshare: fetched AWS credentials from %s (%s), expiring at %s, refresh from %s",
							 fs_aws_source_name(fresh->source), fresh->origin,
							 fs_aws_iso8601(fresh->expires_at), fs_aws_iso8601(fresh->refresh_at))));
	return install(fresh);
}

/*
 * A refresh failed but the cached credentials are still good: use them on,
 * and try again in at most 10 seconds (sooner when they expire sooner).
 */
static const FsAwsCredentials *
use_cached_after_failure(FsAwsCredentials *cached, const char *where,
						 const char *why, TimestampTz now)
{
	ereport(WARNING,
			(errcode(ERRCODE_CONNECTION_FAILURE),
			 errmsg("could not refresh AWS credentials from %s \"%s\": %s",
					fs_aws_source_name(cached->source), where, why),
			 errdetail("Using the cached credentials until they expire at %s.",
					   fs_aws_iso8601(cached->expires_at))));
	cached->refresh_at = now + Min(10 * USECS_PER_SEC, (cached->expires_at - now) / 2);
	return cached;
}

const FsAwsCredentials *
fs_aws_get_credentials(void)
{
	StringInfoData tried;
	FsAwsCredentials *fresh;
	FsAwsCredentials *cached;
	TimestampTz now;
	bool		configured;
	char	   *where = NULL;
	const char *why = NULL;
	const char *disabled;

	initStringInfo(&tried);
	if ((fresh = from_environment(&tried)) != NULL)
		return install(fresh);
	if ((fresh = from_shared_file(&tried)) != NULL)
		return install(fresh);

	now = GetCurrentTimestamp();
	if (current && current->expires && now < current->refresh_at)
		return current;

	fresh = from_container(&configured, &where, &why);
	if (fresh)
		return use_fetched(fresh);
	if (configured)
	{
		if ((cached = still_valid(FS_AWS_SOURCE_CONTAINER, now)) != NULL)
			return use_cached_after_failure(cached, where, why, now);
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not get AWS credentials from the container endpoint \"%s\": %s",
						where, why),
				 errhint("Check AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI and the authorization token in the server's environment.")));
	}
	appendStringInfoString(&tried, "; container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and AWS_CONTAINER_CREDENTIALS_FULL_URI are not set");

	disabled = env("AWS_EC2_METADATA_DISABLED");
	if (disabled && pg_strcasecmp(disabled, "true") == 0)
		appendStringInfoString(&tried, "; EC2 instance metadata: disabled by AWS_EC2_METADATA_DISABLED");
	else
	{
		fresh = from_imds(&where, &why);
		if (fresh)
			return use_fetched(fresh);
		if ((cached = still_valid(FS_AWS_SOURCE_IMDS, now)) != NULL)
			return use_cached_after_failure(cached, where, why, now);
		appendStringInfo(&tried, "; EC2 instance metadata at \"%s\": %s", where, why);
	}

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no AWS credentials found"),
			 errdetail("Tried %s.", tried.data),
			 errhint("Give the server AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in its environment, a shared credentials file its operating-system user can read, or an IAM role through the container or EC2 instance metadata endpoints.")));
	return NULL;				/* keep compiler quiet */
}

bool
fs_aws_valid_region(const char *region)
{
	const char *p = region;
	int			parts = 0;

	/* two letters, then one or more "-letters" parts, then "-digits" */
	if (strlen(region) > 64 || !(p[0] >= 'a' && p[0] <= 'z') || !(p[1] >= 'a' && p[1] <= 'z'))
		return false;
	p += 2;
	while (p[0] == '-' && p[1] >= 'a' && p[1] <= 'z')
	{
		for (p++; *p >= 'a' && *p <= 'z'; p++)
			;
		parts++;
	}
	if (parts == 0 || p[0] != '-' || !(p[1] >= '0' && p[1] <= '9'))
		return false;
	for (p++; *p >= '0' && *p <= '9'; p++)
		;
	return *p == '\0';
}

const char *
fs_aws_region(void)
{
	if (fairshare_region && fairshare_region[0])
		return fairshare_region;
	if (env("AWS_REGION"))
		return env("AWS_REGION");
	return env("AWS_DEFAULT_REGION");
}
