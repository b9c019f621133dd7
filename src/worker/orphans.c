/*-------------------------------------------------------------------------
 *
 * orphans.c
 *		The orphan sweep: training jobs at SageMaker that carry this
 *		installation's tag but that no job of fairshare knows.
 *
 * A failover under asynchronous replication can lose the end of the WAL:
 * placements the old primary committed, and whose training jobs it
 * created, never reach the new primary (docs/ha.md).  Those training jobs
 * run on, billed, and nobody follows them.  fairshare cannot adopt them --
 * the job they belonged to is gone, and another job must never take them
 * over -- but it can find them and say so:
 *
 *	 1. ListTrainingJobs, every page, for names containing this
 *		installation's part of the training job name (created since the
 *		oldest job fairshare still keeps: older ones were forgotten on
 *		purpose, by retention), at every service environment's endpoint and
 *		region, and in every region its attempts recorded (steps 2 and 3
 *		too);
 *	 2. the names no job or attempt of fairshare knows (read after the
 *		listing: a placement is committed before its create is sent, so a
 *		training job that was listed and has a placement shows it here);
 *	 3. ListTags of each of those: kept only when its fairshare:installation
 *		tag is this installation's id (another installation's job with a
 *		similar name is none of our business), its name is the one this
 *		installation gives the job of its fairshare:job-id tag, and its
 *		fairshare:job-submitted tag is signed for that name with this
 *		installation's tag_key -- as every training job the dispatcher
 *		creates is.  The id and the name are no secret: without the
 *		signature, anyone allowed to create training jobs could plant one
 *		that moved the job ids on by as much as they liked (step 5);
 *	 4. fairshare.orphan_sweep is made to hold what was found, each row
 *		keeping when it was first seen (and what an earlier sweep found
 *		where this one did not look);
 *	 5. the job id sequence moves on past the orphans' fairshare:job-id tags,
 *		so that no new job is given a lost job's id -- and with it the lost
 *		job's training job name and, its tags being ours, its training job.
 * fairshare.orphaned_training_jobs shows the rows still unknown to any job;
 * the ORPHANED_TRAINING_JOBS alert rule reports them.
 *
 * When: the dispatcher sweeps on its own, on the node that can write --
 * when it starts dispatching there (at promotion, before its first pass:
 * the job ids must move on before a new job can take a lost one's) and
 * then every fairshare.orphan_sweep_interval (0 turns it off).  It has
 * the credentials that created the training jobs, and runs only where
 * writes are possible.  A sweep that fails is logged (once a minute at
 * most) and tried again an interval later; it never holds up the
 * dispatcher's turns beyond its own calls, whose wait keeps the
 * dispatcher's own calls moving (the progress callback, progress.h).
 * There its statements run in short transactions between the calls, none
 * open while a call is in flight, so a sweep holds no lock while it waits
 * for SageMaker.
 * fairshare.sweep_orphaned_training_jobs() sweeps at once, for an admin.
 *
 * The function is SECURITY DEFINER (the extension's owner writes the table
 * and moves the sequence); every statement names its objects in full.
 * The calls go through the same engine as the dispatcher's, with its
 * retries; a call that still fails ends the sweep with an ERROR that says
 * which (in the dispatcher, a WARNING in the log, as for its other calls),
 * and the table keeps what the last complete sweep found.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/xlog.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"

#include "aws/sagemaker_client.h"
#include "datums.h"
#include "progress.h"
#include "settings.h"
#include "statement.h"
#include "tables/installation.h"
#include "tables/job_status.h"
#include "worker/dispatch.h"
#include "worker/log_throttle.h"
#include "worker/orphans.h"
#include "worker/xact.h"

PG_FUNCTION_INFO_V1(fairshare_sweep_orphaned_training_jobs);

/* How many ListTrainingJobs pages one sweep reads at most (100 jobs each). */
#define SWEEP_MAX_PAGES 1000

static FsSmClient *sweep_client = NULL;

/* Where training jobs were made: one endpoint and region, resolved. */
typedef struct SweepTarget
{
	char	   *url;
	char	   *region;
	/*
	 * Only a region attempts recorded, at their environment's endpoint as
	 * it is now: one that cannot be reached there (a regional endpoint, a
	 * region an account policy closes) is passed over with a WARNING, and
	 * what earlier sweeps found in it is kept; the sweep goes on.
	 */
	bool		best_effort;
	bool		swept;			/* listed, every page and every tag */
} SweepTarget;

/* What one sweep carries from target to target. */
typedef struct Sweep
{
	MemoryContext outer;		/* what the sweep gathers; outlives its transactions */
	MemoryContext loop_cxt;		/* one call's request, answer and SPI rows */
	char		installation[64];
	char		tag_key[65];	/* signs fairshare:job-submitted; never in a message */
	const char *name_part;		/* of this installation's training job names */
	int			n_unsigned;		/* tagged as ours, but not signed by us */
	double		since;			/* CreationTimeAfter, when have_since */
	bool		have_since;
	Datum	   *found;			/* jsonb: {name, arn, status, created, job_id} */
	char	  **found_names;	/* the same, by name: one endpoint may list another's */
	int			n_found;
	int			found_size;
	bool		skipped_target; /* an endpoint could not be swept: keep what it had */
} Sweep;

/*
 * In the dispatcher the sweep runs its statements in short transactions of
 * its own, none of them open while a call is in flight (xact.h): a sweep
 * of many pages would otherwise hold its locks for minutes, and an ALTER
 * waiting behind them would queue every user's query.  Called from SQL, it
 * runs in the caller's transaction, as any function does.
 */
static bool sweep_own_transactions = false;
static const char *const sweep_activity = "fairshare dispatcher: orphan sweep";

/*
 * One call, waited for; an ERROR unless it succeeded -- or, at a
 * best-effort target, a WARNING and NULL.  The answer is allocated in the
 * current memory context, which must outlive the transaction when the
 * sweep runs its own (not SPI's).
 */
static Jsonb *
call(FsSmOperation op, Jsonb *request, const char *what, const SweepTarget *target)
{
	FsSmResult *res = NULL;
	MemoryContext here = CurrentMemoryContext;	/* outlives the transaction */

	if (sweep_own_transactions)
	{
		fairshare_xact_commit();
		MemoryContextSwitchTo(here);
	}

	if (sweep_client == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		sweep_client = fs_sm_client_create();
		MemoryContextSwitchTo(old);
	}
	PG_TRY();
	{
		fs_sm_submit(sweep_client, op, target->url, target->region, request, 0);
		/* In the dispatcher, its own calls keep moving meanwhile (progress.h). */
		while (fs_sm_wait(sweep_client, fairshare_progress_callback ? 10 : -1, &res, 1) == 0)
		{
			/* the latch woke us (an interrupt, most likely), or it is time to pump */
			fairshare_progress();
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		fs_sm_cancel_all(sweep_client);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (sweep_own_transactions)
	{
		fairshare_xact_begin(sweep_activity);
		MemoryContextSwitchTo(here);
	}
	if (res->error_class != FS_SM_OK && target->best_effort)
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("orphan sweep: %s failed in region %s, which only earlier attempts used: %s: %s", what,
						target->region, res->error_type ? res->error_type : "error",
						res->message ? res->message : "no message"),
				 errdetail("HTTP status %ld after %d tries, at %s.", res->http_status, res->tries,
						   fs_sm_redact_url(target->url)),
				 errhint("The other regions were swept; fairshare.orphan_sweep keeps what earlier sweeps found in this one.")));
		return NULL;
	}
	if (res->error_class != FS_SM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("orphan sweep: %s failed: %s: %s", what,
						res->error_type ? res->error_type : "error",
						res->message ? res->message : "no message"),
				 errdetail("HTTP status %ld after %d tries, at %s (%s).", res->http_status, res->tries,
						   fs_sm_redact_url(target->url), target->region),
				 errhint("The sweep is tried again at its next run; fairshare.orphan_sweep keeps what the last complete sweep found.")));
	return res->response;
}

/* The sweep's statements, in the order it runs them. */
static FairshareStatement oldest_job_stmt = {
	.what = "read when the oldest job was created",
	.sql = "SELECT extract(epoch FROM GREATEST(min(created_at) - interval '60 seconds', "
		"fairshare.retention_cutoff() + interval '60 seconds'))::float8 FROM fairshare.jobs",
};

/*
 * Where training jobs were made: every service environment's endpoint and
 * region, and, at an environment's endpoint, each region its attempts
 * were created in (job_attempts.region, the server's region when the
 * create was sent, for an environment that names none; else their ARN's).
 * The server's region may have changed since; training jobs made in the
 * old one are still there.  Those are best-effort targets (SweepTarget),
 * read after the environments' own.  Attempts of an environment deleted
 * since are not swept: its endpoint is gone with it.  The attempts are
 * read whole, once a sweep (every orphan_sweep_interval).
 */
static FairshareStatement targets_stmt = {
	.what = "read where the service environments send their calls",
	.sql = "SELECT e.endpoint_url, e.region, false FROM fairshare.service_environments e "
		"UNION "
		"SELECT e.endpoint_url, a.region, true FROM fairshare.service_environments e "
		"  JOIN (SELECT DISTINCT service_environment, "
		"		   coalesce(region, nullif(split_part(training_job_arn, ':', 4), '')) AS region "
		"		   FROM fairshare.job_attempts) a "
		"	ON a.service_environment = e.name AND a.region IS NOT NULL "
		"ORDER BY 3",
	.read_only = true,
};

static FairshareStatement list_request_stmt = {
	.what = "build a ListTrainingJobs request",
	.sql = "SELECT jsonb_strip_nulls(jsonb_build_object('NameContains', $1, 'MaxResults', 100, "
		"'NextToken', $2, 'CreationTimeAfter', $3))",
	.argtypes = {TEXTOID, TEXTOID, FLOAT8OID},
};

static FairshareStatement append_page_stmt = {
	.what = "gather a page's training jobs",
	.sql = "SELECT $1 || coalesce($2 -> 'TrainingJobSummaries', '[]'), $2 ->> 'NextToken'",
	.argtypes = {JSONBOID, JSONBOID},
};

/*
 * Known to a job or an attempt: one that recorded the training job's ARN,
 * or one still placed without an ARN (its create may be in flight) -- the
 * rule of the view fairshare.orphaned_training_jobs (75_orphans.sql).
 */
static FairshareStatement unknown_names_stmt = {
	.what = "find the training jobs no job knows",
	.sql = "SELECT DISTINCT ON (1) s ->> 'TrainingJobName', s ->> 'TrainingJobArn' "
		"FROM jsonb_array_elements($1) s "
		"WHERE s ->> 'TrainingJobName' IS NOT NULL AND s ->> 'TrainingJobArn' IS NOT NULL "
		"AND NOT EXISTS (SELECT 1 FROM fairshare.jobs j WHERE j.training_job_name = s ->> 'TrainingJobName' "
		"AND (j.training_job_arn = s ->> 'TrainingJobArn' "
		"OR j.training_job_arn IS NULL AND j.status IN " FS_PLACED_STATUSES_SQL ")) "
		"AND NOT EXISTS (SELECT 1 FROM fairshare.job_attempts a WHERE a.training_job_name = s ->> 'TrainingJobName' "
		"AND (a.training_job_arn = s ->> 'TrainingJobArn' OR a.training_job_arn IS NULL AND a.outcome IS NULL)) "
		"AND NOT EXISTS (SELECT 1 FROM fairshare.forgotten_training_jobs f WHERE f.training_job_name = s ->> 'TrainingJobName' "
		"AND f.training_job_arn = s ->> 'TrainingJobArn') "
		"ORDER BY 1",
	.argtypes = {JSONBOID},
};

static FairshareStatement tags_request_stmt = {
	.what = "build a ListTags request",
	.sql = "SELECT jsonb_build_object('ResourceArn', $1::text, 'MaxResults', 100)",
	.argtypes = {TEXTOID},
};

static FairshareStatement tag_values_stmt = {
	.what = "read a training job's tags",
	.sql = "SELECT (SELECT t ->> 'Value' FROM jsonb_array_elements($1 -> 'Tags') t "
		"		  WHERE t ->> 'Key' = 'fairshare:installation') = $2, "
		"		 (SELECT t ->> 'Value' FROM jsonb_array_elements($1 -> 'Tags') t "
		"		  WHERE t ->> 'Key' = 'fairshare:job-id'), "
		"		 (SELECT t ->> 'Value' FROM jsonb_array_elements($1 -> 'Tags') t "
		"		  WHERE t ->> 'Key' = 'fairshare:job-submitted')",
	.argtypes = {JSONBOID, TEXTOID},
};

static FairshareStatement found_row_stmt = {
	.what = "describe an orphaned training job",
	.sql = "SELECT jsonb_build_object('name', $1::text, 'arn', s ->> 'TrainingJobArn', "
		"'status', s ->> 'TrainingJobStatus', 'created', s -> 'CreationTime', 'job_id', $3::text) "
		"FROM jsonb_array_elements($2) s WHERE s ->> 'TrainingJobName' = $1::text LIMIT 1",
	.argtypes = {TEXTOID, JSONBOID, TEXTOID},
};

/*
 * CreationTime comes as the JSON protocol sends times, epoch seconds; one
 * that is not (or is out of range) is stored as NULL, not a sweep failed
 * at every interval.
 *
 * A row this sweep did not find goes only when the sweep was complete ($2)
 * and it could have found it: its ARN's region was swept ($3), or it was
 * made before the listing's cutoff ($4, epoch seconds).  One found in a
 * region no sweep reaches any more (an environment's region changed, or
 * its attempts are gone) stays, as last seen, until the cutoff passes it:
 * not seeing a training job is no sign that it stopped.
 */
static FairshareStatement store_found_stmt = {
	.what = "store what the sweep found",
	.sql = "WITH f AS (SELECT e ->> 'name' AS name, e ->> 'arn' AS arn, e ->> 'status' AS status, "
		"		  e ->> 'job_id' AS job_id, "
		"		  CASE WHEN jsonb_typeof(e -> 'created') = 'number' AND (e -> 'created')::numeric BETWEEN 1 AND 95000000000 "
		"			   THEN to_timestamp((e ->> 'created')::float8) END AS created "
		"		   FROM (SELECT DISTINCT ON (e ->> 'name') e FROM unnest($1::jsonb[]) e) x), "
		"gone AS (DELETE FROM fairshare.orphan_sweep o "
		"		   WHERE $2 AND NOT EXISTS (SELECT 1 FROM f WHERE f.name = o.training_job_name) "
		"			 AND (split_part(o.training_job_arn, ':', 4) = ANY ($3) "
		"				  OR o.creation_time < to_timestamp($4))) "
		"INSERT INTO fairshare.orphan_sweep AS o (training_job_name, training_job_arn, training_job_status, "
		"		  job_id_tag, creation_time, first_seen, last_seen) "
		"SELECT name, arn, status, job_id, created, now(), now() FROM f "
		"ON CONFLICT (training_job_name) DO UPDATE SET training_job_arn = excluded.training_job_arn, "
		"		  training_job_status = excluded.training_job_status, last_seen = excluded.last_seen",
	.argtypes = {JSONBARRAYOID, BOOLOID, TEXTARRAYOID, FLOAT8OID},
};

static FairshareStatement move_ids_on_stmt = {
	.what = "move job ids past the orphans",
	.sql = "SELECT m, setval(s, m) FROM (SELECT pg_get_serial_sequence('fairshare.jobs', 'job_id')::regclass AS s, "
		"		  max(job_id_tag::bigint) AS m FROM fairshare.orphan_sweep "
		"	 WHERE CASE WHEN job_id_tag ~ '^[0-9]{1,19}$' THEN job_id_tag::numeric <= 9223372036854775807 END) x "
		" WHERE m > coalesce(pg_sequence_last_value(s), 0)",
};

/*
 * The endpoints and regions to sweep: every service environment's, each
 * once, resolved as the dispatcher resolves them for a create (a training
 * job is made in its environment's region, else the server's); the
 * default's when there is no environment.  One that cannot be resolved is
 * skipped with a WARNING: its calls cannot be made either.
 */
static SweepTarget *
sweep_targets(Sweep *sw, int *n_targets)
{
	SweepTarget *targets;
	uint64		n_rows;
	int			n = 0;
	MemoryContext spi;

	n_rows = fairshare_run_statement(&targets_stmt, NULL, NULL);
	spi = MemoryContextSwitchTo(sw->outer);
	targets = palloc(sizeof(SweepTarget) * Max(n_rows, 1));
	for (uint64 i = 0; i < Max(n_rows, 1); i++)
	{
		char	   *env_url = n_rows ? SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1) : NULL;
		char	   *env_region = n_rows ? SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2) : NULL;
		const char *source;
		char	   *why;
		SweepTarget t = {0};
		bool		seen = false;

		t.best_effort = n_rows && strcmp(SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3), "t") == 0;
		if (!fs_sm_resolve_endpoint(env_url, env_region, &t.url, &t.region, &source, &why))
		{
			/* its calls cannot be made either; the others are still swept */
			ereport(WARNING,
					(errcode(ERRCODE_CONNECTION_EXCEPTION),
					 errmsg("orphan sweep: skipped an endpoint: %s", why),
					 errhint("fairshare.orphan_sweep keeps what earlier sweeps found there; fix or delete the service environment.")));
			if (!t.best_effort)
				sw->skipped_target = true;
			continue;
		}
		for (int k = 0; k < n && !seen; k++)
			seen = strcmp(targets[k].url, t.url) == 0 && strcmp(targets[k].region, t.region) == 0;
		if (!seen)
			targets[n++] = t;
	}
	MemoryContextSwitchTo(spi);
	SPI_freetuptable(SPI_tuptable);
	*n_targets = n;
	return targets;
}

/*
 * Did this installation's dispatcher make the training job named name,
 * whose fairshare:job-id tag is job_tag and fairshare:job-submitted tag is
 * submitted?  The name must be the one this installation gives an attempt
 * of that job, and the submission tag signed for it with tag_key.
 */
static bool
signed_by_us(const Sweep *sw, const char *name, const char *job_tag, const char *submitted)
{
	int64		job_id;
	int64		submitted_us;
	char	   *end;

	if (job_tag == NULL || submitted == NULL)
		return false;
	errno = 0;
	job_id = strtoi64(job_tag, &end, 10);
	if (errno != 0 || end == job_tag || *end != '\0' || job_id <= 0)
		return false;
	errno = 0;
	submitted_us = strtoi64(submitted, &end, 10);
	if (errno != 0 || end == submitted || *end != '.')
		return false;
	return fairshare_training_job_name_has_installation(name, sw->installation, job_id) &&
		strcmp(submitted, fairshare_submission_tag(sw->tag_key, name, submitted_us)) == 0;
}

/*
 * Steps 1 to 3 at one endpoint and region: what it found is added to
 * sw->found, and target->swept is set once it has all been read.
 */
static void
sweep_target(Sweep *sw, SweepTarget *target)
{
	Jsonb	   *summaries;		/* every page's TrainingJobSummaries, one array */
	char	   *next_token = NULL;
	int			pages = 0;
	uint64		n_unknown;
	char	  **names;
	char	  **arns;

	/* 1. every page of ListTrainingJobs, gathered into one jsonb array */
	MemoryContextSwitchTo(sw->outer);	/* SPI leaves its own context current */
	summaries = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("[]")));
	do
	{
		Jsonb	   *request;
		Jsonb	   *page;
		Datum		args[3];
		char		nulls[3] = {' ', ' ', ' '};
		bool		isnull;
		Datum		v;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(sw->loop_cxt);
		MemoryContextSwitchTo(sw->loop_cxt);
		args[0] = CStringGetTextDatum(sw->name_part);
		args[1] = next_token ? CStringGetTextDatum(next_token) : (Datum) 0;
		nulls[1] = next_token ? ' ' : 'n';
		args[2] = Float8GetDatum(sw->since);
		nulls[2] = sw->have_since ? ' ' : 'n';
		fairshare_run_statement(&list_request_stmt, args, nulls);
		MemoryContextSwitchTo(sw->loop_cxt);
		request = DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		page = call(FS_SM_LIST_TRAINING_JOBS, request, "ListTrainingJobs", target);
		if (page == NULL)
		{
			MemoryContextSwitchTo(sw->outer);
			return;				/* a best-effort target that failed */
		}

		args[0] = JsonbPGetDatum(summaries);
		args[1] = JsonbPGetDatum(page);
		fairshare_run_statement(&append_page_stmt, args, NULL);
		{
			MemoryContext spi = MemoryContextSwitchTo(sw->outer);

			pfree(summaries);
			summaries = DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
			v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
			next_token = isnull ? NULL : TextDatumGetCString(v);
			MemoryContextSwitchTo(spi);
		}
		SPI_freetuptable(SPI_tuptable);
	} while (next_token != NULL && next_token[0] != '\0' && ++pages < SWEEP_MAX_PAGES);

	if (next_token != NULL && next_token[0] != '\0')
		ereport(WARNING,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("orphan sweep: stopped after %d pages of ListTrainingJobs at %s (%s)", SWEEP_MAX_PAGES,
						fs_sm_redact_url(target->url), target->region),
				 errhint("Training jobs beyond them were not looked at; the next sweep starts over.")));

	/* 2. the names no job or attempt knows (read after the listing) */
	{
		Datum		args[1] = {JsonbPGetDatum(summaries)};

		fairshare_run_statement(&unknown_names_stmt, args, NULL);
	}
	n_unknown = SPI_processed;
	{
		MemoryContext spi = MemoryContextSwitchTo(sw->outer);

		names = palloc(sizeof(char *) * Max(n_unknown, 1));
		arns = palloc(sizeof(char *) * Max(n_unknown, 1));
		for (uint64 i = 0; i < n_unknown; i++)
		{
			names[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
			arns[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		}
		if (sw->n_found + n_unknown > (uint64) sw->found_size)
		{
			sw->found_size = sw->n_found + n_unknown;
			sw->found = repalloc(sw->found, sizeof(Datum) * sw->found_size);
			sw->found_names = repalloc(sw->found_names, sizeof(char *) * sw->found_size);
		}
		MemoryContextSwitchTo(spi);
	}

	/* 3. ListTags of each: this installation's only */
	for (uint64 i = 0; i < n_unknown; i++)
	{
		Datum		args[2];
		Jsonb	   *tags;
		bool		isnull;
		Datum		v;
		bool		ours;
		bool		already = false;

		CHECK_FOR_INTERRUPTS();
		for (int k = 0; k < sw->n_found && !already; k++)
			already = strcmp(sw->found_names[k], names[i]) == 0;
		if (already)
			continue;
		MemoryContextReset(sw->loop_cxt);
		MemoryContextSwitchTo(sw->loop_cxt);
		args[0] = CStringGetTextDatum(arns[i]);
		fairshare_run_statement(&tags_request_stmt, args, NULL);
		MemoryContextSwitchTo(sw->loop_cxt);
		tags = call(FS_SM_LIST_TAGS,
					DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)),
					"ListTags", target);
		if (tags == NULL)
		{
			MemoryContextSwitchTo(sw->outer);
			return;				/* a best-effort target that failed */
		}
		args[0] = JsonbPGetDatum(tags);
		args[1] = CStringGetTextDatum(sw->installation);
		fairshare_run_statement(&tag_values_stmt, args, NULL);
		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		ours = !isnull && DatumGetBool(v);
		if (ours && !signed_by_us(sw, names[i], SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2),
								  SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3)))
		{
			sw->n_unsigned++;	/* tagged as ours by someone else */
			ours = false;
		}
		if (ours)
		{
			Datum		row[3];
			char		rownulls[3] = {' ', ' ', ' '};
			Datum		job_tag = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

			row[0] = CStringGetTextDatum(names[i]);
			row[1] = JsonbPGetDatum(summaries);
			row[2] = job_tag;
			rownulls[2] = isnull ? 'n' : ' ';
			fairshare_run_statement(&found_row_stmt, row, rownulls);
			if (SPI_processed == 1)
			{
				MemoryContext spi = MemoryContextSwitchTo(sw->outer);

				sw->found_names[sw->n_found] = names[i];
				sw->found[sw->n_found++] = PointerGetDatum(DatumGetJsonbPCopy(SPI_getbinval(SPI_tuptable->vals[0],
																							 SPI_tuptable->tupdesc, 1,
																							 &isnull)));
				MemoryContextSwitchTo(spi);
			}
		}
		SPI_freetuptable(SPI_tuptable);
	}
	MemoryContextSwitchTo(sw->outer);
	target->swept = true;
}

/*
 * One sweep on a primary; returns how many orphaned training jobs were
 * found.  In its own transactions (the dispatcher, called outside any), or
 * in the caller's.  What it gathers lives in the caller's memory context,
 * which must outlive the transactions.
 */
static int
sweep(bool own_transactions)
{
	Sweep		sw = {0};
	SweepTarget *targets;
	int			n_targets;

	sw.outer = CurrentMemoryContext;
	sw.loop_cxt = AllocSetContextCreate(sw.outer, "fairshare orphan sweep call", ALLOCSET_DEFAULT_SIZES);
	sweep_own_transactions = own_transactions;
	if (own_transactions)
		fairshare_xact_begin(sweep_activity);
	else if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "orphan sweep: SPI_connect failed");
	MemoryContextSwitchTo(sw.outer);

	sw.found_size = 1;
	sw.found = palloc(sizeof(Datum));
	sw.found_names = palloc(sizeof(char *));
	fairshare_installation_id_and_tag_key(sw.installation, sizeof(sw.installation),
										  sw.tag_key, sizeof(sw.tag_key));
	sw.name_part = psprintf("%.*s-", FAIRSHARE_INSTALLATION_NAME_CHARS, sw.installation);

	/*
	 * Training jobs made before the oldest job, or before the retention
	 * cutoff, belong to jobs retention deleted: not orphans.  (The oldest
	 * job alone is not enough: one still waiting, or training for weeks,
	 * would take the listing back over jobs deleted since.)  A minute's
	 * margin each way for the clocks of two machines: back from the oldest
	 * job, on from the cutoff.  Jobs deleted before the cutoff reached
	 * them are in forgotten_training_jobs.
	 */
	fairshare_run_statement(&oldest_job_stmt, NULL, NULL);
	{
		bool		isnull;
		Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
		{
			sw.since = DatumGetFloat8(v);
			sw.have_since = true;
		}
	}

	targets = sweep_targets(&sw, &n_targets);
	for (int i = 0; i < n_targets; i++)
		sweep_target(&sw, &targets[i]);

	/*
	 * 4. The table holds what this sweep found; after a skipped endpoint,
	 * what it found besides what earlier sweeps found; and what earlier
	 * sweeps found in regions this one did not look at (store_found_stmt).
	 */
	{
		Datum		args[4];
		char		nulls[4] = {' ', ' ', ' ', ' '};
		Datum	   *regions = palloc(sizeof(Datum) * Max(n_targets, 1));

		int			n_swept = 0;

		for (int i = 0; i < n_targets; i++)
			if (targets[i].swept)
				regions[n_swept++] = CStringGetTextDatum(targets[i].region);
		args[0] = fairshare_jsonb_array(sw.found, sw.n_found);
		args[1] = BoolGetDatum(!sw.skipped_target);
		args[2] = PointerGetDatum(construct_array(regions, n_swept, TEXTOID, -1, false, TYPALIGN_INT));
		args[3] = Float8GetDatum(sw.since);
		nulls[3] = sw.have_since ? ' ' : 'n';
		fairshare_run_statement(&store_found_stmt, args, nulls);
	}

	/*
	 * 5. Job ids move on past every orphan's fairshare:job-id tag.  The
	 * identity sequence came back where the last replicated WAL left it,
	 * below ids the old primary handed out: a new job given a lost job's id
	 * would get its training job name, find that training job, see tags
	 * naming this installation and its id, and adopt it.  Past the highest
	 * lost id that cannot happen (the jobs submitted between the promotion
	 * and this sweep could; docs/ha.md says to sweep at promotion).
	 */
	if (sw.n_unsigned > 0)
		ereport(LOG,
				(errmsg("orphan sweep: %d training jobs carry this installation's tags but not its signature; "
						"they were not counted as orphans", sw.n_unsigned),
				 errdetail("Their fairshare:job-submitted tag is missing, or not signed for their name with this "
						   "installation's tag_key: someone else made them.")));
	fairshare_run_statement(&move_ids_on_stmt, NULL, NULL);
	if (SPI_processed == 1)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("orphan sweep: job ids moved on past %s, the highest id of a job whose training job exists but whose row was lost",
						SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
				 errdetail("A failover lost the end of the WAL; new jobs must not reuse those ids and their training job names."),
				 errhint("See fairshare.orphaned_training_jobs.")));
	if (own_transactions)
		fairshare_xact_commit();
	else
		SPI_finish();
	MemoryContextSwitchTo(sw.outer);
	MemoryContextDelete(sw.loop_cxt);
	return sw.n_found;
}

/*
 * fairshare.sweep_orphaned_training_jobs() RETURNS integer: sweep now;
 * returns how many orphaned training jobs were found.
 */
Datum
fairshare_sweep_orphaned_training_jobs(PG_FUNCTION_ARGS)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("the orphan sweep runs on the primary only"),
				 errhint("The dispatcher of the primary sweeps on its own (fairshare.orphan_sweep_interval).")));
	PG_RETURN_INT32(sweep(false));
}

/*
 * The dispatcher's sweep: at its first turn on a primary, then every
 * fairshare.orphan_sweep_interval.  Outside any transaction; runs its own,
 * and logs what fails instead of raising.
 */
void
fairshare_orphan_sweep_if_due(void)
{
	static TimestampTz next_sweep = 0;
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext sweep_cxt;
	TimestampTz now;

	if (fairshare_orphan_sweep_interval_s <= 0)
		return;
	now = GetCurrentTimestamp();
	if (now < next_sweep)
		return;
	next_sweep = TimestampTzPlusMilliseconds(now, (int64) fairshare_orphan_sweep_interval_s * 1000);
	sweep_cxt = AllocSetContextCreate(cxt, "fairshare orphan sweep", ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		int			found;

		MemoryContextSwitchTo(sweep_cxt);
		found = sweep(true);
		MemoryContextSwitchTo(cxt);
		if (found > 0)
			ereport(LOG,
					(errmsg("fairshare dispatcher: the orphan sweep found %d training jobs of this installation that no job knows",
							found),
					 errhint("See fairshare.orphaned_training_jobs; stop them at SageMaker if they should not run.")));
	}
	PG_CATCH();
	{
		bool		call_failed;
		int			held;

		MemoryContextSwitchTo(cxt);
		call_failed = ERRCODE_TO_CATEGORY(geterrcode()) == ERRCODE_CONNECTION_EXCEPTION;
		if (!fs_log_due("orphan sweep", &held))
			FlushErrorState();
		else if (call_failed)
		{
			/*
			 * A SageMaker call that failed after its retries, or an
			 * endpoint that cannot be reached, is reported as the
			 * dispatcher reports every other failed call, as a WARNING: the
			 * sweep runs again at its next interval and nothing was lost.
			 */
			ErrorData  *edata = CopyErrorData();

			FlushErrorState();
			edata->elevel = WARNING;
			ThrowErrorData(edata);
			FreeErrorData(edata);
		}
		else
		{
			/* a statement that failed stays an ERROR in the log */
			EmitErrorReport();
			FlushErrorState();
		}
		AbortCurrentTransaction();
		pgstat_report_activity(STATE_IDLE, NULL);
	}
	PG_END_TRY();
	sweep_own_transactions = false;
	MemoryContextSwitchTo(cxt);
	MemoryContextDelete(sweep_cxt);
}
