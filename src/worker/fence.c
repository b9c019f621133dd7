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
 * milliseconds, against a promotion that takes seconds.
 *
 * The request engine sends some creates on its own: the first try of a
 * create that pacing held back, and the retries after a throttle or a 5xx,
 * a backoff later.  So the dispatcher also registers the fence as the
 * engine's create gate (create_gate.h): before every try of a create the
 * engine asks, and the gate answers yes at once if a fence record written
 * less than FENCE_REUSE_MS ago was confirmed, else writes one and waits for
 * its confirmation, as above.  On a deposed primary the engine therefore
 * waits in the gate instead of retrying; a wait that ends without the
 * confirmation (a cancel) makes the create final unsent, and the
 * dispatcher looks it up and creates it again through the fence.
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
#include "utils/backend_status.h"

#include "create_gate.h"
#include "worker/fence.h"

#define FENCE_PREFIX "fairshare.fence"

/*
 * How long a confirmed fence lets creates go without a new one: long
 * enough for a batch's first tries, which start a few milliseconds after
 * the batch's fence; far shorter than a promotion and the new primary's
 * first turn after it.
 */
#define FENCE_REUSE_MS 50

/* When the last fence record that was confirmed had been written; 0: none. */
static TimestampTz last_confirmed_write = 0;

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

#define FENCE_UNCONFIRMED_DETAIL \
	"The wait for them was cancelled, or synchronous_standby_names was changed a moment ago.  " \
	"A primary whose synchronous standbys no longer follow it may have been replaced by a failover."

/*
 * Write a fence record (its position in *lsn) and wait until the
 * synchronous standbys confirm it; returns whether they did (false: the
 * wait was cancelled, or the setting changed a moment ago).  Exits on
 * shutdown or postmaster death.  pg_stat_activity shows activity
 * meanwhile, then the caller's state and query again.
 */
static bool
fence_confirmed(const char *activity, XLogRecPtr *lsn)
{
	TimestampTz written = GetCurrentTimestamp();
	bool		confirmed;
	BackendState state = MyBEEntry ? MyBEEntry->st_state : STATE_IDLE;
	char	   *query = MyBEEntry && MyBEEntry->st_activity_raw[0] ? pstrdup(MyBEEntry->st_activity_raw) : NULL;

	*lsn = LogLogicalMessage(FENCE_PREFIX, "", 0, false);
	XLogFlush(*lsn);
	pgstat_report_activity(STATE_RUNNING, activity);
	SyncRepWaitForLSN(*lsn, false);
	pgstat_report_activity(state, query);
	if (query)
		pfree(query);
	/* The wait ends early on shutdown or postmaster death: exit now, send nothing. */
	CHECK_FOR_INTERRUPTS();

	LWLockAcquire(SyncRepLock, LW_SHARED);
	confirmed = WalSndCtl->lsn[SYNC_REP_WAIT_FLUSH] >= *lsn;
	LWLockRelease(SyncRepLock);
	if (confirmed)
		last_confirmed_write = written;
	return confirmed;
}

/*
 * The engine's create gate (create_gate.h): may a create try go now?
 * Registered by fairshare_fence(), which every batch of creates passes
 * first: so the gate is in place before the engine holds any create.
 */
static bool
fence_gate(void)
{
	XLogRecPtr	lsn;

	if (RecoveryInProgress())
		return false;
	if (!sync_standbys_expected())
		return true;
	if (last_confirmed_write != 0 &&
		GetCurrentTimestamp() < TimestampTzPlusMilliseconds(last_confirmed_write, FENCE_REUSE_MS))
		return true;
	if (fence_confirmed("fence: waiting for the synchronous standbys to confirm this node still leads (a CreateTrainingJob try)",
						&lsn))
		return true;
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("fairshare dispatcher: the synchronous standbys did not confirm the fence at %X/%X; a CreateTrainingJob try is not sent",
					LSN_FORMAT_ARGS(lsn)),
			 errdetail(FENCE_UNCONFIRMED_DETAIL),
			 errhint("Check the cluster's leader (patronictl list); the attempt is looked up and created again through the fence.")));
	return false;
}

void
fairshare_fence(void)
{
	XLogRecPtr	lsn;

	fairshare_create_gate_register(fence_gate);
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("fairshare dispatcher: this server is in recovery; nothing is sent to SageMaker"),
				 errhint("Calls go out from the primary only.")));
	if (!sync_standbys_expected())
		return;
	if (!fence_confirmed("fence: waiting for the synchronous standbys to confirm this node still leads", &lsn))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("fairshare dispatcher: the synchronous standbys did not confirm the fence at %X/%X; no CreateTrainingJob is sent",
						LSN_FORMAT_ARGS(lsn)),
				 errdetail(FENCE_UNCONFIRMED_DETAIL),
				 errhint("Check the cluster's leader (patronictl list); the creates are tried again after a second.")));
}
