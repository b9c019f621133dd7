/*-------------------------------------------------------------------------
 *
 * job_control.c
 *		fairshare.terminate_job() and fairshare.update_job_priority().
 *
 * Both act on one job on behalf of the caller.  Which jobs the caller may
 * act on is decided by row-level security on fairshare.jobs: the job is
 * looked up as the caller, so a submitter finds only its own jobs and an
 * admin finds all.  The change itself is then made as the owner of the
 * fairshare catalog, because submitters have no UPDATE privilege on
 * fairshare.jobs — they must not be able to set a status directly.  This is
 * what SECURITY DEFINER would do, except that a SECURITY DEFINER function
 * could no longer see who called it.
 *
 * A placed job is not stopped here: the stop is recorded on the row and the
 * dispatcher carries it out; the job keeps its capacity until SageMaker
 * reports it stopped.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "sql_api/args.h"
#include "statement.h"
#include "tables/catalog_version.h"
#include "tables/job_status.h"
#include "tables/lookup.h"

PG_FUNCTION_INFO_V1(fairshare_terminate_job);
PG_FUNCTION_INFO_V1(fairshare_update_job_priority);

#define MAX_REASON_LENGTH 1024

/* Run as the catalog owner, on a job the caller can see. */
static FairshareStatement lock_job_stmt = {
	.what = "lock the job",
	.sql = "SELECT status::text, stop_kind, scheduling_priority FROM fairshare.jobs "
		"WHERE job_id = $1 FOR UPDATE",
	.argtypes = {INT8OID},
	.max_rows = 1,
};
static FairshareStatement request_stop_stmt = {
	.what = "ask for the job to be stopped",
	.sql = "UPDATE fairshare.jobs SET stop_kind = 'TERMINATE', "
		"stop_reason = $2, stop_requested_at = now(), "
		"preempted_for = NULL WHERE job_id = $1",
	.argtypes = {INT8OID, TEXTOID},
};
static FairshareStatement fail_job_stmt = {
	.what = "end the job as FAILED",
	.sql = "UPDATE fairshare.jobs SET status = 'FAILED', status_reason = $2 WHERE job_id = $1",
	.argtypes = {INT8OID, TEXTOID},
};
static FairshareStatement set_priority_stmt = {
	.what = "change the job's priority",
	.sql = "UPDATE fairshare.jobs SET scheduling_priority = $2 WHERE job_id = $1",
	.argtypes = {INT8OID, INT4OID},
};

/*
 * Find the job as the caller sees it (row-level security applies), then lock
 * it as the catalog owner and return its status (the locked row, with
 * stop_kind and scheduling_priority, stays in SPI_tuptable).  Leaves the user switched
 * to the owner; the caller restores it with fairshare_restore_user(*saved).
 * Errors if the caller cannot see the job.
 */
static char *
lock_visible_job(int64 job_id, FairshareSavedUser *saved)
{
	Datum		values[1] = {Int64GetDatum(job_id)};
	bool		isnull;

	fairshare_require_visible_job(job_id);
	*saved = fairshare_become_catalog_owner();

	/* Deleted (by an admin, or retention) after the look-up above. */
	if (fairshare_run_statement(&lock_job_stmt, values, NULL) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job " INT64_FORMAT " does not exist", job_id),
				 errdetail("It was deleted after this call found it, before it could be locked."),
				 errhint("There is nothing left to terminate or change.")));
	return TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
											 SPI_tuptable->tupdesc, 1, &isnull));
}

static bool
status_is_final(const char *status)
{
	return strcmp(status, "SUCCEEDED") == 0 || strcmp(status, "FAILED") == 0;
}

Datum
fairshare_terminate_job(PG_FUNCTION_ARGS)
{
	int64		job_id;
	char	   *reason;
	char	   *caller = GetUserNameFromId(GetUserId(), false);
	char	   *full_reason;
	char	   *status;
	char	   *stop_kind;
	FairshareSavedUser saved;
	bool		changed = false;
	Datum		values[2];

	fairshare_require_catalog_version();
	fairshare_require_arg(fcinfo, 0, "terminate_job", "job_id");
	fairshare_require_arg(fcinfo, 1, "terminate_job", "reason");
	job_id = PG_GETARG_INT64(0);
	reason = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strspn(reason, " \t\r\n") == strlen(reason))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a reason is required to terminate job " INT64_FORMAT, job_id),
				 errhint("Say why, e.g. fairshare.terminate_job(%lld, 'wrong dataset').",
						 (long long) job_id)));
	if (strlen(reason) > MAX_REASON_LENGTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the reason to terminate job " INT64_FORMAT " is longer than %d bytes",
						job_id, MAX_REASON_LENGTH)));
	full_reason = psprintf("Terminated by %s: %s", caller, reason);

	SPI_connect();
	status = lock_visible_job(job_id, &saved);
	stop_kind = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

	values[0] = Int64GetDatum(job_id);
	values[1] = CStringGetTextDatum(full_reason);
	if (status_is_final(status))
		changed = false;
	else if (fs_status_name_is_placed(status))
	{
		/* Already being terminated: nothing more to ask for. */
		if (stop_kind == NULL || strcmp(stop_kind, "TERMINATE") != 0)
		{
			fairshare_run_statement(&request_stop_stmt, values, NULL);
			changed = true;
		}
	}
	else
	{
		fairshare_run_statement(&fail_job_stmt, values, NULL);
		changed = true;
	}

	fairshare_restore_user(saved);
	SPI_finish();
	PG_RETURN_BOOL(changed);
}

Datum
fairshare_update_job_priority(PG_FUNCTION_ARGS)
{
	int64		job_id;
	int32		priority;
	char	   *status;
	FairshareSavedUser saved;
	Datum		values[2];
	bool		isnull;
	int32		old_priority;

	fairshare_require_catalog_version();
	fairshare_require_arg(fcinfo, 0, "update_job_priority", "job_id");
	fairshare_require_arg(fcinfo, 1, "update_job_priority", "scheduling_priority");
	job_id = PG_GETARG_INT64(0);
	priority = PG_GETARG_INT32(1);
	if (priority < 0 || priority > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scheduling_priority %d is out of range", priority),
				 errhint("scheduling_priority is from 0 to 9999; higher runs first.")));

	SPI_connect();
	status = lock_visible_job(job_id, &saved);
	if (status_is_final(status))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job " INT64_FORMAT " has already finished (%s)", job_id, status),
				 errhint("Priorities matter only to jobs that wait or run.")));

	old_priority = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
											   SPI_tuptable->tupdesc, 3, &isnull));
	values[0] = Int64GetDatum(job_id);
	values[1] = Int32GetDatum(priority);
	fairshare_run_statement(&set_priority_stmt, values, NULL);

	fairshare_restore_user(saved);
	SPI_finish();
	PG_RETURN_INT32(old_priority);
}
