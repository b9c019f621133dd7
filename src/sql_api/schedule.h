/*-------------------------------------------------------------------------
 *
 * schedule.h
 *		A scheduling pass, run by schedule() and by C callers with options
 *		of their own, and the pieces of it shared with queue_snapshot() and
 *		explain().
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SCHEDULE_H
#define FAIRSHARE_SCHEDULE_H

#include "sql_api/pass_input.h"

/*
 * The head of each share a pass loads.  When a share placed every job
 * loaded for it and has more, schedule() runs the pass again with twice
 * the head, up to PASS_PREFIX_MAX: a burst of free capacity is filled in a
 * few rounds, each of which reloads the placed jobs, rather than in one
 * round per 64 jobs.
 */
#define PASS_PREFIX		64
#define PASS_PREFIX_MAX	4096

/*
 * How a pass runs.  fairshare.schedule(dry_run) runs with all of them
 * zero: it waits for the pass lock and places everything that fits;
 * schedule(dry_run, max_jobs) sets decision_limit.
 */
typedef struct FairsharePassOptions
{
	bool		dry_run;		/* decide, write nothing, take no lock */

	/*
	 * The most jobs the pass places or preempts (a preemption's victims
	 * are written together, so its last may go past it), and the most new
	 * jobs it takes into their queues (0: no limit).  Small passes let the
	 * first creates of a burst go out after milliseconds, not after one
	 * pass over all of it.
	 */
	int			decision_limit;

	/*
	 * Do not wait for the pass lock: when another session holds it (a
	 * schedule() in a transaction left open), do nothing and say so.
	 */
	bool		lock_nowait;
} FairsharePassOptions;

/* What a pass came to, besides its decisions. */
typedef struct FairsharePassOutcome
{
	bool		left_work;		/* stopped at decision_limit with work left
								 * (decisions left for the next pass, new
								 * jobs not taken in) */
	bool		lock_missed;	/* lock_nowait, and another session held the
								 * lock: nothing was done */
} FairsharePassOutcome;

/*
 * Run one pass in the caller's transaction (at READ COMMITTED unless a dry
 * run).  Its PLACE and PREEMPT rows go to out when that is not NULL (in
 * schedule()'s row type, desc).
 */
extern void fairshare_pass(const FairsharePassOptions *options, Tuplestorestate *out,
						   TupleDesc desc, FairsharePassOutcome *outcome);

/* Why a job is placed, in words (the core's sentence, and any back-fill). */
extern char *fairshare_placement_reason(const PassWorld *world, const FsDecision *decision);

#endif							/* FAIRSHARE_SCHEDULE_H */
