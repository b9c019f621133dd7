/*-------------------------------------------------------------------------
 *
 * job_row.c
 *		A row of fairshare.jobs as C arrays, for the triggers written in C.
 *
 * The triggers address columns by name through JobColumn; the attribute
 * numbers are looked up once per relation (they change only if the
 * extension is re-created, which gives the table a new OID).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/htup_details.h"
#include "utils/rel.h"

#include "tables/job_row.h"
#include "tables/lookup.h"

const char *const fairshare_job_column_names[N_JOB_COLUMNS] = {
	"job_id", "job_name", "job_queue", "share_identifier", "quota_share",
	"scheduling_priority", "request", "instance_types", "instance_count",
	"retry_attempts", "evaluate_on_exit", "preemption_retries",
	"attempt_duration_seconds", "tags", "status", "status_reason",
	"created_at", "runnable_at", "scheduled_at", "started_at", "stopped_at",
	"service_environment", "instance_type", "training_job_name",
	"training_job_arn", "attempts", "preemptions", "submitted_by",
	"stop_kind", "stop_reason", "stop_requested_at", "stop_sent_at",
	"preempted_for", "nomination_kind", "nominated_environment",
	"nominated_instance_type", "nominated_at", "submitter_oid"
};

static Oid	columns_relid = InvalidOid;
static int	column_attnum[N_JOB_COLUMNS];

static void
lookup_columns(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);

	if (columns_relid == RelationGetRelid(rel))
		return;

	/*
	 * The columns are found by name, but read as the types fairshare.jobs
	 * gives them: a look-alike table with other types would have its values
	 * read as pointers.  So only fairshare.jobs itself is read.
	 */
	if (RelationGetRelid(rel) != fairshare_catalog_relid("jobs"))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare's job triggers work on fairshare.jobs only, not on \"%s\"",
						RelationGetRelationName(rel))));
	for (int c = 0; c < N_JOB_COLUMNS; c++)
	{
		column_attnum[c] = SPI_fnumber(desc, fairshare_job_column_names[c]);
		if (column_attnum[c] <= 0)
			elog(ERROR, "fairshare.jobs has no column \"%s\"", fairshare_job_column_names[c]);
	}
	columns_relid = RelationGetRelid(rel);
}

void
fairshare_job_row_read(Relation rel, HeapTuple tuple, JobRow *row)
{
	TupleDesc	desc = RelationGetDescr(rel);

	lookup_columns(rel);
	for (int c = 0; c < N_JOB_COLUMNS; c++)
	{
		row->values[c] = heap_getattr(tuple, column_attnum[c], desc, &row->isnull[c]);
		row->changed[c] = false;
	}
}

void
fairshare_job_row_set(JobRow *row, JobColumn column, Datum value, bool isnull)
{
	row->values[column] = isnull ? (Datum) 0 : value;
	row->isnull[column] = isnull;
	row->changed[column] = true;
}

HeapTuple
fairshare_job_row_apply(Relation rel, HeapTuple tuple, const JobRow *row)
{
	int			cols[N_JOB_COLUMNS];
	Datum		values[N_JOB_COLUMNS];
	bool		nulls[N_JOB_COLUMNS];
	int			n = 0;

	lookup_columns(rel);
	for (int c = 0; c < N_JOB_COLUMNS; c++)
	{
		if (!row->changed[c])
			continue;
		cols[n] = column_attnum[c];
		values[n] = row->values[c];
		nulls[n] = row->isnull[c];
		n++;
	}
	if (n == 0)
		return tuple;
	return heap_modify_tuple_by_cols(tuple, RelationGetDescr(rel), n, cols, values, nulls);
}

Form_pg_attribute
fairshare_job_column_attr(Relation rel, JobColumn column)
{
	lookup_columns(rel);
	return TupleDescAttr(RelationGetDescr(rel), column_attnum[column] - 1);
}

const char *
fairshare_job_row_status(const JobRow *row)
{
	if (row->isnull[COL_STATUS])
		return NULL;
	return DatumGetCString(DirectFunctionCall1(enum_out, row->values[COL_STATUS]));
}
