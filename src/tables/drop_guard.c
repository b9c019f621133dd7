/*-------------------------------------------------------------------------
 *
 * drop_guard.c
 *		Refuse to drop fairshare while jobs are placed.
 *
 * A placed job (SCHEDULED, STARTING, RUNNING) has, or is about to have, a
 * training job at SageMaker that only the dispatcher follows and stops.
 * DROP EXTENSION fairshare (or DROP SCHEMA fairshare CASCADE) removes the
 * jobs and the installation id with them, and nothing would ever stop or
 * report those training jobs: an extension created again draws a new id
 * and does not recognise them.  So such a drop is refused while jobs are
 * placed, saying how to end them; fairshare.drop_with_placed_jobs (a
 * superuser's) lets it through, for an installation whose AWS account is
 * gone.  Called by the DROP event trigger (housekeeping/cron_jobs.c) at
 * ddl_command_start, while the tables still exist.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "commands/extension.h"
#include "nodes/parsenodes.h"
#include "nodes/value.h"

#include "settings.h"
#include "statement.h"
#include "tables/drop_guard.h"
#include "tables/lookup.h"

static FairshareStatement count_placed_stmt = {
	.what = "count the placed jobs",
	.sql = "SELECT count(*) FROM fairshare.jobs "
		"WHERE status IN ('SCHEDULED', 'STARTING', 'RUNNING')",
	.read_only = true,
};

/* Does the statement drop extension or schema fairshare? */
static bool
drops_fairshare(Node *parsetree)
{
	DropStmt   *drop;
	ListCell   *lc;

	if (parsetree == NULL || !IsA(parsetree, DropStmt))
		return false;
	drop = (DropStmt *) parsetree;
	if (drop->removeType != OBJECT_EXTENSION && drop->removeType != OBJECT_SCHEMA)
		return false;
	foreach(lc, drop->objects)
	{
		Node	   *object = lfirst(lc);

		if (IsA(object, String) && strcmp(strVal(object), "fairshare") == 0)
			return true;
	}
	return false;
}

void
fairshare_refuse_drop_while_placed(Node *parsetree)
{
	int64		placed;
	bool		isnull;
	FairshareSavedUser saved;

	if (fairshare_drop_with_placed_jobs || !drops_fairshare(parsetree) ||
		!OidIsValid(get_extension_oid("fairshare", true)))
		return;

	saved = fairshare_become_catalog_owner();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	fairshare_run_statement(&count_placed_stmt, NULL, NULL);
	placed = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	fairshare_restore_user(saved);

	if (placed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop fairshare while %lld jobs are placed", (long long) placed),
				 errdetail("Their SageMaker training jobs would run on with nothing to follow or stop them."),
				 errhint("Terminate them (fairshare.terminate_job) and wait until no job is SCHEDULED, STARTING or RUNNING; "
						 "to drop anyway, a superuser may SET fairshare.drop_with_placed_jobs = on.")));
}
