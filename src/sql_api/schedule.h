/*-------------------------------------------------------------------------
 *
 * schedule.h
 *		Pieces of a scheduling pass shared by schedule(), queue_snapshot()
 *		and explain().
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
 * Take the pass lock and move new jobs into their queues (at most
 * fairshare_pass_placement_target of them, when set); returns whether new
 * jobs were left for the next pass.  With fairshare_pass_lock_nowait and
 * the lock held elsewhere, does neither and sets fairshare_pass_lock_missed.
 */
extern bool fairshare_pass_begin(void);

/*
 * Why a job is placed, in words.  placed_per_share accumulates the
 * instances this pass placed per share (zeroed by the caller).
 */
extern char *fairshare_placement_reason(const PassWorld *world, const FsDecision *decision,
								 int64 *placed_per_share);

#endif							/* FAIRSHARE_SCHEDULE_H */
