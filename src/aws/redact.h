/*-------------------------------------------------------------------------
 *
 * redact.h
 *		Removing credentials from text that comes back from AWS.
 *
 * AWS quotes what it received when it refuses a request: a signature error
 * carries the canonical request it expected, session token header and all,
 * and an incomplete-signature error echoes the Authorization header.  Any
 * such text that fairshare stores (a job's status_reason, an attempt's
 * reason) or logs goes through fs_aws_redact() first; it is the one place
 * that knows what a credential looks like.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_AWS_REDACT_H
#define FAIRSHARE_AWS_REDACT_H

#include "aws/credentials.h"

/*
 * text with every credential in it replaced: the value after a session
 * token, secret key or Signature= marker by "<redacted>", any AWS access
 * key id by its last four characters behind asterisks, and the secret key
 * and session token of cred (if not NULL) wherever they appear.  Returns
 * text itself (not a copy) when there is nothing to redact, else a
 * palloc'd copy.  Never raises except when out of memory.
 */
extern char *fs_aws_redact(const char *text, const FsAwsCredentials *cred);

/* All but the last four characters of an access key id as '*'. */
extern char *fs_aws_mask_key(const char *key);

#endif							/* FAIRSHARE_AWS_REDACT_H */
