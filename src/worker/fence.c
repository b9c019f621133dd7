/*-------------------------------------------------------------------------
 *
 * fence.c
 *		The dispatcher's fence against sending from a deposed primary.
 *
 * Under a high-availability manager (Patroni, docs/ha.md) a primary can
 * keep running after another node was promoted: its manager is hung or
 * cut off and has not demoted it yet.  Its dispatcher would go on sending
 * CreateTrainingJob calls for attempts it had in hand -- creates retried
 * after a 5xx or a lost answer need no write first, so nothing stops them.
 * The new leader sends the same attempts; SageMaker's unique names keep
 * each created once, but two nodes would be dispatching at the same time.
 *
 * The fence: before a batch of creates goes out, the dispatcher writes a
 * small WAL record and waits, as a commit does, until the synchronous
 * standbys have flushed it.  Patroni's synchronous_mode promotes only a
 * synchronous standby, and a promoted standby confirms nothing to its old
 * primary: so a confirmation proves that no failover had happened when
 * the record was written, and a deposed primary's dispatcher waits here
 * instead of sending -- until its manager stops it (the wait ends on
 * shutdown and on postmaster death, and the process exits).  What is left
 * is the moment between the confirmation and the sends, a few
 * milliseconds, against a promotion that takes seconds -- and the request
 * engine's own retries of a create sent before (after a throttle or a 5xx,
 * with backoff), which go on for that call's retry span; SageMaker's unique
 * names keep them from creating anything twice.
 *
 * Without synchronous standbys (one node, asynchronous replication, or
 * synchronous_commit below remote_write for the dispatcher) there is
 * nothing to ask and nothing is written: the fence costs nothing and
 * fences nothing (docs/ha.md says why synchronous mode is required).
 *
 * The record is a non-transactional logical decoding message with the
 * prefix "fairshare.fence" and an empty body; physical replicas replay it
 * as a no-op.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/xlog.h"
#include "pgstat.h"
#include "replication/message.h"
#include "replication/syncrep.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/lwlock.h"

#include "worker/fence.h"

#define FENCE_PREFIX "fairshare.fence"

/*
 * Does this session ask for synchronous standbys, and are some named?  The
 * setting is read, not the walsenders' shared view of it: how that view is
 * laid out changed within PostgreSQL 15's minor releases.  Just after the
 * setting changed the two can differ for a moment; the fence then finds
 * itself unconfirmed and the creates wait for the next turn.
 */
static bool
sync_standbys_expected(void)
{
	return SyncRepRequested() && SyncRepStandbyNames != NULL && SyncRepStandbyNames[0] != '\0';
}

void
fairshare_fence(void)
{
	XLogRecPtr	lsn;
	bool		confirmed;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("fairshare dispatcher: this server is in recovery; nothing is sent to SageMaker"),
				 errhint("Calls go out from the primary only.")));
	if (!sync_standbys_expected())
		return;

	lsn = LogLogicalMessage(FENCE_PREFIX, "", 0, false);
	XLogFlush(lsn);
	pgstat_report_activity(STATE_RUNNING,
						   "fence: waiting for the synchronous standbys to confirm this node still leads");
	SyncRepWaitForLSN(lsn, false);
	pgstat_report_activity(STATE_IDLE, NULL);
	/* The wait ends early on shutdown or postmaster death: exit now, send nothing. */
	CHECK_FOR_INTERRUPTS();

	LWLockAcquire(SyncRepLock, LW_SHARED);
	confirmed = WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= lsn;
	LWLockRelease(SyncRepLock);
	if (!confirmed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fairshare dispatcher: the synchronous standbys did not confirm the fence at %X/%X; no CreateTrainingJob is sent",
						LSN_FORMAT_ARGS(lsn)),
				 errdetail("The wait for them was cancelled, or synchronous_standby_names was changed a moment ago.  A primary whose synchronous standbys no longer follow it may have been replaced by a failover."),
				 errhint("Check the cluster's leader (patronictl list); the creates are tried again after a second.")));
}
