/*-------------------------------------------------------------------------
 *
 * locks.h
 *		The locks fairshare serialises its own work on: scheduling passes,
 *		the dispatcher, alert evaluation, and a role's clientToken.
 *
 * They are advisory locks, but in lock tags SQL cannot name, so that no
 * other session can hold them (see locks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_LOCKS_H
#define FAIRSHARE_LOCKS_H

/*
 * The locks of one database; in pg_locks: locktype 'advisory', classid
 * FAIRSHARE_LOCK_SPACE, objid the lock below, objsubid FAIRSHARE_LOCK_SPACE.
 */
#define FAIRSHARE_LOCK_SPACE	26227	/* "fs" */

typedef enum FairshareLock
{
	FS_LOCK_SCHEDULING_PASS = 1,	/* one pass at a time (transaction) */
	FS_LOCK_DISPATCHER = 2,		/* one dispatcher per database (session) */
	FS_LOCK_ALERT_EVALUATION = 3	/* one evaluate_alerts() at a time */
} FairshareLock;

/*
 * Take a lock in ExclusiveLock mode, for the session (until released or
 * the session ends) or for the transaction.  With wait false, returns
 * false at once when another session holds it; otherwise waits (as any
 * lock wait: lock_timeout applies, and a cancel ends it) and returns true.
 */
extern bool fairshare_lock(FairshareLock lock, bool session, bool wait);

/* Release a session lock; false if this session did not hold it. */
extern bool fairshare_unlock_session(FairshareLock lock);

/*
 * The transaction lock that orders two submissions of one role with one
 * clientToken; key is a hash of both.  In pg_locks: objsubid
 * FAIRSHARE_LOCK_SPACE + 1, classid and objid the key's high and low halves.
 */
extern void fairshare_lock_client_token(uint64 key);

#endif							/* FAIRSHARE_LOCKS_H */
