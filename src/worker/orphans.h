/*-------------------------------------------------------------------------
 *
 * orphans.h
 *		The orphan sweep (orphans.c): training jobs at SageMaker tagged
 *		with this installation that no job knows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_ORPHANS_H
#define FAIRSHARE_ORPHANS_H

/*
 * The dispatcher calls this before each turn: it sweeps at the first call
 * on a primary and then every fairshare.orphan_sweep_interval (0: never),
 * in a transaction of its own, logging a sweep that failed.  Never raises
 * but for an interrupt.
 */
extern void fairshare_orphan_sweep_if_due(void);

#endif							/* FAIRSHARE_ORPHANS_H */
