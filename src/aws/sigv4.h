/*-------------------------------------------------------------------------
 *
 * sigv4.h
 *		AWS Signature Version 4 for one HTTP request: a pure function.
 *
 * This is plain C on OpenSSL, with no PostgreSQL dependency, so that the
 * dispatcher, the SQL function fairshare.sigv4_sign() and a standalone test
 * program can all call the same code.  It never reads the clock, the
 * environment or any file: the caller passes the timestamp and the keys.
 *
 * The canonical request is built exactly as botocore's SigV4Auth builds it
 * (botocore/auth.py), which is what AWS services and our emulator check:
 *	 - the path has its dot segments and empty segments removed and is then
 *	   percent-encoded once more (so "%2F" is signed as "%252F"), except for
 *	   service "s3", whose path is signed exactly as given and which also
 *	   gets an X-Amz-Content-SHA256 header (botocore's S3SigV4Auth);
 *	 - the query string of the URL is split on '&' and '=' and sorted by key
 *	   then value, but not re-encoded: the URL must already carry the
 *	   encoding it is sent with;
 *	 - header names are lower-cased, values trimmed with runs of white space
 *	   collapsed to one space, repeated names joined with ',' in the order
 *	   given; user-agent, expect and x-amzn-trace-id are not signed; host is
 *	   taken from the URL unless the caller gives a Host header;
 *	 - a caller's Authorization and X-Amz-Date are replaced, and so is its
 *	   X-Amz-Security-Token when a session token is given;
 *	 - the payload hash is the SHA-256 of the body unless the caller gives an
 *	   X-Amz-Content-SHA256 header, whose value is then used as is.  No such
 *	   header is added except for s3.
 * Input botocore would sign but we refuse, with FS_SIGV4_INVALID_*: a Date
 * header (botocore then signs a Date instead of X-Amz-Date), user
 * information in the URL, control characters or invalid UTF-8 anywhere.
 *
 * Never put a secret (the secret access key, the session token, a derived
 * key) into an error message: messages name the argument that is wrong,
 * never its value.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SIGV4_H
#define FAIRSHARE_SIGV4_H

#include <stddef.h>
#include <time.h>

/* Length of an X-Amz-Date value, YYYYMMDDTHHMMSSZ, without the NUL. */
#define FS_SIGV4_AMZ_DATE_LEN	16

typedef struct FsSigV4Header
{
	const char *name;
	const char *value;
} FsSigV4Header;

typedef struct FsSigV4Request
{
	const char *method;			/* e.g. "POST"; upper-cased for signing */
	const char *url;			/* http:// or https:// absolute URL */
	const FsSigV4Header *headers;	/* in order; a name may repeat */
	size_t		nheaders;
	const unsigned char *body;	/* may be NULL when body_len is 0 */
	size_t		body_len;
	const char *region;			/* e.g. "us-east-1" */
	const char *service;		/* e.g. "sagemaker" */
	const char *amz_date;		/* UTC, YYYYMMDDTHHMMSSZ */
} FsSigV4Request;

typedef struct FsSigV4Credentials
{
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token;	/* NULL or "" when there is none */
} FsSigV4Credentials;

/*
 * The headers the caller must set on the request (replacing any header of
 * the same name, whatever its case), and the intermediate strings for tests
 * and debugging.  All strings are malloc'd; free with fs_sigv4_result_free.
 * canonical_request and string_to_sign hold no secret; security_token does.
 */
typedef struct FsSigV4Result
{
	char	   *authorization;	/* Authorization */
	char	   *amz_date;		/* X-Amz-Date */
	char	   *security_token; /* X-Amz-Security-Token, or NULL */
	char	   *content_sha256; /* X-Amz-Content-SHA256 (s3 only), or NULL */
	char	   *host;			/* the host value that was signed */
	char	   *signed_headers;
	char	   *canonical_request;
	char	   *string_to_sign;
	char		signature[65];
} FsSigV4Result;

typedef enum FsSigV4Status
{
	FS_SIGV4_OK = 0,
	FS_SIGV4_INVALID_ARGUMENT,	/* method, region, service, keys, token */
	FS_SIGV4_INVALID_URL,
	FS_SIGV4_INVALID_HEADER,
	FS_SIGV4_INVALID_DATE,
	FS_SIGV4_OUT_OF_MEMORY,
	FS_SIGV4_CRYPTO_FAILURE		/* an OpenSSL call failed */
} FsSigV4Status;

/* Sign req with cred; on failure fills errbuf and leaves *result zeroed. */
extern FsSigV4Status fs_sigv4_sign(const FsSigV4Request *req,
								   const FsSigV4Credentials *cred,
								   FsSigV4Result *result,
								   char *errbuf, size_t errbuf_len);

/* Free (and wipe) what fs_sigv4_sign put into *result; safe on zeroed. */
extern void fs_sigv4_result_free(FsSigV4Result *result);

/* Format t (UTC) as YYYYMMDDTHHMMSSZ into out[17]; false if out of range. */
extern int	fs_sigv4_format_amz_date(time_t t, char *out);

/* Check an X-Amz-Date value: format and a real calendar date. */
extern int	fs_sigv4_valid_amz_date(const char *amz_date);

/* Lower-case hex SHA-256 of data into out[65]; false if OpenSSL fails. */
extern int	fs_sigv4_sha256_hex(const unsigned char *data, size_t len,
								char *out);

/* Lower-case hex HMAC-SHA256 of msg under key into out[65]; false if OpenSSL fails. */
extern int	fs_sigv4_hmac_sha256_hex(const unsigned char *key, size_t key_len,
									 const char *msg, size_t msg_len, char *out);

#endif							/* FAIRSHARE_SIGV4_H */
