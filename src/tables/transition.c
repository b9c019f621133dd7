/*-------------------------------------------------------------------------
 *
 * transition.c
 *		The BEFORE UPDATE trigger on fairshare.jobs: the job state machine.
 *
 * Only the transitions of docs/lifecycle.md, 'Transitions' are allowed; what was submitted
 * stays as submitted (only scheduling_priority may change); only a
 * scheduling pass or a superuser places a job, and only a superuser (the
 * dispatcher) moves a placed job on to another state, changes the
 * columns that name its training job or record its history, or withdraws
 * or weakens a stop asked for; each transition sets the row's
 * timestamps and placement columns:
 *	 -> RUNNABLE	runnable_at the first time (a job keeps its place in line);
 *					from a placed state the placement and stop are cleared
 *	 -> SCHEDULED	a new attempt: attempts + 1, its training job name
 *	 -> STARTING, RUNNING	started_at
 *	 -> SUCCEEDED, FAILED	stopped_at
 * and status_reason is cleared when the transition gives none of its own.
 *
 * It is C because every placement, every status SageMaker reports and every
 * stop goes through it: a pass that places a thousand jobs should spend
 * its time deciding, not interpreting PL/pgSQL.  It changes only the row;
 * the rows of fairshare.job_events and fairshare.job_attempts that belong
 * to the transitions are written, set-based, by the statement trigger
 * fairshare._record_transitions() (sql/parts/20_lifecycle.sql).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/detoast.h"
#include "commands/trigger.h"
#include "utils/datum.h"
#include "utils/rel.h"

#include "progress.h"
#include "tables/catalog_version.h"
#include "tables/installation.h"
#include "tables/job_row.h"
#include "tables/job_status.h"
#include "tables/transition.h"

PG_FUNCTION_INFO_V1(fairshare_job_transition);

bool		fairshare_pass_placing = false;

/* What a submission fixed, in the order a change is reported. */
static const JobColumn immutable_columns[] = {
	COL_JOB_ID, COL_JOB_NAME, COL_JOB_QUEUE, COL_SHARE_IDENTIFIER, COL_QUOTA_SHARE, COL_REQUEST,
	COL_INSTANCE_TYPES, COL_INSTANCE_COUNT, COL_RETRY_ATTEMPTS, COL_EVALUATE_ON_EXIT,
	COL_PREEMPTION_RETRIES, COL_ATTEMPT_DURATION_SECONDS, COL_TAGS, COL_SUBMITTED_BY,
	COL_CREATED_AT, COL_SUBMITTER_OID
};

static const char *const state_names[N_STATES] = {
	"SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING",
	"SUCCEEDED", "FAILED"
};

/* allowed[from] is the set of states a job may go to from `from'. */
#define S(x) (1 << (x))
static const int allowed[N_STATES] = {
	[ST_SUBMITTED] = S(ST_RUNNABLE) | S(ST_PENDING) | S(ST_FAILED),
	[ST_PENDING] = S(ST_RUNNABLE) | S(ST_FAILED),
	[ST_RUNNABLE] = S(ST_SCHEDULED) | S(ST_PENDING) | S(ST_FAILED),
	[ST_SCHEDULED] = S(ST_STARTING) | S(ST_RUNNING) | S(ST_RUNNABLE) | S(ST_SUCCEEDED) | S(ST_FAILED),
	[ST_STARTING] = S(ST_RUNNING) | S(ST_RUNNABLE) | S(ST_SUCCEEDED) | S(ST_FAILED),
	[ST_RUNNING] = S(ST_RUNNABLE) | S(ST_SUCCEEDED) | S(ST_FAILED),
	[ST_SUCCEEDED] = 0,
	[ST_FAILED] = 0
};

static JobState
state_of(const JobRow *row)
{
	const char *label = fairshare_job_row_status(row);

	for (int s = 0; s < N_STATES; s++)
		if (label && strcmp(label, state_names[s]) == 0)
			return (JobState) s;
	elog(ERROR, "unknown job status \"%s\"", label ? label : "NULL");
	return ST_SUBMITTED;		/* keep compiler quiet */
}

/* Same value?  Compares detoasted bytes when the datums differ as stored. */
static bool
same_value(Relation rel, JobColumn c, const JobRow *a, const JobRow *b)
{
	Form_pg_attribute att;

	if (a->isnull[c] || b->isnull[c])
		return a->isnull[c] == b->isnull[c];
	att = fairshare_job_column_attr(rel, c);
	if (datumIsEqual(a->values[c], b->values[c], att->attbyval, att->attlen))
		return true;
	if (att->attlen == -1)
	{
		struct varlena *x = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(a->values[c]));
		struct varlena *y = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(b->values[c]));

		return VARSIZE_ANY_EXHDR(x) == VARSIZE_ANY_EXHDR(y) &&
			memcmp(VARDATA_ANY(x), VARDATA_ANY(y), VARSIZE_ANY_EXHDR(x)) == 0;
	}
	return false;
}

static void
set_null(JobRow *row, JobColumn c)
{
	fairshare_job_row_set(row, c, (Datum) 0, true);
}

static void
set_now(JobRow *row, JobColumn c)
{
	fairshare_job_row_set(row, c, TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()), false);
}

static void
reject_transition(int64 job_id, JobState from, JobState to)
{
	StringInfoData allowed_list;

	if (allowed[from] == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("job " INT64_FORMAT " cannot go from %s to %s", job_id,
						state_names[from], state_names[to]),
				 errhint("%s is a final state.", state_names[from])));
	initStringInfo(&allowed_list);
	for (int s = 0; s < N_STATES; s++)
		if (allowed[from] & S(s))
			appendStringInfo(&allowed_list, "%s%s", allowed_list.len ? ", " : "", state_names[s]);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("job " INT64_FORMAT " cannot go from %s to %s", job_id,
					state_names[from], state_names[to]),
			 errhint("From %s a job may go to %s.", state_names[from], allowed_list.data)));
}

/*
 * The columns that tell the dispatcher which training job is the job's,
 * where, and whether its stop has been sent: it describes, follows and
 * stops the training job of that name in that environment's endpoint and
 * region, takes its status for the job's, and sends a stop asked for until
 * stop_sent_at says it went.  This trigger names the training job when the
 * job is placed and clears the name when it leaves; the dispatcher records
 * the ARN and the stop.  Changed by hand, a placed job's own training job
 * would be followed by nothing (its attempt still names it, so no orphan
 * sweep reports it) or never stopped, a second one could be created for
 * the same attempt, or another training job taken for the job's and
 * stopped.  So only a superuser (the dispatcher) may change them, and a
 * scheduling pass, whoever runs it, gives a job it places its environment
 * and instance type (transition.h): placed by hand on an environment that
 * does not exist, or is being deleted, a job would be followed by nothing.
 */
static const JobColumn placement_columns[] = {
	COL_TRAINING_JOB_NAME, COL_TRAINING_JOB_ARN, COL_SERVICE_ENVIRONMENT, COL_INSTANCE_TYPE,
	COL_STOP_SENT_AT
};

static void
check_placement_columns(Relation rel, int64 job_id, JobState from, JobState to,
						const JobRow *old_row, const JobRow *new_row)
{
	bool		placing = to == ST_SCHEDULED && from != ST_SCHEDULED;

	if (superuser())
		return;
	if (placing && !fairshare_pass_placing)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("job " INT64_FORMAT " can be placed only by a scheduling pass", job_id),
				 errdetail("A pass places a job on an environment of its queue that has room, and an environment being deleted waits for it."),
				 errhint("Call fairshare.schedule(); fairshare.explain(job_id) says why a job waits.")));
	for (int i = 0; i < lengthof(placement_columns); i++)
	{
		JobColumn	c = placement_columns[i];

		if (placing && (c == COL_SERVICE_ENVIRONMENT || c == COL_INSTANCE_TYPE))
			continue;
		if (!same_value(rel, c, old_row, new_row))
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" of job " INT64_FORMAT " is set by fairshare and cannot be changed",
							fairshare_job_column_names[c], job_id),
					 errdetail("The dispatcher follows and stops the training job that training_job_name, training_job_arn, "
							   "service_environment and instance_type name, and sends a stop until stop_sent_at is set; "
							   "changed by hand, a training job could run on unwatched or unstopped, or another be taken for the job's."),
					 errhint("Only a superuser may correct it.  To move a job, terminate it and submit it again.")));
	}
}

/*
 * The columns that record the job's history, set only by its transitions
 * (and by apply_status(), for preemptions): when it entered its queue (its
 * place in line), was placed, started (its time limit and the work a
 * preemption would lose count from it) and stopped, and how often it was
 * preempted (against preemption_retries).  Changed by hand they would move
 * the job in line or around its limits; only a superuser may correct them.
 */
static void
check_history_columns(Relation rel, int64 job_id, const JobRow *old_row, const JobRow *new_row)
{
	static const JobColumn history_columns[] = {
		COL_RUNNABLE_AT, COL_SCHEDULED_AT, COL_STARTED_AT, COL_STOPPED_AT, COL_PREEMPTIONS
	};

	if (superuser())
		return;
	for (int i = 0; i < lengthof(history_columns); i++)
		if (!same_value(rel, history_columns[i], old_row, new_row))
			ereport(ERROR,
					(errcode(ERRCODE_GENERATED_ALWAYS),
					 errmsg("column \"%s\" of job " INT64_FORMAT " is set by fairshare and cannot be changed",
							fairshare_job_column_names[history_columns[i]], job_id),
					 errdetail("It records the job's history: its place in line, its time limit, the work a preemption "
							   "would lose and its preemption_retries are counted from these columns."),
					 errhint("Only a superuser may correct it.  To move a job in line, change its scheduling_priority.")));
}

/*
 * How strong a stop is: a preemption gives the job back to its queue, a
 * timeout and a terminate end it, and a terminate is the user's word.
 * 0 for none (NULL).
 */
static int
stop_strength(const JobRow *row)
{
	const char *kind;

	if (row->isnull[COL_STOP_KIND])
		return 0;
	kind = TextDatumGetCString(row->values[COL_STOP_KIND]);
	if (strcmp(kind, "PREEMPT") == 0)
		return 1;
	if (strcmp(kind, "TIMEOUT") == 0)
		return 2;
	return 3;					/* TERMINATE (the column's CHECK allows no other) */
}

/*
 * A stop asked for is the dispatcher's to send and SageMaker's to end:
 * the dispatcher stops the training job while stop_kind is set, and what
 * the job becomes once it has stopped follows from the kind.  Withdrawn
 * by hand, a terminated job would run on as if never terminated, and a
 * victim's room, held for the job it was preempted for, would not come
 * or would come to another job.  So anyone but a superuser may only make
 * a stop stronger (a scheduling pass, whoever runs it, makes a preemption
 * a timeout), never weaker or none, nor change when it was asked for or
 * for whom while its kind stays; and a stop is asked for with its time.
 * (terminate_job() runs as the catalog owner, a superuser.)
 */
static void
check_stop_kept(Relation rel, int64 job_id, JobState from, const JobRow *old_row, const JobRow *new_row)
{
	int			old_strength;
	int			new_strength;

	if (!fs_status_is_placed(from) ||
		(old_row->isnull[COL_STOP_KIND] && new_row->isnull[COL_STOP_KIND]) || superuser())
		return;
	old_strength = stop_strength(old_row);
	new_strength = stop_strength(new_row);
	if (new_strength > 0 && new_row->isnull[COL_STOP_REQUESTED_AT])
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("job " INT64_FORMAT " is asked to stop without a stop_requested_at", job_id),
				 errdetail("A stop asked for is counted from stop_requested_at; without it nothing takes the job for stopping."),
				 errhint("Call fairshare.terminate_job(job_id, reason).")));
	if (old_strength > 0 &&
		(new_strength < old_strength ||
		 (new_strength == old_strength &&
		  (!same_value(rel, COL_STOP_REQUESTED_AT, old_row, new_row) ||
		   !same_value(rel, COL_PREEMPTED_FOR, old_row, new_row)))))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("the stop asked for job " INT64_FORMAT " (%s) cannot be withdrawn or weakened",
						job_id, TextDatumGetCString(old_row->values[COL_STOP_KIND])),
				 errdetail("The dispatcher stops its training job while stop_kind is set, and what the job becomes "
						   "once stopped follows from the kind; a preemption's room is held for preempted_for."),
				 errhint("Only a superuser may correct it.  Once stopped, a job can be submitted again.")));
}

Datum
fairshare_job_transition(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	JobRow		old_row;
	JobRow		new_row;
	int64		job_id;
	JobState	from;
	JobState	to;

	fairshare_require_catalog_version();
	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) || !TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare._job_transition() must be a BEFORE UPDATE row trigger")));
	/* a pass moving thousands of jobs spends its time in here */
	fairshare_progress();
	rel = trigdata->tg_relation;
	fairshare_job_row_read(rel, trigdata->tg_trigtuple, &old_row);
	fairshare_job_row_read(rel, trigdata->tg_newtuple, &new_row);
	job_id = DatumGetInt64(old_row.values[COL_JOB_ID]);

	for (int i = 0; i < lengthof(immutable_columns); i++)
	{
		JobColumn	c = immutable_columns[i];

		if (!same_value(rel, c, &old_row, &new_row))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of job " INT64_FORMAT " cannot change after submission",
							fairshare_job_column_names[c], job_id),
					 errhint("Terminate the job and submit a new one.")));
	}
	if (new_row.isnull[COL_SCHEDULING_PRIORITY] ||
		DatumGetInt32(new_row.values[COL_SCHEDULING_PRIORITY]) < 0 ||
		DatumGetInt32(new_row.values[COL_SCHEDULING_PRIORITY]) > 9999)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("scheduling_priority %s is out of range",
						new_row.isnull[COL_SCHEDULING_PRIORITY] ? "NULL" :
						psprintf("%d", DatumGetInt32(new_row.values[COL_SCHEDULING_PRIORITY]))),
				 errhint("scheduling_priority is from 0 to 9999; higher runs first.")));

	from = state_of(&old_row);
	to = state_of(&new_row);

	/*
	 * A finished job is history: its placement, times and reasons say what
	 * happened, and no event would record a change to them.  Only a
	 * superuser may correct one.
	 */
	if (allowed[from] == 0 && !superuser())
		for (int c = 0; c < N_JOB_COLUMNS; c++)
			if (!same_value(rel, (JobColumn) c, &old_row, &new_row))
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("job " INT64_FORMAT " has finished (%s): its column \"%s\" cannot change",
								job_id, state_names[from], fairshare_job_column_names[c]),
						 errhint("The history of a finished job is kept as it happened; only a superuser may correct it.")));

	/*
	 * attempts numbers the job's placements, and the history is keyed by it:
	 * fairshare._record_transitions() ends and starts the attempt the row's
	 * number names.  Changed by hand, it would point an ending job at an
	 * attempt that has ended already.  Only a placement sets it (below).
	 */
	if ((from == to || to != ST_SCHEDULED) && !same_value(rel, COL_ATTEMPTS, &old_row, &new_row))
		ereport(ERROR,
				(errcode(ERRCODE_GENERATED_ALWAYS),
				 errmsg("column \"attempts\" of job " INT64_FORMAT " is set by fairshare and cannot be changed",
						job_id),
				 errhint("Each placement adds one attempt; fairshare.job_attempts has one row per attempt.")));
	check_placement_columns(rel, job_id, from, to, &old_row, &new_row);
	check_history_columns(rel, job_id, &old_row, &new_row);
	check_stop_kept(rel, job_id, from, &old_row, &new_row);
	if (from == to)
		return PointerGetDatum(trigdata->tg_newtuple);
	if (!(allowed[from] & S(to)))
		reject_transition(job_id, from, to);

	/*
	 * A placed job has a training job, or is about to: it leaves the placed
	 * states when SageMaker says that training job ended, or that it never
	 * began.  Moved out by hand, it would leave the training job running,
	 * billed, with nothing to follow or stop it (its name is known, so no
	 * orphan sweep reports it), and a create in flight would record its ARN
	 * on the next attempt.  The dispatcher and the functions that apply
	 * SageMaker's answers run as a superuser; anyone else asks for a stop.
	 * (A DELETE of a placed job is refused to everyone for the same reason,
	 * fairshare._refuse_placed_delete(); this move the dispatcher makes.)
	 */
	if (fs_status_is_placed(from) && !fs_status_is_placed(to) && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("job " INT64_FORMAT " is %s: only fairshare moves it to %s",
						job_id, state_names[from], state_names[to]),
				 errdetail("Its training job would go on running, billed, with nothing to follow or stop it."),
				 errhint("Call fairshare.terminate_job(job_id, reason): the training job is stopped and the job fails once SageMaker says so.")));

	/*
	 * Between the placed states a job follows what SageMaker reports of its
	 * training job.  Moved on by hand before its create was sent, a job
	 * would hold its room with no training job ever made: the dispatcher
	 * creates only for SCHEDULED jobs.
	 */
	if (fs_status_is_placed(from) && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("job " INT64_FORMAT " is %s: only fairshare moves it to %s",
						job_id, state_names[from], state_names[to]),
				 errdetail("A placed job's status is its training job's, as SageMaker reports it; "
						   "the dispatcher creates the training job only while the job is SCHEDULED."),
				 errhint("Call fairshare.terminate_job(job_id, reason) to stop it.")));

	/* status_reason explains the state the job is in now. */
	if (same_value(rel, COL_STATUS_REASON, &old_row, &new_row))
		set_null(&new_row, COL_STATUS_REASON);

	switch (to)
	{
		case ST_RUNNABLE:
			if (old_row.isnull[COL_RUNNABLE_AT])
				set_now(&new_row, COL_RUNNABLE_AT);
			else
				fairshare_job_row_set(&new_row, COL_RUNNABLE_AT, old_row.values[COL_RUNNABLE_AT], false);
			break;
		case ST_SCHEDULED:
			{
				int			attempt = DatumGetInt32(old_row.values[COL_ATTEMPTS]) + 1;

				if (new_row.isnull[COL_SERVICE_ENVIRONMENT] || new_row.isnull[COL_INSTANCE_TYPE])
					ereport(ERROR,
							(errcode(ERRCODE_CHECK_VIOLATION),
							 errmsg("job " INT64_FORMAT " is placed without a service environment and instance type",
									job_id)));
				fairshare_job_row_set(&new_row, COL_ATTEMPTS, Int32GetDatum(attempt), false);
				if (new_row.isnull[COL_TRAINING_JOB_NAME])
					fairshare_job_row_set(&new_row, COL_TRAINING_JOB_NAME,
										  CStringGetTextDatum(fairshare_training_job_name(job_id, attempt)),
										  false);
				set_null(&new_row, COL_TRAINING_JOB_ARN);
				set_now(&new_row, COL_SCHEDULED_AT);
				set_null(&new_row, COL_STARTED_AT);
				set_null(&new_row, COL_STOPPED_AT);
				set_null(&new_row, COL_STOP_KIND);
				set_null(&new_row, COL_STOP_REASON);
				set_null(&new_row, COL_STOP_REQUESTED_AT);
				set_null(&new_row, COL_STOP_SENT_AT);
				set_null(&new_row, COL_PREEMPTED_FOR);
			}
			break;
		case ST_STARTING:
		case ST_RUNNING:
			if (new_row.isnull[COL_STARTED_AT])
				set_now(&new_row, COL_STARTED_AT);
			break;
		case ST_SUCCEEDED:
		case ST_FAILED:
			set_now(&new_row, COL_STOPPED_AT);
			break;
		default:
			break;
	}

	/* Capacity is held only for a job that waits for it. */
	if (to != ST_RUNNABLE)
	{
		set_null(&new_row, COL_NOMINATION_KIND);
		set_null(&new_row, COL_NOMINATED_ENVIRONMENT);
		set_null(&new_row, COL_NOMINATED_INSTANCE_TYPE);
		set_null(&new_row, COL_NOMINATED_AT);
	}

	/* Back in the queue from a placed state: the placement is over. */
	if (fs_status_is_placed(from) && to == ST_RUNNABLE)
	{
		set_null(&new_row, COL_SERVICE_ENVIRONMENT);
		set_null(&new_row, COL_INSTANCE_TYPE);
		set_null(&new_row, COL_TRAINING_JOB_NAME);
		set_null(&new_row, COL_TRAINING_JOB_ARN);
		set_null(&new_row, COL_SCHEDULED_AT);
		set_null(&new_row, COL_STARTED_AT);
		set_null(&new_row, COL_STOP_KIND);
		set_null(&new_row, COL_STOP_REASON);
		set_null(&new_row, COL_STOP_REQUESTED_AT);
		set_null(&new_row, COL_STOP_SENT_AT);
		set_null(&new_row, COL_PREEMPTED_FOR);
	}

	return PointerGetDatum(fairshare_job_row_apply(rel, trigdata->tg_newtuple, &new_row));
}
