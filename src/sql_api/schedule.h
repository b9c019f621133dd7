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

/* The head of each share a pass loads. */
#define PASS_PREFIX		64

/* Take the pass lock and move new jobs into their queues. */
extern void fairshare_pass_begin(void);

/*
 * Why a job is placed, in words.  placed_per_share accumulates the
 * instances this pass placed per share (zeroed by the caller).
 */
extern char *fairshare_placement_reason(const PassWorld *world, const FsDecision *decision,
								 int64 *placed_per_share);

#endif							/* FAIRSHARE_SCHEDULE_H */
