/*-------------------------------------------------------------------------
 *
 * installation.c
 *		This installation's id and tag key, and the training job names
 *		made from the id.
 *
 * The id is fairshare.installation_id() (the oldest row of
 * fairshare.installation, drawn by CREATE EXTENSION).  It goes into every
 * training job name, so that another installation handing out the same job
 * ids does not hand out the same names, and into the fairshare:installation
 * tag, which the dispatcher reads before it adopts a training job it did
 * not see itself create.  The same row's tag_key signs the
 * fairshare:job-submitted tag (src/worker/attempts.c,
 * dispatch_submission_tag); the dispatcher reads the two together.
 *
 * Names are made once per placement, thousands per pass: the id is read at
 * most once per transaction (a restore may change it under a long-lived
 * backend, but not within a transaction of it).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "storage/proc.h"

#include "settings.h"
#include "statement.h"
#include "tables/installation.h"
#include "tables/lookup.h"

PG_FUNCTION_INFO_V1(fairshare_training_job_name_sql);

static char cached_id[64];
static LocalTransactionId cached_in = InvalidLocalTransactionId;

static FairshareStatement installation_id_stmt = {
	.what = "read fairshare.installation_id()",
	.sql = "SELECT fairshare.installation_id()::text",
	.read_only = true,
	.max_rows = 1,
};

/* The same row as installation_id(), with its key: one snapshot, one row. */
static FairshareStatement id_and_key_stmt = {
	.what = "read fairshare.installation's id and tag_key",
	.sql = "SELECT installation_id::text, tag_key FROM fairshare.installation "
		"ORDER BY created_at, installation_id LIMIT 1",
	.read_only = true,
	.max_rows = 1,
};

/*
 * The text columns stmt reads of the installation's row, into out[i] (of
 * size sizes[i]), as the catalog owner.
 */
static void
read_installation(FairshareStatement *stmt, int ncolumns, char **out, const size_t *sizes)
{
	FairshareSavedUser saved;
	bool		found;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	saved = fairshare_become_catalog_owner();
	found = fairshare_run_statement(stmt, NULL, NULL) == 1;
	for (int i = 0; found && i < ncolumns; i++)
	{
		bool		isnull;
		Datum		value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);

		if (isnull)
			found = false;
		else
			strlcpy(out[i], TextDatumGetCString(value), sizes[i]);
	}
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("fairshare.installation is empty"),
				 errhint("Restore it from a backup of this installation, or, for a new installation, "
						 "INSERT INTO fairshare.installation DEFAULT VALUES.")));
	fairshare_restore_user(saved);
	SPI_finish();
}

const char *
fairshare_installation_id(void)
{
	char	   *out[1] = {cached_id};
	size_t		sizes[1] = {sizeof(cached_id)};

	if (cached_in == MyProc->lxid && cached_id[0] != '\0')
		return cached_id;
	read_installation(&installation_id_stmt, 1, out, sizes);
	cached_in = MyProc->lxid;
	return cached_id;
}

/*
 * The installation's id, into id, and the key that signs the
 * fairshare:job-submitted tag, into key, both of the row installation_id()
 * reads and in one statement, so that they are always the same row's.  The
 * id is cached for the transaction as fairshare_installation_id() caches
 * it.  The table is the owner's alone; the caller keeps the key out of
 * every message.
 */
void
fairshare_installation_id_and_tag_key(char *id, size_t id_size, char *key, size_t key_size)
{
	char	   *out[2] = {cached_id, key};
	size_t		sizes[2] = {sizeof(cached_id), key_size};

	read_installation(&id_and_key_stmt, 2, out, sizes);
	cached_in = MyProc->lxid;
	strlcpy(id, cached_id, id_size);
}

char *
fairshare_training_job_name_for(const char *installation_id, int64 job_id, int attempt)
{
	const char *prefix = fairshare_job_name_prefix && fairshare_job_name_prefix[0] ?
		fairshare_job_name_prefix : FAIRSHARE_JOB_NAME_PREFIX_DEFAULT;

	return psprintf("%s%.*s-" INT64_FORMAT "-%d", prefix, FAIRSHARE_INSTALLATION_NAME_CHARS,
					installation_id, job_id, attempt);
}

/*
 * Was this training job name made with an installation id, as
 * fairshare_training_job_name_for() makes them: does it end with this
 * installation's first digits, the job id and an attempt number,
 * "<digits>-<job id>-<attempt>"?  Whatever came before (the prefix, which a
 * reload may have changed since) does not matter.  0.1.0's names,
 * "<prefix><job id>-<attempt>", do not.
 */
bool
fairshare_training_job_name_has_installation(const char *name, const char *installation_id, int64 job_id)
{
	char	   *tail = psprintf("%.*s-" INT64_FORMAT "-", FAIRSHARE_INSTALLATION_NAME_CHARS,
								installation_id, job_id);
	size_t		len = strlen(name);
	size_t		tail_len = strlen(tail);
	size_t		end = len;

	while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	if (end == len || end < tail_len)
		return false;			/* no attempt number, or too short */
	return strncmp(name + end - tail_len, tail, tail_len) == 0;
}

char *
fairshare_training_job_name(int64 job_id, int attempt)
{
	return fairshare_training_job_name_for(fairshare_installation_id(), job_id, attempt);
}

/* fairshare.training_job_name(job_id bigint, attempt integer) RETURNS text */
Datum
fairshare_training_job_name_sql(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(fairshare_training_job_name(PG_GETARG_INT64(0), PG_GETARG_INT32(1))));
}
