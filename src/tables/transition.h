/*-------------------------------------------------------------------------
 *
 * transition.h
 *		What the job state machine (transition.c) needs to know from the
 *		scheduling pass.
 *
 * A placement is the pass's decision: only it (or a superuser) may move a
 * job to SCHEDULED and give it an environment and instance type, since the
 * pass knows the environment is one of the queue's, has room, and holds
 * the pass lock an environment's deletion waits for.  The pass sets this
 * while its statement that writes placements runs; a session cannot.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TRANSITION_H
#define FAIRSHARE_TRANSITION_H

extern bool fairshare_pass_placing;

#endif							/* FAIRSHARE_TRANSITION_H */
