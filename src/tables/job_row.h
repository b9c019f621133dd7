/*-------------------------------------------------------------------------
 *
 * job_row.h
 *		A row of fairshare.jobs as C arrays, for the triggers written in C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_JOB_ROW_H
#define FAIRSHARE_JOB_ROW_H

#include "access/htup.h"
#include "catalog/pg_attribute.h"
#include "utils/relcache.h"

/* Every column of fairshare.jobs, in table order. */
typedef enum JobColumn
{
	COL_JOB_ID, COL_JOB_NAME, COL_JOB_QUEUE, COL_SHARE_IDENTIFIER, COL_QUOTA_SHARE,
	COL_SCHEDULING_PRIORITY, COL_REQUEST, COL_INSTANCE_TYPES, COL_INSTANCE_COUNT,
	COL_RETRY_ATTEMPTS, COL_EVALUATE_ON_EXIT, COL_PREEMPTION_RETRIES,
	COL_ATTEMPT_DURATION_SECONDS, COL_TAGS, COL_STATUS, COL_STATUS_REASON,
	COL_CREATED_AT, COL_RUNNABLE_AT, COL_SCHEDULED_AT, COL_STARTED_AT, COL_STOPPED_AT,
	COL_SERVICE_ENVIRONMENT, COL_INSTANCE_TYPE, COL_TRAINING_JOB_NAME,
	COL_TRAINING_JOB_ARN, COL_ATTEMPTS, COL_PREEMPTIONS, COL_SUBMITTED_BY,
	COL_STOP_KIND, COL_STOP_REASON, COL_STOP_REQUESTED_AT, COL_STOP_SENT_AT,
	COL_PREEMPTED_FOR, COL_NOMINATION_KIND, COL_NOMINATED_ENVIRONMENT,
	COL_NOMINATED_INSTANCE_TYPE, COL_NOMINATED_AT, COL_SUBMITTER_OID,
	N_JOB_COLUMNS
} JobColumn;

extern const char *const fairshare_job_column_names[N_JOB_COLUMNS];

typedef struct JobRow
{
	Datum		values[N_JOB_COLUMNS];
	bool		isnull[N_JOB_COLUMNS];
	bool		changed[N_JOB_COLUMNS];	/* set by fairshare_job_row_set */
} JobRow;

/* Read a row of fairshare.jobs (rel) into row. */
extern void fairshare_job_row_read(Relation rel, HeapTuple tuple, JobRow *row);

/* Set a column (NULL with isnull); marks it changed. */
extern void fairshare_job_row_set(JobRow *row, JobColumn column, Datum value, bool isnull);

/* The tuple with every changed column replaced. */
extern HeapTuple fairshare_job_row_apply(Relation rel, HeapTuple tuple, const JobRow *row);

/* The pg_attribute entry of a column. */
extern Form_pg_attribute fairshare_job_column_attr(Relation rel, JobColumn column);

/* The row's status label ("RUNNABLE", ...), or NULL. */
extern const char *fairshare_job_row_status(const JobRow *row);

#endif							/* FAIRSHARE_JOB_ROW_H */
