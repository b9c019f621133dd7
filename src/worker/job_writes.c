/*-------------------------------------------------------------------------
 *
 * job_writes.c
 *		The SQL with which the dispatcher writes outcomes to
 *		fairshare.jobs, each in its own short transaction, never waiting
 *		for a row another transaction holds.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"


#include "tables/job_status.h"
#include "worker/dispatch_internal.h"
#include "worker/xact.h"

static void
exec_params(const char *sql, int nargs, Oid *types, Datum *values)
{
	int			ret = SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0);

	if (ret < 0)
		elog(ERROR, "fairshare dispatcher: \"%s\" failed: %s", sql, SPI_result_code_string(ret));
}

/*
 * One of fairshare's outcome functions, function_call(job_id, arg), in its
 * own transaction.  The job's row is locked first without waiting: a
 * user's transaction left open on that job must not stall the dispatcher,
 * so then nothing is written and the caller tries again later.  Left
 * placed means capacity was freed or the job is waiting again, and a pass
 * may decide something new.
 */
OutcomeWrite
dispatch_write_outcome(const char *function_call, int64 job_id, Oid arg_type, Datum arg)
{
	Oid			types[2] = {INT8OID, arg_type};
	Datum		values[2] = {Int64GetDatum(job_id), arg};
	OutcomeWrite outcome = OUTCOME_JOB_BUSY;
	char	   *query = psprintf("SELECT %s NOT IN " FS_PLACED_STATUSES_SQL, function_call);

	fairshare_xact_begin("fairshare dispatcher: outcome");
	if (SPI_execute_with_args("SELECT 1 FROM fairshare.jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED",
							  1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock job " INT64_FORMAT, job_id);
	if (SPI_processed == 1)
	{
		if (SPI_execute_with_args(query, 2, types, values, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "%s failed", function_call);
		outcome = OUTCOME_STAYS_PLACED;
		if (SPI_processed == 1)
		{
			bool		isnull;

			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
				outcome = OUTCOME_LEFT_PLACED;
		}
	}
	fairshare_xact_commit();
	pfree(query);
	return outcome;
}

OutcomeWrite
dispatch_apply_status(int64 job_id, Jsonb *response)
{
	return dispatch_write_outcome("fairshare.apply_status($1, $2)", job_id, JSONBOID, JsonbPGetDatum(response));
}

/*
 * Why an attempt that SageMaker has not confirmed still waits in SCHEDULED,
 * in its status_reason: "why is my job not running?" should not need the
 * server log.  Only the attempt's own row, only while it is SCHEDULED.
 */
void
dispatch_note_call_trouble(const AttemptTrack *t, const char *reason)
{
	Oid			types[3] = {INT8OID, TEXTOID, TEXTOID};
	Datum		values[3] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name),
	CStringGetTextDatum(reason)};

	fairshare_xact_begin("fairshare dispatcher: status_reason");
	/* a note, not an outcome: skipped while another transaction holds the row */
	if (SPI_execute_with_args("UPDATE fairshare.jobs SET status_reason = $3 "
							  "WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
							  "AND training_job_name = $2 AND status = 'SCHEDULED' "
							  "AND status_reason IS DISTINCT FROM $3 FOR NO KEY UPDATE SKIP LOCKED)",
							  3, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record why job " INT64_FORMAT " waits", t->job_id);
	fairshare_xact_commit();
}

/*
 * Lock, in job_id order, the rows of the batch's jobs that nobody else has
 * locked, and return their ids.  A user's open transaction holding a
 * job's row (after update_job_priority, say) must not stall every other
 * job's outcomes: that job's answer is skipped, and its next
 * DescribeTrainingJob (a poll interval on) brings it again -- the ARN of
 * a create too.
 */
static Datum
lock_batch_jobs(const OutcomeBatch *b)
{
	Datum	   *ids = palloc(sizeof(Datum) * (b->n_arns + b->n_statuses + 1));
	Oid			types[1] = {INT8ARRAYOID};
	Datum		values[1];
	bool		isnull;
	Datum		locked;
	int64		skipped;
	int			n = 0;

	for (int i = 0; i < b->n_arns; i++)
		ids[n++] = b->arn_ids[i];
	for (int i = 0; i < b->n_statuses; i++)
		ids[n++] = b->status_ids[i];
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (SPI_execute_with_args("SELECT coalesce(array_agg(job_id ORDER BY job_id), '{}'), "
							  "cardinality(array(SELECT DISTINCT unnest($1::bigint[]))) - count(*) "
							  "FROM (SELECT job_id FROM fairshare.jobs WHERE job_id = ANY($1::bigint[]) "
							  "ORDER BY job_id FOR NO KEY UPDATE SKIP LOCKED) l",
							  1, types, values, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not lock the jobs of a batch of outcomes");
	locked = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	skipped = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (skipped > 0)
		ereport(DEBUG1,
				(errmsg_internal("fairshare dispatcher: " INT64_FORMAT " job(s) of a batch are locked by another transaction; their answers wait for the next describe",
								 skipped)));
	return SPI_datumTransfer(locked, false, -1);
}

/*
 * Write the queued outcomes of one batch of answers in one short
 * transaction: the ARNs of created attempts, then fairshare.apply_status()
 * for each DescribeTrainingJob answer, for the jobs lock_batch_jobs() got.
 * Notes whether any job left the placed states (a pass may decide
 * something new).
 */
void
dispatch_flush_outcomes(FairshareDispatch *d)
{
	OutcomeBatch *b = &d->batch;
	Datum		locked;

	if (b->n_arns == 0 && b->n_statuses == 0)
		return;
	fairshare_xact_begin("fairshare dispatcher: outcomes");
	locked = lock_batch_jobs(b);
	if (b->n_arns > 0)
	{
		Oid			types[4] = {INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID};
		Datum		values[4];

		values[0] = PointerGetDatum(construct_array(b->arn_ids, b->n_arns, INT8OID, sizeof(int64),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[1] = PointerGetDatum(construct_array(b->arn_names, b->n_arns, TEXTOID, -1, false,
													TYPALIGN_INT));
		values[2] = PointerGetDatum(construct_array(b->arns, b->n_arns, TEXTOID, -1, false,
													TYPALIGN_INT));
		values[3] = locked;
		/*
		 * No join with unnest(): right after a burst the planner's
		 * statistics may still say jobs holds no placed rows, and a nested
		 * loop over every placed job per batch made each flush cost
		 * thousands of rows.  The ids go through the primary key; each
		 * row's name and ARN are found by position (a batch is small).
		 */
		exec_params("UPDATE fairshare.jobs j SET training_job_arn = ($3::text[])[array_position($1::bigint[], j.job_id)] "
					"WHERE j.job_id = ANY($1::bigint[]) AND j.job_id = ANY($4::bigint[]) "
					"AND j.training_job_name = ($2::text[])[array_position($1::bigint[], j.job_id)] "
					"AND j.status IN " FS_PLACED_STATUSES_SQL " AND j.training_job_arn IS NULL",
					4, types, values);
	}
	if (b->n_statuses > 0)
	{
		Oid			types[3] = {INT8ARRAYOID, JSONBARRAYOID, INT8ARRAYOID};
		Datum		values[3];
		bool		isnull;

		values[0] = PointerGetDatum(construct_array(b->status_ids, b->n_statuses, INT8OID, sizeof(int64),
													FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[1] = PointerGetDatum(construct_array(b->statuses, b->n_statuses, JSONBOID, -1, false,
													TYPALIGN_INT));
		values[2] = locked;
		if (SPI_execute_with_args("SELECT coalesce(bool_or(s NOT IN " FS_PLACED_STATUSES_SQL "), false) "
								  "FROM (SELECT fairshare.apply_status(u.job_id, u.response) AS s "
								  "FROM unnest($1::bigint[], $2::jsonb[]) WITH ORDINALITY AS u(job_id, response, n) "
								  "WHERE u.job_id = ANY($3::bigint[]) "
								  "ORDER BY u.job_id, u.n) applied",
								  3, types, values, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "fairshare.apply_status failed");
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
			d->turn_needed = true;
	}
	fairshare_xact_commit();
	b->n_arns = 0;
	b->n_statuses = 0;
}

void
dispatch_record_stop_sent(AttemptTrack *t)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name)};

	fairshare_xact_begin("fairshare dispatcher: stop sent");
	/* skipped while another transaction holds the row: a resent stop is harmless */
	exec_params("UPDATE fairshare.jobs SET stop_sent_at = now() "
				"WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
				"AND training_job_name = $2 AND stop_sent_at IS NULL FOR NO KEY UPDATE SKIP LOCKED)",
				2, types, values);
	fairshare_xact_commit();
}
