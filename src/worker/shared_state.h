/*-------------------------------------------------------------------------
 *
 * shared_state.h
 *		The little shared memory fairshare uses: who the dispatcher is, and
 *		the wake-on-commit signal that backends send it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SHARED_STATE_H
#define FAIRSHARE_SHARED_STATE_H

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/spin.h"

typedef struct FairshareSharedState
{
	slock_t		mutex;			/* protects dispatcher_pid and dispatcher_latch */
	pid_t		dispatcher_pid; /* 0 when no dispatcher runs */
	Latch	   *dispatcher_latch;
	Oid			dispatcher_database;	/* what it works on, once connected */
	pg_atomic_uint64 wake_requests; /* committed transactions that changed jobs */
	pg_atomic_uint64 turns;		/* dispatcher turns completed */
	pg_atomic_uint64 last_turn_end; /* TimestampTz of the last turn's end */
} FairshareSharedState;

/* NULL unless the library was preloaded. */
extern FairshareSharedState *fairshare_shared;

/* Request and attach the shared memory; called from _PG_init when preloading. */
extern void fairshare_shared_state_init(void);

/* The dispatcher announces itself (false if another one is running). */
extern bool fairshare_dispatcher_attach(void);

/* The dispatcher says which database it works on (after connecting). */
extern void fairshare_dispatcher_set_database(Oid database);

/* Set in the dispatcher, so its own changes to jobs do not wake it. */
extern bool fairshare_am_dispatcher;

#endif							/* FAIRSHARE_SHARED_STATE_H */
