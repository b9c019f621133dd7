/*-------------------------------------------------------------------------
 *
 * api_auth.c
 *		SigV4 verification of an AWS Batch API request.
 *
 * A request is authentic when the signature in its Authorization header is
 * the one our own signer (src/aws/sigv4.c, which agrees with botocore byte
 * for byte) computes for the same request with the key's secret: same
 * method, path as sent, query, the headers the client says it signed, the
 * body, its X-Amz-Date, the server's region (api_call.c) and service
 * "batch".
 * Signatures are compared in constant time (CRYPTO_memcmp).
 *
 * Plain C on OpenSSL, no PostgreSQL calls: it never raises, and it never
 * puts the secret, a derived key or a signature we computed into a
 * message -- messages say what is wrong, never what the right value is.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>

#include "api/api.h"
#include "aws/sigv4.h"

#define MAX_SIGNED_HEADERS 32

const char *
fairshare_api_header(const FsApiRequest *req, const char *name)
{
	for (int i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->header_names[i], name) == 0)
			return req->header_values[i];
	return NULL;
}

/* Copy the value after "key=" up to a comma into out; false if absent/too long. */
static bool
auth_field(const char *auth, const char *key, char *out, size_t outlen)
{
	size_t		klen = strlen(key);
	const char *p = auth;

	while ((p = strstr(p, key)) != NULL)
	{
		/* the key must start a field: after the scheme's space or a comma */
		if ((p == auth || p[-1] == ' ' || p[-1] == ',') && p[klen] == '=')
		{
			const char *v = p + klen + 1;
			size_t		n = strcspn(v, ", ");

			if (n == 0 || n >= outlen)
				return false;
			memcpy(out, v, n);
			out[n] = '\0';
			return true;
		}
		p += klen;
	}
	return false;
}

/* YYYYMMDDTHHMMSSZ to seconds since the epoch; -1 if malformed. */
static long
amz_date_epoch(const char *d)
{
	struct tm	tm;

	if (!fs_sigv4_valid_amz_date(d))
		return -1;
	memset(&tm, 0, sizeof(tm));
	if (sscanf(d, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			   &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long) timegm(&tm);
}

FsApiAuthStatus
fairshare_api_parse_auth(const FsApiRequest *req, FsApiAuth *auth, const char *region,
						 long now_epoch, char *why, size_t why_len)
{
	const char *header = fairshare_api_header(req, "Authorization");
	const char *amz_date = fairshare_api_header(req, "X-Amz-Date");
	char		credential[512];
	char	   *parts[5];
	char	   *p;
	long		t;

	memset(auth, 0, sizeof(*auth));
	if (fairshare_api_header(req, "X-Amz-Security-Token") != NULL)
	{
		snprintf(why, why_len, "fairshare API keys are long-term keys: the x-amz-security-token header "
				 "(temporary credentials) is not supported; sign with a key from fairshare.create_api_key() and no session token");
		return FS_API_AUTH_TOKEN;
	}
	if (header == NULL || strncmp(header, "AWS4-HMAC-SHA256 ", 17) != 0)
	{
		snprintf(why, why_len, "the request is not signed: an Authorization header with AWS4-HMAC-SHA256 (SigV4) is required");
		return FS_API_AUTH_MISSING;
	}
	if (!auth_field(header, "Credential", credential, sizeof(credential)) ||
		!auth_field(header, "SignedHeaders", auth->signed_headers, sizeof(auth->signed_headers)) ||
		!auth_field(header, "Signature", auth->signature, sizeof(auth->signature)))
	{
		snprintf(why, why_len, "the Authorization header lacks Credential, SignedHeaders or Signature");
		return FS_API_AUTH_MISSING;
	}
	/* AKID/date/region/service/aws4_request */
	p = credential;
	for (int i = 0; i < 5; i++)
	{
		parts[i] = p;
		p = strchr(p, '/');
		if (i < 4)
		{
			if (p == NULL)
			{
				snprintf(why, why_len, "the Authorization header's Credential is not access-key/date/region/service/aws4_request");
				return FS_API_AUTH_MISSING;
			}
			*p++ = '\0';
		}
		else if (p != NULL)
		{
			snprintf(why, why_len, "the Authorization header's Credential is not access-key/date/region/service/aws4_request");
			return FS_API_AUTH_MISSING;
		}
	}
	if (strlen(parts[0]) == 0 || strlen(parts[0]) >= sizeof(auth->access_key_id))
	{
		snprintf(why, why_len, "the Authorization header names no valid access key");
		return FS_API_AUTH_MISSING;
	}
	strcpy(auth->access_key_id, parts[0]);
	if (strlen(parts[1]) != 8 || strlen(parts[2]) >= sizeof(auth->scope_region) ||
		strlen(parts[3]) >= sizeof(auth->scope_service) || strcmp(parts[4], "aws4_request") != 0)
	{
		snprintf(why, why_len, "the credential scope is malformed");
		return FS_API_AUTH_BAD_SCOPE;
	}
	strcpy(auth->scope_date, parts[1]);
	strcpy(auth->scope_region, parts[2]);
	strcpy(auth->scope_service, parts[3]);

	if (amz_date == NULL || (t = amz_date_epoch(amz_date)) < 0)
	{
		snprintf(why, why_len, "the X-Amz-Date header is missing or is not YYYYMMDDTHHMMSSZ");
		return FS_API_AUTH_STALE;
	}
	strcpy(auth->amz_date, amz_date);
	if (labs(now_epoch - t) > FS_API_MAX_CLOCK_SKEW_S)
	{
		snprintf(why, why_len, "Signature expired: X-Amz-Date %s is more than 15 minutes from the server's time; check the client's clock",
				 amz_date);
		return FS_API_AUTH_STALE;
	}
	if (strncmp(auth->scope_date, amz_date, 8) != 0)
	{
		snprintf(why, why_len, "the credential scope's date is not the date of X-Amz-Date");
		return FS_API_AUTH_BAD_SCOPE;
	}
	if (strcmp(auth->scope_region, region) != 0)
	{
		snprintf(why, why_len, "Credential should be scoped to a valid region: this server signs for region \"%s\", not \"%s\"",
				 region, auth->scope_region);
		return FS_API_AUTH_BAD_SCOPE;
	}
	if (strcmp(auth->scope_service, "batch") != 0)
	{
		snprintf(why, why_len, "Credential should be scoped to the correct service: \"batch\", not \"%s\"",
				 auth->scope_service);
		return FS_API_AUTH_BAD_SCOPE;
	}
	if (strlen(auth->signature) != 64 || strspn(auth->signature, "0123456789abcdef") != 64)
	{
		snprintf(why, why_len, "the signature is not 64 lower-case hex digits");
		return FS_API_AUTH_BAD_SIGNATURE;
	}
	return FS_API_AUTH_OK;
}

FsApiAuthStatus
fairshare_api_verify_signature(const FsApiRequest *req, const FsApiAuth *auth, const char *region,
							   const char *secret, char *why, size_t why_len)
{
	FsSigV4Header headers[MAX_SIGNED_HEADERS * 2];
	size_t		nheaders = 0;
	char		names[sizeof(auth->signed_headers)];
	char	   *name;
	char	   *save = NULL;
	char	   *url;
	size_t		url_len;
	bool		has_host = false;
	FsSigV4Request sreq;
	FsSigV4Credentials cred;
	FsSigV4Result result;
	FsSigV4Status st;
	char		errbuf[256];
	bool		match;
	const char *content_sha;

	strcpy(names, auth->signed_headers);
	for (name = strtok_r(names, ";", &save); name != NULL; name = strtok_r(NULL, ";", &save))
	{
		bool		found = false;

		if (strcmp(name, "host") == 0)
			has_host = true;
		for (int i = 0; i < req->nheaders; i++)
		{
			if (strcasecmp(req->header_names[i], name) != 0)
				continue;
			if (nheaders >= MAX_SIGNED_HEADERS * 2)
			{
				snprintf(why, why_len, "too many signed headers");
				return FS_API_AUTH_BAD_SIGNATURE;
			}
			headers[nheaders].name = name;
			headers[nheaders].value = req->header_values[i];
			nheaders++;
			found = true;
		}
		if (!found)
		{
			snprintf(why, why_len, "signed header \"%s\" is not in the request", name);
			return FS_API_AUTH_BAD_SIGNATURE;
		}
	}
	if (!has_host)
	{
		snprintf(why, why_len, "the host header must be signed");
		return FS_API_AUTH_BAD_SIGNATURE;
	}

	/*
	 * A signed X-Amz-Content-SHA256 replaces the body's hash in the
	 * signature: it must then be the hash of the body we got, or a signed
	 * request could carry another body.
	 */
	content_sha = fairshare_api_header(req, "X-Amz-Content-SHA256");
	if (content_sha != NULL)
	{
		char		actual[65];

		if (!fs_sigv4_sha256_hex((const unsigned char *) req->body, req->body_len, actual) ||
			strcmp(actual, content_sha) != 0)
		{
			snprintf(why, why_len, "X-Amz-Content-SHA256 is not the SHA-256 of the body");
			return FS_API_AUTH_BAD_SIGNATURE;
		}
	}

	url_len = strlen(req->scheme) + strlen(req->host) + strlen(req->raw_path) + strlen(req->raw_query) + 16;
	url = malloc(url_len);
	if (url == NULL)
	{
		snprintf(why, why_len, "out of memory");
		return FS_API_AUTH_BAD_SIGNATURE;
	}
	snprintf(url, url_len, "%s://%s%s%s%s", req->scheme, req->host[0] ? req->host : "localhost",
			 req->raw_path, req->raw_query[0] ? "?" : "", req->raw_query);

	memset(&sreq, 0, sizeof(sreq));
	sreq.method = req->method;
	sreq.url = url;
	sreq.headers = headers;
	sreq.nheaders = nheaders;
	sreq.body = (const unsigned char *) req->body;
	sreq.body_len = req->body_len;
	sreq.region = region;
	sreq.service = "batch";
	sreq.amz_date = auth->amz_date;
	memset(&cred, 0, sizeof(cred));
	cred.access_key_id = auth->access_key_id;
	cred.secret_access_key = secret;
	cred.session_token = NULL;

	st = fs_sigv4_sign(&sreq, &cred, &result, errbuf, sizeof(errbuf));
	free(url);
	if (st != FS_SIGV4_OK)
	{
		/* errbuf names the argument at fault, never a secret (sigv4.h) */
		snprintf(why, why_len, "the request cannot be signed as sent: %s", errbuf);
		return FS_API_AUTH_BAD_SIGNATURE;
	}
	/* Same signed headers, or the signature cannot match anyway. */
	match = strcmp(result.signed_headers, auth->signed_headers) == 0 &&
		CRYPTO_memcmp(result.signature, auth->signature, 64) == 0;
	fs_sigv4_result_free(&result);
	if (!match)
	{
		snprintf(why, why_len, "The request signature we calculated does not match the signature you provided. "
				 "Check your AWS Secret Access Key and signing method.");
		return FS_API_AUTH_BAD_SIGNATURE;
	}
	return FS_API_AUTH_OK;
}
