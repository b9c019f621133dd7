/*-------------------------------------------------------------------------
 *
 * schedule.c
 *		fairshare.schedule(dry_run [, max_jobs]): one scheduling pass over
 *		every enabled queue, applied in the caller's transaction.
 *
 * The pass itself is the pure core (src/scheduler/).  This file only moves
 * new jobs into the queue (fairshare._prepare_pass), loads the world
 * (pass_input.c), calls the core, and writes its decisions back:
 *	 PLACE				the job goes to SCHEDULED on (environment, type); the
 *						state machine trigger names the attempt
 *	 PREEMPT			the victim gets a stop request naming the job it makes
 *						room for; it keeps its capacity until stopped
 *	 NOMINATE / DROP	capacity held for a job, or no longer
 *	 MISCONFIGURED		the job stays RUNNABLE with a MISCONFIGURATION reason
 * and the fair shares' decayed usage.  A dry run does all of it but the
 * writes.  Passes are serialised by a transaction lock (locks.c), so the
 * dispatcher and a person running schedule() by hand never decide on the
 * same capacity twice.
 *
 * Only the head of every share is loaded; when a share placed everything
 * that was loaded and has more, the pass runs again on fresh state with a
 * head twice as long (a few times at most), so a burst of free capacity --
 * thousands of jobs -- is filled in one call of a few rounds.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "datums.h"
#include "locks.h"
#include "progress.h"
#include "statement.h"
#include "sql_api/pass_input.h"
#include "sql_api/schedule.h"
#include "tables/catalog_version.h"
#include "tables/job_status.h"
#include "tables/transition.h"

PG_FUNCTION_INFO_V1(fairshare_schedule);

/* How often one call may re-run the pass. */
#define MAX_PASS_ROUNDS	8

/*
 * How often one round decides again when jobs it decided about changed
 * under it; after that it writes what it decided, each write guarded by
 * the job's status.
 */
#define MAX_STALE_RETRIES	3

static FairshareStatement prepare_pass_stmt = {
	.what = "move new jobs into their queues",
	.sql = "SELECT fairshare._prepare_pass($1)",
	.argtypes = {INT4OID},
};

/*
 * Take the pass lock and move new jobs into their queues (at most
 * decision_limit of them, when it is above 0); returns whether new jobs
 * were left for the next pass.  With lock_nowait and the lock held
 * elsewhere, does neither and sets *lock_missed.
 */
static bool
pass_begin(const FairsharePassOptions *options, bool *lock_missed)
{
	Datum		values[1] = {Int32GetDatum(options->decision_limit)};
	bool		isnull;

	/*
	 * Passes are serialised by the pass lock (locks.c), which
	 * fairshare._jobs_placed_on() (10_catalog.sql) takes too, to count a
	 * service environment's placed jobs after any pass placing one commits.
	 */
	*lock_missed = !fairshare_lock(FS_LOCK_SCHEDULING_PASS, false, !options->lock_nowait);
	if (*lock_missed)
		return false;
	if (fairshare_run_statement(&prepare_pass_stmt, values, options->decision_limit > 0 ? NULL : "n") != 1)
		elog(ERROR, "fairshare._prepare_pass() returned %llu rows", (unsigned long long) SPI_processed);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Why a job was placed, for schedule()'s reason column and its
 * status_reason: the core's sentence (src/scheduler/explain.c), and, when
 * it back-fills room held for a starving job, that it does: that job waits
 * for this one no longer than its own hold promised (a time, which only
 * PostgreSQL formats).
 */
char *
fairshare_placement_reason(const PassWorld *w, const FsDecision *d)
{
	char	   *reason = fairshare_decision_text(w, d);

	if (d->backfill_for_job_id == 0)
		return reason;
	if (d->backfill_gone_by > 0)
		return psprintf("%s; back-fills room held for starving job %lld: its time limit ends it "
						"by %s, before that room is complete",
						reason, (long long) d->backfill_for_job_id,
						timestamptz_to_str((TimestampTz) d->backfill_gone_by));
	return psprintf("%s; back-fills room held for starving job %lld that it will not need: "
					"jobs whose time limits end them by %s give back all it needs",
					reason, (long long) d->backfill_for_job_id,
					timestamptz_to_str((TimestampTz) d->backfill_complete_by));
}

/* Arrays of one kind of decision, written back in one statement. */
typedef struct DecisionBatch
{
	int			n;
	Datum	   *ids;
	Datum	   *a;
	Datum	   *b;
	Datum	   *c;
	Datum	   *d;
	Datum	   *e;
} DecisionBatch;

static void
batch_init(DecisionBatch *batch, int capacity)
{
	batch->n = 0;
	batch->ids = palloc(sizeof(Datum) * Max(capacity, 1));
	batch->a = palloc(sizeof(Datum) * Max(capacity, 1));
	batch->b = palloc(sizeof(Datum) * Max(capacity, 1));
	batch->c = palloc(sizeof(Datum) * Max(capacity, 1));
	batch->d = palloc(sizeof(Datum) * Max(capacity, 1));
	batch->e = palloc(sizeof(Datum) * Max(capacity, 1));
}

/*
 * Placements and preemptions are written in one statement each: a pass
 * from idle capacity can place a thousand jobs, and per-row statements
 * would cost more than the decisions.
 */
static FairshareStatement place_stmt = {
	.what = "write placements",
	.sql = "UPDATE fairshare.jobs j SET status = 'SCHEDULED', service_environment = d.env, "
		"instance_type = d.type, status_reason = d.reason "
		"FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS d(id, env, type, reason) "
		"WHERE j.job_id = d.id AND j.status = 'RUNNABLE'",
	.argtypes = {INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID},
};
static FairshareStatement preempt_stmt = {
	.what = "write preemptions",
	.sql = "UPDATE fairshare.jobs j SET stop_kind = 'PREEMPT', stop_reason = d.reason, "
		"stop_requested_at = now(), preempted_for = d.for_job "
		"FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS d(id, reason, for_job) "
		"WHERE j.job_id = d.id AND j.status IN " FS_PLACED_STATUSES_SQL " "
		"AND j.stop_kind IS NULL",
	.argtypes = {INT8ARRAYOID, TEXTARRAYOID, INT8ARRAYOID},
};

static void
write_placements(DecisionBatch *places, DecisionBatch *preempts)
{
	if (places->n > 0)
	{
		Datum		v[4];

		v[0] = fairshare_int8_array(places->ids, places->n);
		v[1] = fairshare_text_array(places->a, places->n);
		v[2] = fairshare_text_array(places->b, places->n);
		v[3] = fairshare_text_array(places->c, places->n);
		fairshare_pass_placing = true;
		PG_TRY();
		{
			fairshare_run_statement(&place_stmt, v, NULL);
		}
		PG_FINALLY();
		{
			fairshare_pass_placing = false;
		}
		PG_END_TRY();
	}
	if (preempts->n > 0)
	{
		Datum		v[3];

		v[0] = fairshare_int8_array(preempts->ids, preempts->n);
		v[1] = fairshare_text_array(preempts->a, preempts->n);
		v[2] = fairshare_int8_array(preempts->b, preempts->n);
		fairshare_run_statement(&preempt_stmt, v, NULL);
	}
}

/*
 * Does decision i begin a write the budget counts: a placement, or the
 * first victim of a preemption (its other victims and its nomination
 * follow it at once: commit() in src/scheduler/preemption.c)?
 */
static bool
begins_counted_write(const FsResult *r, int i)
{
	const FsDecision *d = &r->decisions[i];

	return d->kind == FS_DECISION_PLACE ||
		(d->kind == FS_DECISION_PREEMPT && (i == 0 || r->decisions[i - 1].kind != FS_DECISION_PREEMPT));
}

/*
 * The first decision a pass with `budget' jobs left to place, preempt or
 * reclaim for (-1: no limit) leaves out: the next placement or preemption
 * once the budget is spent (see handle_decisions); r->n_decisions if none.
 * Its decisions before that are what the pass locks and writes.  *spent:
 * the jobs those count (fs_decision_counted()).
 */
static int
decisions_cut(const FsResult *r, int budget, int *spent)
{
	int			left = budget;

	*spent = 0;
	for (int i = 0; i < r->n_decisions; i++)
	{
		if (budget >= 0 && left == 0 && begins_counted_write(r, i))
			return i;
		if (fs_decision_counted(r, i))
		{
			(*spent)++;
			if (left > 0)
				left--;
		}
	}
	return r->n_decisions;
}

/*
 * Jobs of this call that another transaction holds locked, sorted: the
 * pass decides around them (fairshare_world_treat_as_busy) and writes
 * nothing about them.
 */
typedef struct BusyJobs
{
	int64	   *ids;
	int			n;
	int			cap;
} BusyJobs;

static int
int64_value_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

static bool
is_busy(const BusyJobs *busy, int64 job_id)
{
	return busy->n > 0 &&
		bsearch(&job_id, busy->ids, busy->n, sizeof(int64), int64_value_cmp) != NULL;
}

static void
add_busy(BusyJobs *busy, int64 job_id)
{
	if (is_busy(busy, job_id))
		return;
	if (busy->n == busy->cap)
	{
		busy->cap = Max(16, busy->cap * 2);
		busy->ids = busy->ids ? repalloc(busy->ids, sizeof(int64) * busy->cap)
			: palloc(sizeof(int64) * busy->cap);
	}
	busy->ids[busy->n++] = job_id;
	qsort(busy->ids, busy->n, sizeof(int64), int64_value_cmp);
}

/* Does writing this decision need a row the pass could not lock? */
static bool
decision_touches_busy(const BusyJobs *busy, const FsDecision *d)
{
	return busy != NULL &&
		(is_busy(busy, d->job_id) ||
		 (d->kind == FS_DECISION_PREEMPT && d->for_job_id > 0 && is_busy(busy, d->for_job_id)));
}

/*
 * Nominations, new and dropped, and the reasons of misconfigured jobs: in
 * one statement each too.  A quota burst nominates every job it reclaims
 * for, and one statement per nomination (each with the jobs' statement
 * triggers) was two fifths of such a pass.  They are written before the
 * placements, as they were when each was written at once: a placement
 * clears the nomination of the job it places (src/tables/transition.c).
 */
static FairshareStatement nominate_stmt = {
	.what = "write nominations",
	.sql = "UPDATE fairshare.jobs j SET nomination_kind = d.kind, nominated_environment = d.env, "
		"nominated_instance_type = d.type, nominated_at = d.at, status_reason = d.reason "
		"FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[]) "
		"AS d(id, kind, env, type, at, reason) "
		"WHERE j.job_id = d.id AND j.status = 'RUNNABLE'",
	.argtypes = {INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID, TEXTARRAYOID},
};
static FairshareStatement drop_nomination_stmt = {
	.what = "drop nominations",
	.sql = "UPDATE fairshare.jobs j SET nomination_kind = NULL, nominated_environment = NULL, "
		"nominated_instance_type = NULL, nominated_at = NULL "
		"FROM unnest($1::bigint[]) AS d(id) "
		"WHERE j.job_id = d.id AND j.status = 'RUNNABLE'",
	.argtypes = {INT8ARRAYOID},
};
static FairshareStatement misconfigured_stmt = {
	.what = "write why jobs are misconfigured",
	.sql = "UPDATE fairshare.jobs j SET status_reason = d.reason "
		"FROM unnest($1::bigint[], $2::text[]) AS d(id, reason) "
		"WHERE j.job_id = d.id AND j.status = 'RUNNABLE' AND j.status_reason IS DISTINCT FROM d.reason",
	.argtypes = {INT8ARRAYOID, TEXTARRAYOID},
};

/* A nomination change's job and its place among the round's changes. */
typedef struct ChangeOrder
{
	int64		job_id;
	int			position;
} ChangeOrder;

static int
change_order_cmp(const void *a, const void *b)
{
	const ChangeOrder *x = a;
	const ChangeOrder *y = b;

	if (x->job_id != y->job_id)
		return x->job_id < y->job_id ? -1 : 1;
	return (x->position > y->position) - (x->position < y->position);
}

/*
 * Write the nomination changes of a round: changes holds them in the order
 * they were decided, drop[i] for a dropped one.  A job's last change is
 * the one that stands (a nomination dropped at the start of the pass and
 * made again later), so only that one is written.
 */
static void
write_nominations(const DecisionBatch *changes, const bool *drop)
{
	DecisionBatch made;
	DecisionBatch dropped;
	ChangeOrder *order;

	if (changes->n == 0)
		return;
	batch_init(&made, changes->n);
	batch_init(&dropped, changes->n);
	order = palloc(sizeof(ChangeOrder) * changes->n);
	for (int i = 0; i < changes->n; i++)
	{
		order[i].job_id = DatumGetInt64(changes->ids[i]);
		order[i].position = i;
	}
	qsort(order, changes->n, sizeof(ChangeOrder), change_order_cmp);
	for (int k = 0; k < changes->n; k++)
	{
		int			i = order[k].position;

		if (k + 1 < changes->n && order[k + 1].job_id == order[k].job_id)
			continue;			/* the job changes again later */
		if (drop[i])
			dropped.ids[dropped.n++] = changes->ids[i];
		else
		{
			made.ids[made.n] = changes->ids[i];
			made.a[made.n] = changes->a[i];
			made.b[made.n] = changes->b[i];
			made.c[made.n] = changes->c[i];
			made.d[made.n] = changes->d[i];
			made.e[made.n] = changes->e[i];
			made.n++;
		}
	}
	if (dropped.n > 0)
	{
		Datum		v[1] = {fairshare_int8_array(dropped.ids, dropped.n)};

		fairshare_run_statement(&drop_nomination_stmt, v, NULL);
	}
	if (made.n > 0)
	{
		Datum		v[6];

		v[0] = fairshare_int8_array(made.ids, made.n);
		v[1] = fairshare_text_array(made.a, made.n);
		v[2] = fairshare_text_array(made.b, made.n);
		v[3] = fairshare_text_array(made.c, made.n);
		v[4] = PointerGetDatum(construct_array(made.d, made.n, TIMESTAMPTZOID, sizeof(TimestampTz),
											   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		v[5] = fairshare_text_array(made.e, made.n);
		fairshare_run_statement(&nominate_stmt, v, NULL);
	}
}

static void
write_misconfigured(DecisionBatch *misconfigured)
{
	Datum		v[2];

	if (misconfigured->n == 0)
		return;
	v[0] = fairshare_int8_array(misconfigured->ids, misconfigured->n);
	v[1] = fairshare_text_array(misconfigured->a, misconfigured->n);
	fairshare_run_statement(&misconfigured_stmt, v, NULL);
}

/*
 * The jobs that a decision from `cut' on is about (placed, nominated,
 * preempted or preempted for), sorted, in *n.
 */
static int64 *
jobs_decided_from(const FsResult *r, int cut, int *n)
{
	int64	   *later = palloc(sizeof(int64) * 2 * Max(r->n_decisions - cut, 1));

	*n = 0;
	for (int i = cut; i < r->n_decisions; i++)
	{
		later[(*n)++] = r->decisions[i].job_id;
		if (r->decisions[i].kind == FS_DECISION_PREEMPT)
			later[(*n)++] = r->decisions[i].for_job_id;
	}
	qsort(later, *n, sizeof(int64), int64_value_cmp);
	return later;
}

/*
 * Is the dropped nomination of decision d one to leave as it is (see
 * handle_decisions)?  later: jobs_decided_from the cut.
 */
static bool
drop_withheld(const FsResult *r, const FsDecision *d, const int64 *later, int n_later)
{
	return (r->decision_limit_reached && d->reclaim_waits) ||
		(n_later > 0 && bsearch(&d->job_id, later, n_later, sizeof(int64), int64_value_cmp) != NULL);
}

/*
 * Emit schedule()'s row for every PLACE and PREEMPT decision and, unless
 * this is a dry run, write every decision back.
 *
 * cut: the first decision left out (decisions_cut).  Once its budget is
 * spent, a bounded pass stops before the next placement or preemption:
 * that decision and every one after it are left out, for the next pass to
 * decide again on what this one wrote.  What is written is so a prefix of
 * the core's decisions, a state the core passed through: nothing written
 * rests on a decision left out (a preemption is never
 * written for room that a placement left out would have taken).  A
 * preemption's victims and its nomination are written together, even
 * past the budget.  A nomination dropped in the prefix for a job that a
 * later decision is about (a reclaim that has waited reclaim_wait, say)
 * stays as it was: the next pass drops it again and goes on from there,
 * where writing the drop alone would have the job start its wait anew.
 * When the core stopped at the limit, the decisions after it were never
 * made, so every waited reclaim's drop stays (the next pass drops it again
 * and reclaims, or finds the job fits).
 * Returns whether any decision was left out.
 */
static bool
handle_decisions(const PassWorld *w, const FsResult *r, int cut, bool dry_run, const BusyJobs *busy,
				 Tuplestorestate *out, TupleDesc desc)
{
	bool		left_out = cut < r->n_decisions;
	DecisionBatch places;
	DecisionBatch preempts;
	DecisionBatch nominations;
	DecisionBatch misconfigured;
	bool	   *drop = palloc(sizeof(bool) * Max(r->n_decisions, 1));
	int			n_later = 0;
	int64	   *later = left_out ? jobs_decided_from(r, cut, &n_later) : NULL;

	batch_init(&places, r->n_decisions);
	batch_init(&preempts, r->n_decisions);
	batch_init(&nominations, r->n_decisions);
	batch_init(&misconfigured, r->n_decisions);
	for (int i = 0; i < cut; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const char *env = d->environment >= 0 ? w->input.environments[d->environment].name : NULL;
		const char *type = d->instance_type >= 0 ? w->input.instance_type_names[d->instance_type] : NULL;
		char	   *reason;

		fairshare_progress();
		if (decision_touches_busy(busy, d))
		{
			/* its row is another transaction's until that commits: next pass */
			if (d->kind == FS_DECISION_PLACE)
				left_out = true;
			continue;
		}

		switch (d->kind)
		{
			case FS_DECISION_PLACE:
			case FS_DECISION_PREEMPT:
				reason = d->kind == FS_DECISION_PLACE ?
					fairshare_placement_reason(w, d) : fairshare_decision_text(w, d);
				{
					Datum		row[5];
					bool		row_nulls[5] = {false, false, false, false, false};

					row[0] = Int64GetDatum(d->job_id);
					row[1] = CStringGetTextDatum(d->kind == FS_DECISION_PLACE ? "PLACE" : "PREEMPT");
					row[2] = CStringGetTextDatum(env);
					row[3] = CStringGetTextDatum(type);
					row[4] = CStringGetTextDatum(reason);
					if (out != NULL)
						tuplestore_putvalues(out, desc, row, row_nulls);
				}
				if (d->kind == FS_DECISION_PLACE)
				{
					places.ids[places.n] = Int64GetDatum(d->job_id);
					places.a[places.n] = CStringGetTextDatum(env);
					places.b[places.n] = CStringGetTextDatum(type);
					places.c[places.n] = CStringGetTextDatum(reason);
					places.n++;
				}
				else
				{
					preempts.ids[preempts.n] = Int64GetDatum(d->job_id);
					preempts.a[preempts.n] = CStringGetTextDatum(reason);
					preempts.b[preempts.n] = Int64GetDatum(d->for_job_id);
					preempts.n++;
				}
				break;
			case FS_DECISION_NOMINATE:
				if (!dry_run)
				{
					int			k = nominations.n++;

					drop[k] = false;
					nominations.ids[k] = Int64GetDatum(d->job_id);
					nominations.a[k] = CStringGetTextDatum(d->nomination_kind == FS_NOMINATION_PREEMPTION ?
														   "PREEMPTION" : "STARVATION");
					nominations.b[k] = CStringGetTextDatum(env);
					nominations.c[k] = CStringGetTextDatum(type);
					nominations.d[k] = TimestampTzGetDatum((TimestampTz) d->nominated_since);
					nominations.e[k] = CStringGetTextDatum(fairshare_decision_text(w, d));
				}
				break;
			case FS_DECISION_DROP_NOMINATION:
				if (!dry_run && !drop_withheld(r, d, later, n_later))
				{
					drop[nominations.n] = true;
					nominations.ids[nominations.n++] = Int64GetDatum(d->job_id);
				}
				break;
			case FS_DECISION_MISCONFIGURED:
				if (!dry_run)
				{
					misconfigured.ids[misconfigured.n] = Int64GetDatum(d->job_id);
					misconfigured.a[misconfigured.n++] = CStringGetTextDatum(fairshare_decision_text(w, d));
				}
				break;
			case FS_DECISION_KEEP_NOMINATION:
				break;
		}
	}
	if (!dry_run)
	{
		write_nominations(&nominations, drop);
		write_misconfigured(&misconfigured);
		write_placements(&places, &preempts);
	}
	return left_out;
}

static int
int64_cmp(const void *a, const void *b)
{
	int64		x = DatumGetInt64(*(const Datum *) a);
	int64		y = DatumGetInt64(*(const Datum *) b);

	return (x > y) - (x < y);
}

/*
 * Lock every job the pass writes a decision about, in job_id order, and
 * check that each is still as the world read it: a waiting job still
 * RUNNABLE at the same priority, a victim still placed, not stopping, at
 * the same priority.
 *
 * The world is read without row locks (a pass must not block on users'
 * transactions it has nothing to do with), so a terminate_job() or
 * update_job_priority() that commits while the pass runs would otherwise
 * have its job preempted for, or be preempted in place of a lower-priority
 * one.  Rows another transaction holds are skipped, not waited for (a
 * session left idle in its transaction must not stall every queue): they
 * are added to *busy, and the caller decides again around them.  Since
 * the pass waits for nobody here, it cannot deadlock with them.
 * Returns false when something changed: the caller reads the world again.
 */
static FairshareStatement lock_decided_stmt = {
	.what = "lock the jobs a pass decided about",
	.sql = "SELECT job_id, status::text, scheduling_priority, stop_kind IS NOT NULL "
		"FROM fairshare.jobs WHERE job_id = ANY($1) ORDER BY job_id FOR NO KEY UPDATE SKIP LOCKED",
	.argtypes = {INT8ARRAYOID},
};

static bool
decisions_still_hold(const PassWorld *w, const FsResult *r, int cut, BusyJobs *busy)
{
	Datum	   *ids = palloc(sizeof(Datum) * (2 * cut + 1));
	int			n = 0;
	int			distinct = 0;
	Datum		v[1];
	bool		hold = true;

	for (int i = 0; i < cut; i++)
	{
		/*
		 * A kept nomination writes nothing: the pass needs no lock on it.
		 * Locking it is a write, and a reclaim burst keeps thousands of
		 * nominations standing until their victims stop.
		 */
		if (r->decisions[i].kind == FS_DECISION_KEEP_NOMINATION)
			continue;
		ids[n++] = Int64GetDatum(r->decisions[i].job_id);
		if (r->decisions[i].kind == FS_DECISION_PREEMPT && r->decisions[i].for_job_id > 0)
			ids[n++] = Int64GetDatum(r->decisions[i].for_job_id);
	}
	if (n == 0)
		return true;
	qsort(ids, n, sizeof(Datum), int64_cmp);
	for (int i = 0; i < n; i++)
		if (i == 0 || DatumGetInt64(ids[i]) != DatumGetInt64(ids[distinct - 1]))
			ids[distinct++] = ids[i];
	v[0] = fairshare_int8_array(ids, distinct);
	fairshare_run_statement(&lock_decided_stmt, v, NULL);
	if (SPI_processed != (uint64) distinct)
	{
		/*
		 * Locked by another transaction (or deleted meanwhile): decide again
		 * around it rather than wait for that commit.  Both lists are in
		 * job_id order.
		 */
		uint64		row = 0;

		for (int i = 0; i < distinct; i++)
		{
			bool		isnull;
			int64		id = DatumGetInt64(ids[i]);

			if (row < SPI_processed &&
				DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, 1, &isnull)) == id)
				row++;
			else
				add_busy(busy, id);
		}
		hold = false;
	}
	for (uint64 row = 0; hold && row < SPI_processed; row++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[row];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		job_id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
		char	   *status = SPI_getvalue(tuple, desc, 2);
		int32		priority = DatumGetInt32(SPI_getbinval(tuple, desc, 3, &isnull));
		bool		stopping = DatumGetBool(SPI_getbinval(tuple, desc, 4, &isnull));
		const PassJobInfo *info = fairshare_world_job(w, job_id);

		if (info == NULL)
			continue;
		if (info->index >= 0)
		{
			const FsRunnableJob *j = &w->input.shares[info->share].runnable[info->index];

			hold = strcmp(status, "RUNNABLE") == 0 && priority == j->priority;
		}
		else
		{
			const FsRunningJob *run = fairshare_world_running(w, job_id);

			hold = run != NULL &&
				fs_status_name_is_placed(status) &&
				priority == run->priority && (!stopping || run->stopping);
		}
	}
	pfree(ids);
	return hold;
}

/*
 * Only for queues that are still there and whose row no transaction holds
 * FOR UPDATE (one deleting the queue, or changing it through the API): a
 * queue's share_usage rows go with it (ON DELETE CASCADE), and an upsert
 * meeting a row of an uncommitted delete would wait for it, then fail the
 * pass on the foreign key.  Such a queue's usage is not written this pass;
 * the next decays from the older row.
 */
static FairshareStatement store_usage_stmt = {
	.what = "store the fair shares' usage",
	.sql = "INSERT INTO fairshare.share_usage AS u (job_queue, share_identifier, usage, updated_at) "
		"SELECT s.q, s.id, s.usage, $4 FROM unnest($1::text[], $2::text[], $3::float8[]) AS s(q, id, usage) "
		"WHERE s.q IN (SELECT k.name FROM fairshare.job_queues k WHERE k.name = ANY ($1) FOR KEY SHARE SKIP LOCKED) "
		"ON CONFLICT (job_queue, share_identifier) DO UPDATE "
		"SET usage = excluded.usage, updated_at = excluded.updated_at",
	.argtypes = {TEXTARRAYOID, TEXTARRAYOID, FLOAT8ARRAYOID, TIMESTAMPTZOID},
};

/*
 * Store the fair shares' decayed usage, in one statement.  Without decay
 * (share_decay_seconds 0) a share's usage is what it holds, and its stored
 * row is left alone while that is the same: at 10,000 shares writing every
 * row was half of a pass on a full cluster.  (With decay the time of the
 * row is what the next decay starts from, so every row is written.)
 */
static void
store_usage(const PassWorld *w, const FsResult *r)
{
	Datum	   *queues = palloc(sizeof(Datum) * Max(w->input.n_shares, 1));
	Datum	   *ids = palloc(sizeof(Datum) * Max(w->input.n_shares, 1));
	Datum	   *usage = palloc(sizeof(Datum) * Max(w->input.n_shares, 1));
	int			n = 0;
	Datum		v[4];

	for (int s = 0; s < w->input.n_shares; s++)
	{
		const FsShare *share = &w->input.shares[s];

		if (w->shares[s].policy != FS_POLICY_FAIR_SHARE)
			continue;
		if (w->input.queues[share->queue].share_decay == 0 && share->usage_at > 0 &&
			Max(r->share_usage[s], 0.0) == share->usage)
			continue;
		queues[n] = CStringGetTextDatum(w->shares[s].queue);
		ids[n] = CStringGetTextDatum(w->shares[s].name);
		usage[n] = Float8GetDatum(Max(r->share_usage[s], 0.0));
		n++;
	}
	if (n == 0)
		return;
	v[0] = fairshare_text_array(queues, n);
	v[1] = fairshare_text_array(ids, n);
	v[2] = PointerGetDatum(construct_array(usage, n, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	v[3] = TimestampTzGetDatum((TimestampTz) w->input.now);
	fairshare_run_statement(&store_usage_stmt, v, NULL);
}

/*
 * Did a share place or nominate every job that was loaded for it while it
 * has more?  Then the next jobs of that share may fit or reclaim too, and
 * the pass runs again on fresh state.  Jobs that can never fit count as
 * taken, and a head with more of them than it was read past is read deeper
 * by the next round, as far beyond them as it was meant to reach
 * (fairshare_note_misconfigured()), whether or not its other jobs were
 * taken: a FIFO queue with a sweep of such jobs at its front, or behind a
 * job that waits, would otherwise not reach the jobs behind them.  And a
 * fair share read to its first job only (a bounded pass's first_only) whose
 * first job waited is read a head by the next round, for back-fill
 * (fairshare_note_waiting_first_jobs()).  (Nominated: a reclaim burst places
 * nothing until its victims stop, and without the next round a share's
 * jobs beyond its head reclaimed only at a later pass.)  The next round
 * loads deeper every share that placed or nominated anything and has more
 * (added to *deeper, kept across rounds): when heads are cut short
 * (PASS_LOAD_MAX, many shares), the shares that place are the ones whose
 * heads run out next, and deepening only the one that stopped the pass
 * moved a burst over 10,000 shares by a few jobs a round.  (Going deeper
 * than the loaded head only for back-fill is not worth a reload each pass:
 * back-fill looks PASS_PREFIX jobs deep into each share, as Slurm's
 * bf_max_job_part does.)
 */
static bool
fairshare_prefix_used_up(const PassWorld *w, const FsResult *r, HTAB **deeper)
{
	int		   *placed = palloc0(sizeof(int) * Max(w->input.n_shares, 1));
	int		   *nominated = palloc0(sizeof(int) * Max(w->input.n_shares, 1));
	int		   *kept = palloc0(sizeof(int) * Max(w->input.n_shares, 1));
	int		   *misconfigured = palloc0(sizeof(int) * Max(w->input.n_shares, 1));
	bool	   *grew = palloc0(sizeof(bool) * Max(w->input.n_shares, 1));
	int		   *decided = palloc(sizeof(int) * Max(w->input.n_shares, 1));
	bool	   *placing = palloc0(sizeof(bool) * Max(w->input.n_shares, 1));
	bool		used_up = false;

	/* each loaded job is placed, nominated, or keeps its nomination at most once */
	for (int i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];

		if (d->share < 0)
			continue;
		if (d->kind == FS_DECISION_PLACE)
			placed[d->share]++;
		else if (d->kind == FS_DECISION_NOMINATE)
			nominated[d->share]++;
		else if (d->kind == FS_DECISION_KEEP_NOMINATION)
			kept[d->share]++;
		else if (d->kind == FS_DECISION_MISCONFIGURED)
			misconfigured[d->share]++;
	}
	(void) fairshare_note_misconfigured(w, misconfigured, grew);
	for (int s = 0; s < w->input.n_shares; s++)
		decided[s] = placed[s] + nominated[s] + kept[s] + misconfigured[s];
	/*
	 * Fair shares read to a first job that waited: their heads, next round.
	 * Not when the budget ended the round: its turn may not have reached
	 * them, and reading heads for shares that were never offered anything
	 * would undo first_only for a burst (a tenth of its pass at 1,000 shares).
	 */
	if (!r->decision_limit_reached && fairshare_note_waiting_first_jobs(w, decided))
		used_up = true;
	for (int s = 0; s < w->input.n_shares; s++)
	{
		const FsShare *share = &w->input.shares[s];
		bool		all_taken = placed[s] + nominated[s] + kept[s] + misconfigured[s] >= share->n_runnable;

		/*
		 * A share that only nominated goes deeper only when it took every
		 * job loaded for it: going deeper for every share that reclaimed
		 * anything read thousands of jobs more in a quota burst, and decided
		 * nothing more with them.
		 */
		placing[s] = share->more_runnable &&
			(placed[s] > 0 || (nominated[s] > 0 && all_taken) || grew[s]);
		if (placing[s] && (all_taken || grew[s]))
			used_up = true;
	}
	if (used_up)
		*deeper = fairshare_deeper_shares(*deeper, w, placing);
	pfree(placed);
	pfree(nominated);
	pfree(kept);
	pfree(misconfigured);
	pfree(grew);
	pfree(decided);
	pfree(placing);
	return used_up;
}

/*
 * Load a round's world (heads of `prefix', at least `least_prefix' a
 * share, deeper ones per fairshare_load_world) and run the core on it,
 * around the jobs other transactions hold, deciding no further than what
 * is left of the budget (-1: no limit) lets the pass write.
 */
static FsResult *
decide_round(PassWorld **world, int prefix, HTAB *deeper, int least_prefix, const BusyJobs *busy,
			 int budget)
{
	FsResult   *result;

	*world = fairshare_load_world(prefix, NULL, NULL, 0, false, deeper, least_prefix, budget);
	fairshare_world_treat_as_busy(*world, busy->ids, busy->n);
	(*world)->input.decision_limit = budget >= 0 ? Max(budget, 1) : 0;
	fairshare_progress();
	result = fairshare_run_core(*world);
	fairshare_progress();
	return result;
}

/*
 * One scheduling pass (see the file's header comment), in the caller's
 * transaction and SPI connection state.  Its rows (PLACE and PREEMPT
 * decisions) go to out, when it is not NULL.
 */
void
fairshare_pass(const FairsharePassOptions *options, Tuplestorestate *out, TupleDesc desc,
			   FairsharePassOutcome *outcome)
{
	bool		dry_run = options->dry_run;
	bool		limited = options->decision_limit > 0;
	int			budget = limited ? options->decision_limit : -1;
	int			cut;
	int			spent;
	bool		left_work = false;
	int			prefix = PASS_PREFIX;
	BusyJobs	busy = {NULL, 0, 0};
	HTAB	   *deeper = NULL;	/* shares to load deeper (fairshare_prefix_used_up) */
	int			guc_level;

	fairshare_require_catalog_version();

	outcome->left_work = false;
	outcome->lock_missed = false;

	/*
	 * Passes are serialised by a lock, which only works if each reads what
	 * the one before it committed: with a transaction snapshot, taken before
	 * the lock, two passes would hand out the same free capacity.
	 */
	if (!dry_run && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("fairshare.schedule() must run at READ COMMITTED isolation"),
				 errdetail("At %s a pass would not see what another pass placed meanwhile, and could give the same capacity twice.",
						   XactIsoLevel == XACT_SERIALIZABLE ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errhint("Call it in its own transaction, or run schedule(true) for a dry run.")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/*
	 * No JIT for the pass's statements: the heads of a thousand shares or
	 * the jobs holding 100,000 instances cost more than jit_above_cost, and
	 * compiling them (about 15 ms each, every pass: the plans are cached,
	 * the compiled code is not) costs more than it saves on rows this few.
	 * Restored when the pass ends, or by the transaction's abort.
	 */
	guc_level = NewGUCNestLevel();
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (!dry_run)
	{
		left_work = pass_begin(options, &outcome->lock_missed);
		if (outcome->lock_missed)
		{
			AtEOXact_GUC(true, guc_level);
			SPI_finish();
			return;
		}
	}

	/* A limited call loads enough of each share's head to reach its limit in one round. */
	if (limited)
		prefix = Min(Max(PASS_PREFIX, options->decision_limit), PASS_PREFIX_MAX);
	/*
	 * Each round after the first loads deeper: `prefix' doubles, the shares
	 * that placed get all of it (deeper), and every other share at least
	 * PASS_PREFIX_MIN << round however many shares there are -- at 10,000
	 * shares a cut of 8 a share stopped each round at the next share that
	 * placed its 8, a few jobs a round.  A bounded pass loads no share
	 * deeper than what is left of its budget, since no share can place
	 * more -- but at least PASS_PREFIX: back-fill looks that deep past the
	 * jobs that do not fit now, whatever the budget.
	 */
	for (int round = 0; round < MAX_PASS_ROUNDS; round++, prefix = Min(prefix * 2, PASS_PREFIX_MAX))
	{
		PassWorld  *world;
		FsResult   *result;
		bool		again;
		bool		round_full;
		int			round_prefix = prefix;
		int			least_prefix = PASS_PREFIX_MIN << round;

		if (limited)
		{
			round_prefix = Min(round_prefix, Max(budget, PASS_PREFIX));
			least_prefix = Min(least_prefix, Max(budget, PASS_PREFIX_MIN));
		}
		fairshare_progress();
		result = decide_round(&world, round_prefix, deeper, least_prefix, &busy, budget);
		cut = decisions_cut(result, budget, &spent);

		/*
		 * A job changed under the pass, or another transaction holds one:
		 * decide again on what is there now, around the held ones.  The last
		 * try is locked too, so that what is written never waits.  Only
		 * what will be written is locked: a bounded pass over a burst
		 * decides thousands of jobs and writes a few hundred of them.
		 */
		for (int retry = 0; !dry_run && !decisions_still_hold(world, result, cut, &busy) &&
			 retry < MAX_STALE_RETRIES; retry++)
		{
			fairshare_world_free(world);
			result = decide_round(&world, round_prefix, deeper, least_prefix, &busy, budget);
			cut = decisions_cut(result, budget, &spent);
		}
		if (handle_decisions(world, result, cut, dry_run, &busy, out, desc) ||
			result->decision_limit_reached)
			left_work = true;
		/*
		 * A bounded round that spent half its budget or more ends the pass
		 * (with work left, if it would have gone on): another round costs
		 * as much reading as a new pass, and the new pass commits what
		 * this one decided first.  A round that spent less goes on, or a
		 * share with room and a long backlog would move a head a pass.
		 */
		round_full = limited && spent * 2 >= budget;
		if (budget >= 0)
			budget = Max(budget - spent, 0);
		if (!dry_run)
			store_usage(world, result);
		again = !dry_run && fairshare_prefix_used_up(world, result, &deeper);
		fairshare_world_free(world);
		/* stopped by the budget or the rounds with jobs it could place: say so */
		if (again && (round_full || round == MAX_PASS_ROUNDS - 1))
			left_work = true;
		if (!again || round_full)
			break;
	}
	outcome->left_work = left_work;

	AtEOXact_GUC(true, guc_level);
	SPI_finish();
}

/*
 * fairshare.schedule(dry_run): a pass with no limit that waits for the lock;
 * fairshare.schedule(dry_run, max_jobs): one that places or preempts at
 * most max_jobs jobs and takes in at most max_jobs new ones, as the
 * dispatcher's passes do (NULL: no limit).
 */
Datum
fairshare_schedule(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FairsharePassOptions options = {0};
	FairsharePassOutcome outcome;

	options.dry_run = PG_ARGISNULL(0) ? false : PG_GETARG_BOOL(0);
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		int32		max_jobs = PG_GETARG_INT32(1);

		if (max_jobs < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_jobs must be at least 1, not %d", max_jobs),
					 errhint("Pass NULL, or call fairshare.schedule(dry_run), for a pass with no limit.")));
		options.decision_limit = max_jobs;
	}
	InitMaterializedSRF(fcinfo, 0);
	fairshare_pass(&options, rsinfo->setResult, rsinfo->setDesc, &outcome);
	return (Datum) 0;
}
