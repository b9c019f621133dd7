/*-------------------------------------------------------------------------
 *
 * fence.h
 *		The dispatcher's fence: proof, before it sends, that this node still
 *		leads the synchronous standbys that a failover would promote.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_FENCE_H
#define FAIRSHARE_FENCE_H

/*
 * Returns once a WAL record written now has been confirmed by the
 * synchronous standbys (at once when none are configured); raises ERROR
 * when the wait ended without that confirmation, and exits when the
 * server is shutting down or its postmaster died meanwhile.  The first call
 * also registers the fence as the request engine's create gate
 * (create_gate.h), so that every try of a create the engine sends later
 * (after pacing, or a retry after a throttle or a 5xx) passes a fence too.
 */
extern void fairshare_fence(void);

#endif							/* FAIRSHARE_FENCE_H */
