/*-------------------------------------------------------------------------
 *
 * locks.c
 *		The locks fairshare serialises its own work on, which no other
 *		session can take.
 *
 * A scheduling pass, the dispatcher's hold on its database, alert
 * evaluation and a role's clientToken each take a heavyweight lock in the
 * advisory lock method, as pg_advisory_lock() does, so pg_locks shows them
 * and lock_timeout, deadlock detection and cancels apply as to any lock.
 * But pg_advisory_lock() and its kin are executable by every login and
 * always set the tag's fourth field to 1 (one bigint key) or 2 (two int4
 * keys).  A lock of fixed, documented keys in that space could be taken by
 * any login, with no fairshare role at all, and would hold back every
 * pass, keep a restarted dispatcher off its database, or stop alerting.
 * fairshare's tags put FAIRSHARE_LOCK_SPACE (and the next value) in the
 * fourth field, which no SQL function can name; only this file takes them.
 *
 * The SQL-callable functions below are the ways SQL takes them:
 * fairshare._lock() for the catalog's own functions (not executable by
 * PUBLIC), and hold_dispatcher_lock()/release_dispatcher_lock() for a
 * superuser who wants no dispatcher to act on the database for a while.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "storage/lmgr.h"
#include "storage/lock.h"

#include "locks.h"

PG_FUNCTION_INFO_V1(fairshare_lock_sql);
PG_FUNCTION_INFO_V1(fairshare_hold_dispatcher_lock);
PG_FUNCTION_INFO_V1(fairshare_release_dispatcher_lock);

/* The fourth tag field of a clientToken's lock. */
#define CLIENT_TOKEN_LOCK_SPACE	(FAIRSHARE_LOCK_SPACE + 1)

static void
set_tag(LOCKTAG *tag, FairshareLock lock)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, FAIRSHARE_LOCK_SPACE, (uint32) lock,
						 FAIRSHARE_LOCK_SPACE);
}

bool
fairshare_lock(FairshareLock lock, bool session, bool wait)
{
	LOCKTAG		tag;

	set_tag(&tag, lock);
	return LockAcquire(&tag, ExclusiveLock, session, !wait) != LOCKACQUIRE_NOT_AVAIL;
}

bool
fairshare_unlock_session(FairshareLock lock)
{
	LOCKTAG		tag;

	set_tag(&tag, lock);
	return LockRelease(&tag, ExclusiveLock, true);
}

void
fairshare_lock_client_token(uint64 key)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (key >> 32), (uint32) key,
						 CLIENT_TOKEN_LOCK_SPACE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/*
 * fairshare._lock(what text): take, for the transaction, the lock of
 * 'scheduling pass' or 'alert evaluation' (waiting for it).
 */
Datum
fairshare_lock_sql(PG_FUNCTION_ARGS)
{
	char	   *what;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the lock to take is required")));
	what = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(what, "scheduling pass") == 0)
		(void) fairshare_lock(FS_LOCK_SCHEDULING_PASS, false, true);
	else if (strcmp(what, "alert evaluation") == 0)
		(void) fairshare_lock(FS_LOCK_ALERT_EVALUATION, false, true);
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("there is no fairshare lock \"%s\"", what),
				 errhint("The locks are 'scheduling pass' and 'alert evaluation'.")));
	PG_RETURN_VOID();
}

/*
 * fairshare.hold_dispatcher_lock(wait boolean): take the dispatcher's lock
 * for this session.  While it holds it, no dispatcher acts on the database
 * (one that starts waits, and says so once in the log); a running
 * dispatcher holds it until it exits, so with wait this waits for that.
 * Returns whether the session holds it.  Like any session lock of the
 * advisory method, pg_advisory_unlock_all() and DISCARD ALL let go of it
 * too.
 */
Datum
fairshare_hold_dispatcher_lock(PG_FUNCTION_ARGS)
{
	bool		wait = PG_ARGISNULL(0) ? true : PG_GETARG_BOOL(0);
	LOCKTAG		tag;
	LockAcquireResult got;

	set_tag(&tag, FS_LOCK_DISPATCHER);
	got = LockAcquire(&tag, ExclusiveLock, true, !wait);
	/* Held once however often it is asked for: one release lets go. */
	if (got == LOCKACQUIRE_ALREADY_HELD || got == LOCKACQUIRE_ALREADY_CLEAR)
		LockRelease(&tag, ExclusiveLock, true);
	PG_RETURN_BOOL(got != LOCKACQUIRE_NOT_AVAIL);
}

/* fairshare.release_dispatcher_lock(): let a dispatcher have it again. */
Datum
fairshare_release_dispatcher_lock(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(fairshare_unlock_session(FS_LOCK_DISPATCHER));
}
