/*-------------------------------------------------------------------------
 *
 * endpoint.c
 *		Which URL and region a SageMaker call goes to (docs/wire.md).
 *
 * URL: the service environment's endpoint_url, else the setting
 * fairshare.endpoint_url, else AWS_ENDPOINT_URL_SAGEMAKER from the server's
 * environment, else https://api.sagemaker.<region>.amazonaws.com.
 * Region: the environment's region, else fs_aws_region() (fairshare.region,
 * AWS_REGION, AWS_DEFAULT_REGION).  The global AWS_ENDPOINT_URL is not
 * consulted: docs/wire.md names the SageMaker-specific variable only, and a
 * server-wide override of every AWS endpoint is too blunt for a service
 * that also talks to the credential endpoints.
 *
 * This file only decides and checks; it never sends anything, never
 * raises for bad input (the caller turns a refusal into a result or an
 * error of its own), and never echoes the user information of a URL
 * (it may hold a password) in a message.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "aws/credentials.h"
#include "aws/http.h"
#include "aws/sagemaker_client.h"
#include "settings.h"

static bool
is_set(const char *s)
{
	return s != NULL && s[0] != '\0';
}

/*
 * The URL for a message: user information (which may hold a password) is
 * replaced by "***".  The authority is what follows "://" up to the first
 * '/', '?' or '#'; its user information ends at its last '@'.
 */
char *
fs_sm_redact_url(const char *url)
{
	const char *auth = strstr(url, "://");
	const char *end;
	const char *at = NULL;
	const char *p;

	if (auth == NULL)
		return pstrdup(url);
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	for (p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (at == NULL)
		return pstrdup(url);
	return psprintf("%.*s***%s", (int) (auth - url), url, at);
}

const char *
fs_sm_endpoint_url_problem(const char *url)
{
	bool		https;
	bool		loopback;
	const char *reason;

	if (!fs_http_url_check_loopback(url, &https, &loopback, &reason))
		return reason;
	if (!https && !loopback)
		return "plain http:// is allowed only to a loopback address (localhost, 127.0.0.0/8, ::1); use https://";
	if (strchr(url, '?') != NULL)
		return "a SageMaker endpoint has no query string";
	return NULL;
}

static bool
has_suffix(const char *s, const char *suffix)
{
	size_t		len = strlen(s);
	size_t		n = strlen(suffix);

	return len > n && strcmp(s + len - n, suffix) == 0;
}

/*
 * Is host one of AWS's SageMaker API endpoints: api.sagemaker.<region>,
 * api-fips.sagemaker.<region>, or an interface VPC endpoint's
 * <id>.api.sagemaker.<region>.vpce, under amazonaws.com or
 * amazonaws.com.cn?  Not any AWS host: anyone can have an API Gateway or
 * a bucket under amazonaws.com, and read the headers sent there.
 */
static bool
is_sagemaker_api_host(const char *host)
{
	if (!has_suffix(host, ".amazonaws.com") && !has_suffix(host, ".amazonaws.com.cn"))
		return false;
	return strncmp(host, "api.sagemaker.", 14) == 0 ||
		strncmp(host, "api-fips.sagemaker.", 19) == 0 ||
		strstr(host, ".api.sagemaker.") != NULL;
}

/* Has url the origin of one of the comma-separated URLs of list? */
static bool
origin_listed(const char *origin, const char *list)
{
	char	   *copy;
	char	   *item;
	char	   *save = NULL;

	if (!is_set(list))
		return false;
	copy = pstrdup(list);
	for (item = strtok_r(copy, ", ", &save); item != NULL; item = strtok_r(NULL, ", ", &save))
	{
		char	   *listed = fs_http_url_origin(item, NULL);

		if (listed != NULL && strcmp(listed, origin) == 0)
			return true;
	}
	return false;
}

const char *
fs_sm_admin_endpoint_url_problem(const char *url)
{
	const char *reason = fs_sm_endpoint_url_problem(url);
	char	   *host;
	char	   *origin;

	if (reason != NULL)
		return reason;
	origin = fs_http_url_origin(url, &host);
	if (origin == NULL)
		return "it is not a valid absolute URL";
	if (strncmp(origin, "https://", 8) == 0 && is_sagemaker_api_host(host))
		return NULL;
	if (origin_listed(origin, fairshare_endpoint_allowlist) ||
		origin_listed(origin, fairshare_endpoint_url) ||
		origin_listed(origin, getenv("AWS_ENDPOINT_URL_SAGEMAKER")))
		return NULL;
	return psprintf("it is not a SageMaker API endpoint of AWS (https://api.sagemaker.<region>.amazonaws.com), "
					"and %s is not in fairshare.endpoint_allowlist", origin);
}

bool
fs_sm_resolve_endpoint(const char *env_endpoint_url, const char *env_region,
					   char **url, char **region, const char **url_source,
					   char **why)
{
	const char *u;
	const char *src;
	const char *r;
	const char *reason;

	*url = NULL;
	*region = NULL;
	*url_source = NULL;
	*why = NULL;

	r = is_set(env_region) ? env_region : fs_aws_region();
	if (!is_set(r))
	{
		*why = pstrdup("no AWS region is configured: set the service environment's region, fairshare.region, or AWS_REGION in the server's environment");
		return false;
	}
	if (!fs_aws_valid_region(r))
	{
		*why = psprintf("\"%s\" is not a valid AWS region name, such as us-east-1", r);
		return false;
	}

	if (is_set(env_endpoint_url))
	{
		u = env_endpoint_url;
		src = "service environment";
	}
	else if (is_set(fairshare_endpoint_url))
	{
		u = fairshare_endpoint_url;
		src = "fairshare.endpoint_url";
	}
	else if (is_set(getenv("AWS_ENDPOINT_URL_SAGEMAKER")))
	{
		u = getenv("AWS_ENDPOINT_URL_SAGEMAKER");
		src = "AWS_ENDPOINT_URL_SAGEMAKER";
	}
	else
	{
		*url = psprintf("https://api.sagemaker.%s.amazonaws.com", r);
		*region = pstrdup(r);
		*url_source = "regional default";
		return true;
	}

	if ((reason = fs_sm_endpoint_url_problem(u)) != NULL)
	{
		*why = psprintf("SageMaker endpoint \"%s\" (from %s) is refused: %s",
						fs_sm_redact_url(u), src, reason);
		return false;
	}
	*url = pstrdup(u);
	*region = pstrdup(r);
	*url_source = src;
	return true;
}
