/*-------------------------------------------------------------------------
 *
 * job_status.h
 *		The job statuses in C, and which of them hold capacity ("placed").
 *
 * fairshare.job_status (sql/parts/10_catalog.sql) is the type; these are
 * its labels in the same order.  The state machine is allowed[] in
 * tables/transition.c and fairshare.valid_transition() in SQL;
 * test/core/core.test checks that the two say the same.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_JOB_STATUS_H
#define FAIRSHARE_JOB_STATUS_H

typedef enum JobState
{
	ST_SUBMITTED, ST_PENDING, ST_RUNNABLE, ST_SCHEDULED, ST_STARTING, ST_RUNNING,
	ST_SUCCEEDED, ST_FAILED, N_STATES
} JobState;

/*
 * A placed job holds its capacity: from its placement until SageMaker says
 * its attempt ended.  The list for SQL written in C: one definition, so
 * that no statement forgets a status.  (Partial indexes and views in
 * sql/parts write the same list.)
 */
#define FS_PLACED_STATUSES_SQL "('SCHEDULED', 'STARTING', 'RUNNING')"

static inline bool
fs_status_is_placed(JobState s)
{
	return s == ST_SCHEDULED || s == ST_STARTING || s == ST_RUNNING;
}

/* The same for a status label ("RUNNING", ...) read from a row. */
static inline bool
fs_status_name_is_placed(const char *status)
{
	return status != NULL &&
		(strcmp(status, "SCHEDULED") == 0 || strcmp(status, "STARTING") == 0 ||
		 strcmp(status, "RUNNING") == 0);
}

#endif							/* FAIRSHARE_JOB_STATUS_H */
