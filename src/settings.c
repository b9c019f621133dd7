/*-------------------------------------------------------------------------
 *
 * settings.c
 *		The fairshare.* settings: their variables, checks and definitions.
 *
 * No setting is PGC_POSTMASTER, so every one of them can be defined whether
 * the library is preloaded (shared_preload_libraries) or loaded on first use
 * by a backend; defining a postmaster-only setting after start-up would be an
 * error.  Worker-only settings are PGC_SIGHUP; the ones a scheduling pass
 * reads are PGC_SUSET so a superuser can try them in one session.
 *
 * A new setting: its variable below, its extern in settings.h, its
 * Define...Variable in fairshare_define_settings (or in a function of its
 * own that fairshare_define_settings calls, for a group of them).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <ctype.h>

#include "aws/credentials.h"
#include "api/api.h"
#include "aws/sagemaker_client.h"
#include "settings.h"

char	   *fairshare_database = NULL;
int			fairshare_poll_interval_ms = 5000;
int			fairshare_max_concurrent_requests = 16;
int			fairshare_api_rate_limit = 20;
char	   *fairshare_job_name_prefix = NULL;
int			fairshare_create_retry_limit = 10;
int			fairshare_create_retry_timeout_s = 1800;
int			fairshare_orphan_sweep_interval_s = 600;
char	   *fairshare_region = NULL;
char	   *fairshare_endpoint_url = NULL;
char	   *fairshare_endpoint_allowlist = NULL;
int			fairshare_preemption_min_runtime_s = 0;
int			fairshare_capacity_backoff_s = 600;
int			fairshare_starvation_seconds = 3600;
int			fairshare_backfill_allowance_s = 1800;
int			fairshare_checkpoint_interval_s = 1800;
bool		fairshare_checkpoint_on_stop = false;
bool		fairshare_drop_with_placed_jobs = false;
bool		fairshare_require_role_arn_grant = false;
bool		fairshare_require_share_grant = false;
int			fairshare_reclaim_wait_s = 0;
int			fairshare_retention_s = 30 * 86400;
int			fairshare_api_port = 0;
char	   *fairshare_api_listen_addresses = NULL;
char	   *fairshare_api_tls_cert_file = NULL;
char	   *fairshare_api_tls_key_file = NULL;
char	   *fairshare_api_account_id = NULL;
int			fairshare_api_max_body_size = 64 * 1024;
int			fairshare_api_max_header_size = 16 * 1024;
int			fairshare_api_max_connections = 64;
int			fairshare_api_idle_timeout_s = 30;
int			fairshare_api_key_requests_per_second = 200;
int			fairshare_api_workers = 0;

/*
 * Training job names are prefix || installation || '-' || job_id || '-' ||
 * attempt (src/tables/installation.c) and must match SageMaker's
 * [a-zA-Z0-9](-*[a-zA-Z0-9])* in at most 63 characters; keeping the prefix
 * to FAIRSHARE_JOB_NAME_PREFIX_MAX characters leaves room for the
 * installation's 8 hex digits, any job id and attempt.
 */
static bool
check_job_name_prefix(char **newval, void **extra, GucSource source)
{
	const char *p = *newval;
	size_t		len = strlen(p);

	if (len == 0 || len > FAIRSHARE_JOB_NAME_PREFIX_MAX)
	{
		GUC_check_errmsg("fairshare.job_name_prefix must be 1 to %d characters long",
						 FAIRSHARE_JOB_NAME_PREFIX_MAX);
		return false;
	}
	if (!isalnum((unsigned char) p[0]))
	{
		GUC_check_errmsg("fairshare.job_name_prefix must start with a letter or digit");
		return false;
	}
	for (; *p; p++)
	{
		if (!isalnum((unsigned char) *p) && *p != '-')
		{
			GUC_check_errmsg("fairshare.job_name_prefix may contain only letters, digits and hyphens");
			return false;
		}
	}
	return true;
}

/*
 * The endpoint is readable by every user, so it must not carry credentials;
 * it is checked by the rule the sender applies (fs_sm_endpoint_url_problem),
 * so that a value the sender would refuse is refused here, at SET.
 */
static bool
check_endpoint_url(char **newval, void **extra, GucSource source)
{
	const char *why;

	if ((*newval)[0] == '\0')
		return true;
	if ((why = fs_sm_endpoint_url_problem(*newval)) != NULL)
	{
		GUC_check_errmsg("fairshare.endpoint_url is refused: %s", why);
		GUC_check_errhint("Use https://host[:port] (plain http only to 127.0.0.1, localhost or [::1]), "
						  "with no user name, password, query or fragment; empty means the default.");
		return false;
	}
	return true;
}

/* Each entry of the allow-list is a URL the sender would accept. */
static bool
check_endpoint_allowlist(char **newval, void **extra, GucSource source)
{
	char	   *copy = pstrdup(*newval);
	char	   *item;
	char	   *save = NULL;
	const char *why;

	for (item = strtok_r(copy, ", ", &save); item != NULL; item = strtok_r(NULL, ", ", &save))
		if ((why = fs_sm_endpoint_url_problem(item)) != NULL)
		{
			GUC_check_errmsg("fairshare.endpoint_allowlist is refused: \"%s\": %s", fs_sm_redact_url(item), why);
			GUC_check_errhint("List endpoint URLs, such as https://sagemaker.example.net or http://127.0.0.1:9000, separated by commas.");
			return false;
		}
	return true;
}

/* The region goes into host names and signatures: a region name or empty. */
static bool
check_region(char **newval, void **extra, GucSource source)
{
	if ((*newval)[0] != '\0' && !fs_aws_valid_region(*newval))
	{
		GUC_check_errmsg("\"%s\" is not an AWS region name", *newval);
		GUC_check_errhint("Use a name such as us-east-1, or empty for AWS_REGION / AWS_DEFAULT_REGION.");
		return false;
	}
	return true;
}

/* An empty name would make the dispatcher fail to connect every two seconds. */
static bool
check_database(char **newval, void **extra, GucSource source)
{
	size_t		len = strlen(*newval);

	if (len == 0 || len >= NAMEDATALEN)
	{
		GUC_check_errmsg("fairshare.database must be a database name of 1 to %d bytes", NAMEDATALEN - 1);
		return false;
	}
	return true;
}

/* An AWS account id: twelve digits, as in every ARN the API hands out. */
static bool
check_api_account_id(char **newval, void **extra, GucSource source)
{
	const char *p = *newval;

	if (strlen(p) != 12 || strspn(p, "0123456789") != 12)
	{
		GUC_check_errmsg("fairshare.api_account_id must be twelve digits");
		GUC_check_errhint("It appears in the ARNs of the AWS Batch API, e.g. 000000000000.");
		return false;
	}
	return true;
}

/* The API's listen addresses: IP literals, localhost or *, comma-separated. */
static bool
check_api_listen_addresses(char **newval, void **extra, GucSource source)
{
	const char *why = fairshare_api_listen_addresses_problem(*newval);

	if (why != NULL)
	{
		GUC_check_errmsg("fairshare.api_listen_addresses is refused: %s", why);
		GUC_check_errhint("Give IP addresses, localhost or *, separated by commas, e.g. '127.0.0.1, ::1'.");
		return false;
	}
	return true;
}

void
fairshare_define_settings(void)
{
	DefineCustomStringVariable("fairshare.database",
							   "Database the fairshare dispatcher connects to.",
							   "Changing it restarts the dispatcher.",
							   &fairshare_database, "postgres",
							   PGC_SIGHUP, 0, check_database, NULL, NULL);

	/* Below 100 ms a dispatcher with nothing to do spins more than it waits. */
	DefineCustomIntVariable("fairshare.poll_interval",
							"How often the dispatcher polls SageMaker when nothing wakes it.",
							NULL,
							&fairshare_poll_interval_ms, 5000, 100, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.max_concurrent_requests",
							"Most SageMaker API requests the dispatcher has in flight at once.",
							NULL,
							&fairshare_max_concurrent_requests, 16, 1, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_rate_limit",
							"Most SageMaker API requests the dispatcher starts per second.",
							NULL,
							&fairshare_api_rate_limit, 20, 1, 100000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("fairshare.job_name_prefix",
							   "Prefix of the SageMaker training job names fairshare creates.",
							   "Names are the prefix, the installation's first 8 hex digits, the job id and the attempt number, joined by hyphens.",
							   &fairshare_job_name_prefix, FAIRSHARE_JOB_NAME_PREFIX_DEFAULT,
							   PGC_SIGHUP, 0, check_job_name_prefix, NULL, NULL);

	DefineCustomStringVariable("fairshare.region",
							   "AWS region of the SageMaker API.",
							   "Empty means AWS_REGION or AWS_DEFAULT_REGION from the server's environment.",
							   &fairshare_region, "",
							   PGC_SIGHUP, 0, check_region, NULL, NULL);

	DefineCustomStringVariable("fairshare.endpoint_url",
							   "SageMaker API endpoint used when a service environment sets none.",
							   "Empty means AWS_ENDPOINT_URL_SAGEMAKER, else the regional endpoint.",
							   &fairshare_endpoint_url, "",
							   PGC_SIGHUP, 0, check_endpoint_url, NULL, NULL);

	DefineCustomStringVariable("fairshare.endpoint_allowlist",
							   "Endpoints besides AWS's own that a service environment may name.",
							   "Comma-separated URLs; an environment's endpoint_url must have the origin "
							   "(scheme, host, port) of one of them, of fairshare.endpoint_url or of "
							   "AWS_ENDPOINT_URL_SAGEMAKER, or be AWS's own https://api.sagemaker.<region>.amazonaws.com.",
							   &fairshare_endpoint_allowlist, "",
							   PGC_SUSET, 0, check_endpoint_allowlist, NULL, NULL);

	DefineCustomIntVariable("fairshare.preemption_min_runtime",
							"Jobs that have run less than this are preempted only when nothing else frees the room.",
							NULL,
							&fairshare_preemption_min_runtime_s, 0, 0, 7 * 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.capacity_backoff",
							"How long a job skips an (environment, instance type) after a capacity failure there.",
							NULL,
							&fairshare_capacity_backoff_s, 600, 0, 7 * 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.starvation_seconds",
							"Wait after which the head job of a queue or share has capacity held for it.",
							NULL,
							&fairshare_starvation_seconds, 3600, 0, 365 * 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.backfill_allowance",
							"Added to a job's time limit for the longest it can hold its instances (startup, stop).",
							"Jobs certain to be gone in time may use room held for a starving job; -1 turns that off.",
							&fairshare_backfill_allowance_s, 1800, -1, 7 * 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	/*
	 * SageMaker's CheckpointConfig says where checkpoints go, not how often a
	 * training script writes them: this is the scheduler's estimate, for the
	 * work a preemption loses (src/scheduler/README.md, "Preemption").
	 */
	DefineCustomIntVariable("fairshare.checkpoint_interval",
							"How often a job whose request has CheckpointConfig is taken to save a checkpoint.",
							"Preemption stops the victims that lose least work first; 0 counts no checkpoints (every victim loses all it ran).",
							&fairshare_checkpoint_interval_s, 1800, 0, 7 * 86400,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	/*
	 * SageMaker's StopTrainingJob gives the script time (SIGTERM, 120 s)
	 * to save; whether it does is the script's, so counting that last
	 * checkpoint is a choice (docs/preemption.md).
	 */
	DefineCustomBoolVariable("fairshare.checkpoint_on_stop",
							 "Whether a preempted job with CheckpointConfig is taken to write a last checkpoint when stopped.",
							 "If on, such a victim is counted as losing only its startup.",
							 &fairshare_checkpoint_on_stop, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	/* tables/drop_guard.c: placed jobs' training jobs would run on unwatched. */
	DefineCustomBoolVariable("fairshare.drop_with_placed_jobs",
							 "Whether DROP EXTENSION fairshare may drop it while jobs are placed.",
							 "Off refuses the drop until no job is SCHEDULED, STARTING or RUNNING.",
							 &fairshare_drop_with_placed_jobs, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	/*
	 * tables/submission.c: what AWS Batch asks of the caller's IAM
	 * permissions, iam:PassRole and batch:ShareIdentifier, per submitter.
	 */
	DefineCustomBoolVariable("fairshare.require_role_arn_grant",
							 "Whether a job may name only a RoleArn that fairshare.role_arn_grants grants to its submitter.",
							 "Off: every submitter may name any RoleArn the dispatcher's AWS principal may pass.",
							 &fairshare_require_role_arn_grant, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("fairshare.require_share_grant",
							 "Whether a job may name only a share that fairshare.share_grants grants to its submitter.",
							 "Off: every submitter may submit under any fair share or quota share of any queue.",
							 &fairshare_require_share_grant, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.reclaim_wait",
							"How long a reclaim waits, holding the room that frees by itself, before it preempts.",
							"0 preempts at once; otherwise only what is still short after the wait is preempted.",
							&fairshare_reclaim_wait_s, 0, 0, 3600,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.create_retry_limit",
							"Most CreateTrainingJob calls without a usable answer an attempt gets before it fails.",
							"Each call is itself retried with backoff; this bounds the calls across dispatcher turns.",
							&fairshare_create_retry_limit, 10, 1, 1000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.create_retry_timeout",
							"Longest an attempt keeps trying to be created after its first CreateTrainingJob.",
							NULL,
							&fairshare_create_retry_timeout_s, 1800, 10, 7 * 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.orphan_sweep_interval",
							"How often the dispatcher sweeps SageMaker for training jobs of this installation that no job knows; 0 turns it off.",
							"It also sweeps when it starts on a primary or is promoted, before its first pass (docs/ha.md).",
							&fairshare_orphan_sweep_interval_s, 600, 0, 7 * 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.retention",
							"How long finished jobs and old events are kept.",
							NULL,
							&fairshare_retention_s, 30 * 86400, 3600, INT_MAX,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	/* The AWS Batch API server (src/api/, docs/api.md). */
	DefineCustomIntVariable("fairshare.api_port",
							"TCP port of the AWS Batch API server; 0 turns it off.",
							NULL,
							&fairshare_api_port, 0, 0, 65535,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("fairshare.api_listen_addresses",
							   "Addresses the AWS Batch API server listens on.",
							   "Any address outside loopback needs fairshare.api_tls_cert_file and fairshare.api_tls_key_file.",
							   &fairshare_api_listen_addresses, "127.0.0.1",
							   PGC_SIGHUP, 0, check_api_listen_addresses, NULL, NULL);

	DefineCustomStringVariable("fairshare.api_tls_cert_file",
							   "PEM certificate (chain) the AWS Batch API server presents; set with api_tls_key_file for HTTPS.",
							   NULL,
							   &fairshare_api_tls_cert_file, "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);

	DefineCustomStringVariable("fairshare.api_tls_key_file",
							   "PEM private key of the AWS Batch API server's certificate.",
							   NULL,
							   &fairshare_api_tls_key_file, "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);

	DefineCustomStringVariable("fairshare.api_account_id",
							   "Account id in the ARNs of the AWS Batch API.",
							   NULL,
							   &fairshare_api_account_id, "000000000000",
							   PGC_SIGHUP, 0, check_api_account_id, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_max_body_size",
							"Largest request body the AWS Batch API server accepts.",
							"A SageMaker payload may be 10 KiB; the rest is the request around it.",
							&fairshare_api_max_body_size, 64 * 1024, 1024, 16 * 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_BYTE, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_max_header_size",
							"Most bytes of request line and headers the AWS Batch API server takes per request.",
							"Larger ones are answered 431 ClientException; beyond four times this, libmicrohttpd answers by itself.",
							&fairshare_api_max_header_size, 16 * 1024, 4096, 1024 * 1024,
							PGC_SIGHUP, GUC_UNIT_BYTE, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_max_connections",
							"Most client connections the AWS Batch API server serves at once.",
							"Beyond it a connection is answered TooManyRequestsException and closed.",
							&fairshare_api_max_connections, 64, 1, 10000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_idle_timeout",
							"The AWS Batch API server closes a connection that sends nothing for this long.",
							NULL,
							&fairshare_api_idle_timeout_s, 30, 1, 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomIntVariable("fairshare.api_key_requests_per_second",
							"Requests per second one API key may make; beyond it TooManyRequestsException (429).",
							"Bursts of up to one second's worth are allowed.",
							&fairshare_api_key_requests_per_second, 200, 1, 1000000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	/*
	 * Background workers are registered when the server starts, so that is
	 * when the number of processes is fixed; a reload to a lower number
	 * idles the ones beyond it (a higher one takes a restart).  Not
	 * PGC_POSTMASTER: see the top of this file.
	 */
	DefineCustomIntVariable("fairshare.api_workers",
							"Processes serving the AWS Batch API, all on the same port; 0 = two per CPU core, at most 4.",
							"Read when the server starts; a reload can lower it, raising it takes a restart.  Each is a background worker: max_worker_processes must leave room for them.",
							&fairshare_api_workers, 0, 0, FS_API_MAX_WORKERS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);

	MarkGUCPrefixReserved("fairshare");
}
