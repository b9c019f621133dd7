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

#include "datums.h"
#include "statement.h"
#include "tables/job_status.h"
#include "worker/dispatch_internal.h"
#include "worker/xact.h"

static FairshareStatement lock_job_stmt = {
	.what = "lock a job's row for its outcome",
	.sql = "SELECT 1 FROM fairshare.jobs WHERE job_id = $1 FOR UPDATE SKIP LOCKED",
	.argtypes = {INT8OID},
};

/*
 * One of fairshare's outcome functions, call(job_id, arg) (its statement
 * answers whether the job left the placed states), in its own transaction.  The job's row is locked first without waiting: a
 * user's transaction left open on that job must not stall the dispatcher,
 * so then nothing is written and the caller tries again later.  Left
 * placed means capacity was freed or the job is waiting again, and a pass
 * may decide something new.
 */
static OutcomeWrite
write_outcome(FairshareStatement *call, int64 job_id, Datum arg)
{
	Datum		values[2] = {Int64GetDatum(job_id), arg};
	OutcomeWrite outcome = OUTCOME_JOB_BUSY;

	fairshare_xact_begin("fairshare dispatcher: outcome");
	if (fairshare_run_statement(&lock_job_stmt, values, NULL) == 1)
	{
		outcome = OUTCOME_STAYS_PLACED;
		if (fairshare_run_statement(call, values, NULL) == 1)
		{
			bool		isnull;

			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
				outcome = OUTCOME_LEFT_PLACED;
		}
	}
	fairshare_xact_commit();
	return outcome;
}

OutcomeWrite
dispatch_apply_status(int64 job_id, Jsonb *response)
{
	static FairshareStatement apply_status_stmt = {
		.what = "apply a training job's status",
		.sql = "SELECT fairshare.apply_status($1, $2) NOT IN " FS_PLACED_STATUSES_SQL,
		.argtypes = {INT8OID, JSONBOID},
	};

	return write_outcome(&apply_status_stmt, job_id, JsonbPGetDatum(response));
}

/*
 * The stop of an attempt that never reached SageMaker: it never started.
 * fairshare._cancel_unsent does not count a preemption of it toward
 * preemption_retries.
 */
OutcomeWrite
dispatch_record_cancel_unsent(const AttemptTrack *t)
{
	static FairshareStatement cancel_unsent_stmt = {
		.what = "cancel an attempt that was never sent",
		.sql = "SELECT fairshare._cancel_unsent($1, $2) NOT IN " FS_PLACED_STATUSES_SQL,
		.argtypes = {INT8OID, TEXTOID},
	};

	return write_outcome(&cancel_unsent_stmt, t->job_id, CStringGetTextDatum(t->name));
}

/*
 * Why an attempt that SageMaker has not confirmed still waits in SCHEDULED,
 * in its status_reason: "why is my job not running?" should not need the
 * server log.  Only the attempt's own row, only while it is SCHEDULED.
 */
void
dispatch_note_call_trouble(const AttemptTrack *t, const char *reason)
{
	static FairshareStatement note_stmt = {
		.what = "record why an attempt waits",
		.sql = "UPDATE fairshare.jobs SET status_reason = $3 "
			"WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
			"AND training_job_name = $2 AND status = 'SCHEDULED' "
			"AND status_reason IS DISTINCT FROM $3 FOR NO KEY UPDATE SKIP LOCKED)",
		.argtypes = {INT8OID, TEXTOID, TEXTOID},
	};
	Datum		values[3] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name),
	CStringGetTextDatum(reason)};

	fairshare_xact_begin("fairshare dispatcher: status_reason");
	/* a note, not an outcome: skipped while another transaction holds the row */
	fairshare_run_statement(&note_stmt, values, NULL);
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
static FairshareStatement lock_batch_stmt = {
	.what = "lock the jobs of a batch of outcomes",
	.sql = "SELECT coalesce(array_agg(job_id ORDER BY job_id), '{}'), "
		"cardinality(array(SELECT DISTINCT unnest($1::bigint[]))) - count(*) "
		"FROM (SELECT job_id FROM fairshare.jobs WHERE job_id = ANY($1::bigint[]) "
		"ORDER BY job_id FOR NO KEY UPDATE SKIP LOCKED) l",
	.argtypes = {INT8ARRAYOID},
};

static Datum
lock_batch_jobs(const OutcomeBatch *b)
{
	Datum	   *ids = palloc(sizeof(Datum) * (b->n_arns + b->n_statuses + 1));
	Datum		values[1];
	bool		isnull;
	Datum		locked;
	int64		skipped;
	int			n = 0;

	for (int i = 0; i < b->n_arns; i++)
		ids[n++] = b->arn_ids[i];
	for (int i = 0; i < b->n_statuses; i++)
		ids[n++] = b->status_ids[i];
	values[0] = fairshare_int8_array(ids, n);
	if (fairshare_run_statement(&lock_batch_stmt, values, NULL) != 1)
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
/*
 * No join with unnest(): right after a burst the planner's statistics may
 * still say jobs holds no placed rows, and a nested loop over every placed
 * job per batch made each flush cost thousands of rows.  The ids go
 * through the primary key; each row's name and ARN are found by position
 * (a batch is small).
 */
static FairshareStatement write_arns_stmt = {
	.what = "record the ARNs of created training jobs",
	.sql = "UPDATE fairshare.jobs j SET training_job_arn = ($3::text[])[array_position($1::bigint[], j.job_id)] "
		"WHERE j.job_id = ANY($1::bigint[]) AND j.job_id = ANY($4::bigint[]) "
		"AND j.training_job_name = ($2::text[])[array_position($1::bigint[], j.job_id)] "
		"AND j.status IN " FS_PLACED_STATUSES_SQL " AND j.training_job_arn IS NULL",
	.argtypes = {INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID},
};
static FairshareStatement apply_statuses_stmt = {
	.what = "apply a batch of training job statuses",
	.sql = "SELECT coalesce(bool_or(s NOT IN " FS_PLACED_STATUSES_SQL "), false) "
		"FROM (SELECT fairshare.apply_status(u.job_id, u.response) AS s "
		"FROM unnest($1::bigint[], $2::jsonb[]) WITH ORDINALITY AS u(job_id, response, n) "
		"WHERE u.job_id = ANY($3::bigint[]) "
		"ORDER BY u.job_id, u.n) applied",
	.argtypes = {INT8ARRAYOID, JSONBARRAYOID, INT8ARRAYOID},
};

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
		Datum		values[4];

		values[0] = fairshare_int8_array(b->arn_ids, b->n_arns);
		values[1] = fairshare_text_array(b->arn_names, b->n_arns);
		values[2] = fairshare_text_array(b->arns, b->n_arns);
		values[3] = locked;
		fairshare_run_statement(&write_arns_stmt, values, NULL);
	}
	if (b->n_statuses > 0)
	{
		Datum		values[3];
		bool		isnull;

		values[0] = fairshare_int8_array(b->status_ids, b->n_statuses);
		values[1] = fairshare_jsonb_array(b->statuses, b->n_statuses);
		values[2] = locked;
		if (fairshare_run_statement(&apply_statuses_stmt, values, NULL) != 1)
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
	static FairshareStatement stop_sent_stmt = {
		.what = "record that a stop was sent",
		.sql = "UPDATE fairshare.jobs SET stop_sent_at = now() "
			"WHERE job_id IN (SELECT job_id FROM fairshare.jobs WHERE job_id = $1 "
			"AND training_job_name = $2 AND stop_sent_at IS NULL FOR NO KEY UPDATE SKIP LOCKED)",
		.argtypes = {INT8OID, TEXTOID},
	};
	Datum		values[2] = {Int64GetDatum(t->job_id), CStringGetTextDatum(t->name)};

	fairshare_xact_begin("fairshare dispatcher: stop sent");
	/* skipped while another transaction holds the row: a resent stop is harmless */
	fairshare_run_statement(&stop_sent_stmt, values, NULL);
	fairshare_xact_commit();
}
