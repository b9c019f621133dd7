/*-------------------------------------------------------------------------
 *
 * credentials.h
 *		The AWS credential chain and region resolution, server side.
 *
 * Sources, first found wins (as the AWS SDKs' default chain):
 *	 1. environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 *		AWS_SESSION_TOKEN of the server process;
 *	 2. shared credentials file: AWS_SHARED_CREDENTIALS_FILE, else
 *		~/.aws/credentials of the server's OS user; profile AWS_PROFILE, else
 *		"default";
 *	 3. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
 *		(against http://169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI,
 *		with AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
 *		AWS_CONTAINER_AUTHORIZATION_TOKEN as the Authorization header;
 *	 4. EC2 instance metadata, IMDSv2 only (AWS_EC2_METADATA_DISABLED=true
 *		skips it; AWS_EC2_METADATA_SERVICE_ENDPOINT moves it).
 * Temporary credentials (3 and 4) are cached in the process and fetched
 * again before they expire; see credentials.c for the timing.
 *
 * Nothing here may ever log, report or store a secret access key, session
 * token, or authorization token: messages name sources, files, variables
 * and URLs only.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_CREDENTIALS_H
#define FAIRSHARE_CREDENTIALS_H

#include "datatype/timestamp.h"

typedef enum FsAwsCredentialSource
{
	FS_AWS_SOURCE_ENVIRONMENT,
	FS_AWS_SOURCE_SHARED_FILE,
	FS_AWS_SOURCE_CONTAINER,
	FS_AWS_SOURCE_IMDS
} FsAwsCredentialSource;

typedef struct FsAwsCredentials
{
	FsAwsCredentialSource source;
	char	   *access_key_id;
	char	   *secret_access_key;
	char	   *session_token;	/* NULL when there is none */
	bool		expires;		/* false for long-term keys */
	TimestampTz expires_at;		/* when expires */
	TimestampTz refresh_at;		/* fetch again from this time on */
	char	   *origin;			/* profile name, or endpoint URL; no secret */
} FsAwsCredentials;

/*
 * The credentials to sign with now.  The result lives in TopMemoryContext
 * and stays valid until the next call (which may replace it); copy what you
 * need.  Raises ERROR when no source has credentials, when a configured
 * source is broken, or when cached credentials expired and cannot be
 * refreshed.  It may wait on the network (interruptibly, a few seconds at
 * most) and pallocs scratch memory in CurrentMemoryContext: the dispatcher
 * should call it outside its transactions, in a short-lived context.
 */
extern const FsAwsCredentials *fs_aws_get_credentials(void);

/*
 * The credentials fs_aws_get_credentials() would return now if that needs
 * no work: the ones it returned last, while they need no refresh; NULL
 * otherwise.  Never raises, never waits, allocates nothing -- for code
 * that must not (the SageMaker client's pump, run inside a scheduling
 * pass).  Valid until the next fs_aws_get_credentials() or forget.
 */
extern const FsAwsCredentials *fs_aws_credentials_without_fetch(void);

/* Forget cached credentials, e.g. after AWS answered ExpiredToken. */
extern void fs_aws_forget_credentials(void);

/* "environment", "shared_file", "container" or "imds". */
extern const char *fs_aws_source_name(FsAwsCredentialSource source);

/* t as ISO 8601 in UTC, "2025-01-31T12:00:00Z"; palloc'd. */
extern char *fs_aws_iso8601(TimestampTz t);

/*
 * The region to use: fairshare.region, else AWS_REGION, else
 * AWS_DEFAULT_REGION; NULL when none is set.
 */
extern const char *fs_aws_region(void);

/*
 * An AWS region name: two letters, one or more "-letters" parts and a
 * "-digits" part ("us-east-1", "us-gov-west-1", "eu-isoe-west-1").  It
 * becomes part of the default endpoint's host name and of every signature.
 */
extern bool fs_aws_valid_region(const char *region);

#endif							/* FAIRSHARE_CREDENTIALS_H */
