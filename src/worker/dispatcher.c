/*-------------------------------------------------------------------------
 *
 * dispatcher.c
 *		The fairshare dispatcher: a background worker that runs scheduling
 *		passes and carries their decisions out against SageMaker.
 *
 * One per cluster, connected to fairshare.database.  Each *turn*:
 *	 1. a scheduling pass (fairshare.schedule()), in its own transaction;
 *	 2. the work it implies, read in a short transaction: CreateTrainingJob
 *		for placed attempts that have no ARN, StopTrainingJob for stop
 *		requests not yet sent, DescribeTrainingJob for attempts in SageMaker
 *		that are due a poll;
 *	 3. the calls, many in flight at once (dispatch.c), the outcomes of
 *		each batch of answers written in one short transaction as they
 *		arrive (one by one, should the batch fail).
 * No transaction is ever open across an HTTP call.  Between turns the
 * dispatcher waits on its latch, which any committed change to jobs sets
 * (shared_state.c), or for fairshare.poll_interval -- or not at all after a
 * pass that placed jobs, since there may be room for the ones behind them.
 * An ERROR in a turn or in the wait is logged and the loop goes on after a
 * second; it never ends the process.
 *
 * It exits non-zero on SIGTERM (so the postmaster restarts it after a
 * crash, and DROP DATABASE ... WITH (FORCE) can remove it), reloads its
 * settings on SIGHUP (restarting itself if fairshare.database changed),
 * idles while the server is a standby, and holds a session lock (locks.c)
 * so that no second dispatcher can act on the same database.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/xlog.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/snapmgr.h"

#include "locks.h"
#include "settings.h"
#include "statement.h"
#include "tables/catalog_version.h"
#include "tables/lookup.h"
#include "worker/dispatch.h"
#include "worker/dispatcher.h"
#include "worker/log_throttle.h"
#include "worker/orphans.h"
#include "worker/shared_state.h"
#include "worker/xact.h"
#include "worker_session.h"

PGDLLEXPORT void fairshare_dispatcher_main(Datum main_arg);

/* How long to wait before retrying after a turn failed. */
#define ERROR_BACKOFF_MS	1000

void
fairshare_register_dispatcher(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* Start on a hot standby too: it idles there until promoted. */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 2;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "fairshare");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "fairshare_dispatcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "fairshare dispatcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "fairshare dispatcher");
	RegisterBackgroundWorker(&worker);
}

/*
 * Is the extension installed in our database?  *version is its catalog
 * version (in the caller's memory context), NULL when it is not installed.
 */
static bool
extension_installed(char **version)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *found;

	fairshare_xact_begin("fairshare dispatcher: is the extension installed?");
	found = fairshare_installed_version();
	*version = found ? MemoryContextStrdup(caller, found) : NULL;
	fairshare_xact_commit();
	MemoryContextSwitchTo(caller);
	return *version != NULL;
}

/*
 * Take the dispatcher's session lock (locks.c), so that no other process
 * dispatches for this database at the same time.  Held until we exit.
 */
static bool
take_dispatcher_lock(void)
{
	MemoryContext caller = CurrentMemoryContext;
	bool		got;

	StartTransactionCommand();
	got = fairshare_lock(FS_LOCK_DISPATCHER, true, false);
	CommitTransactionCommand();
	/* Committing leaves TopMemoryContext current; the turn after is the caller's. */
	MemoryContextSwitchTo(caller);
	return got;
}

/*
 * Forget what this process knew of the jobs and calls of a catalog that is
 * gone or of another version.
 */
static void
forget_dispatch(FairshareDispatch *volatile *dispatch)
{
	if (*dispatch == NULL)
		return;
	fairshare_dispatch_destroy(*dispatch);
	*dispatch = NULL;
}

static void
wait_for(long timeout_ms)
{
	int			rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							   Max(timeout_ms, 1), PG_WAIT_EXTENSION);

	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

static void
reload_settings(void)
{
	char	   *database = pstrdup(fairshare_database);

	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	if (strcmp(database, fairshare_database) != 0)
	{
		ereport(LOG,
				(errmsg("fairshare dispatcher restarting: fairshare.database changed from \"%s\" to \"%s\"",
						database, fairshare_database)));
		proc_exit(1);
	}
	pfree(database);
}

/*
 * Clean up after an ERROR caught in the main loop: report it, leave the
 * failed transaction, and forget what a half-done turn left behind.
 */
static void
recover_from_error(MemoryContext cxt, FairshareDispatch *dispatch)
{
	ErrorData  *edata;
	int			held;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	/* the same error on every turn is logged once a minute */
	if (fs_log_due(psprintf("turn:%s", edata->message ? edata->message : ""), &held))
	{
		EmitErrorReport();
		if (held > 0)
			ereport(LOG,
					(errmsg("fairshare dispatcher: the error above also ended %d turns in the last minute", held)));
	}
	FreeErrorData(edata);
	FlushErrorState();
	AbortCurrentTransaction();
	pgstat_report_activity(STATE_IDLE, NULL);
	if (dispatch != NULL)
		fairshare_dispatch_reset(dispatch);
}

/*
 * Wait for the latch, or for calls to finish, applying their outcomes.  The
 * outcomes are written in transactions of their own, and the engine may
 * raise (the credential chain failing, say): an ERROR here is a failed turn
 * like any other, not the end of the process.  Returns false after one.
 */
static bool
guarded_wait(MemoryContext cxt, FairshareDispatch *dispatch, long wait_ms)
{
	volatile bool ok = true;

	PG_TRY();
	{
		if (dispatch != NULL)
			fairshare_dispatch_wait(dispatch, wait_ms);
		else if (wait_ms > 0)
			wait_for(wait_ms);
	}
	PG_CATCH();
	{
		recover_from_error(cxt, dispatch);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

void
fairshare_dispatcher_main(Datum main_arg)
{
	MemoryContext turn_context;

	/*
	 * Set inside PG_TRY and read after a longjmp out of it: volatile, or the
	 * compiler may keep them in registers that the longjmp restores stale.
	 */
	volatile bool have_lock = false;
	volatile bool lock_wait_logged = false;
	volatile bool absence_logged = false;
	volatile bool version_logged = false;
	FairshareDispatch *volatile dispatch = NULL;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	if (!fairshare_dispatcher_attach())
	{
		ereport(LOG, (errmsg("fairshare dispatcher: another dispatcher is running; exiting")));
		proc_exit(1);
	}
	/*
	 * Every statement of this session runs as the superuser that owns it:
	 * names must resolve to fairshare's and PostgreSQL's objects only, never
	 * to what a user put in public or another schema on the default path;
	 * and what a user may set for the database (synchronous_commit, say)
	 * must not change what the dispatcher guarantees.
	 */
	fairshare_worker_connect(fairshare_database, FAIRSHARE_SAFE_SEARCH_PATH, "fairshare dispatcher");

	/*
	 * Never the one a person's DDL waits for: DROP EXTENSION, ALTER TABLE,
	 * TRUNCATE take locks in another order than a turn, and a turn waiting
	 * on one of them would deadlock with it.  A turn that cannot have a
	 * lock within this time fails (and is tried again after a second).
	 */
	SetConfigOption("lock_timeout", "500", PGC_SUSET, PGC_S_OVERRIDE);
	fairshare_dispatcher_set_database(MyDatabaseId);
	ereport(LOG, (errmsg("fairshare dispatcher started for database \"%s\"", fairshare_database)));

	turn_context = AllocSetContextCreate(TopMemoryContext, "fairshare dispatcher turn",
										 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		volatile long wait_ms = fairshare_poll_interval_ms;
		volatile bool ok = true;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
			reload_settings();

		/* A standby dispatches nothing; it waits to be promoted. */
		if (RecoveryInProgress())
		{
			pgstat_report_activity(STATE_IDLE, "waiting for promotion");
			wait_for(fairshare_poll_interval_ms);
			continue;
		}

		MemoryContextReset(turn_context);
		MemoryContextSwitchTo(turn_context);
		PG_TRY();
		{
			char	   *version;

			if (!extension_installed(&version))
			{
				/*
				 * Nothing to dispatch.  What this process knew belongs to a
				 * catalog that is gone: forget it, so that an extension
				 * created again starts as the new installation it is.
				 */
				forget_dispatch(&dispatch);
				if (!absence_logged)
					ereport(LOG,
							(errmsg("fairshare dispatcher: extension \"fairshare\" is not installed in database \"%s\"; waiting",
									fairshare_database),
							 errhint("Run CREATE EXTENSION fairshare in it, or set fairshare.database.")));
				absence_logged = true;
				wait_ms = fairshare_poll_interval_ms;
			}
			else if (strcmp(version, FAIRSHARE_CATALOG_VERSION) != 0)
			{
				/*
				 * The library was upgraded and the catalog not yet (or the
				 * other way round): this library's statements would not
				 * fit the tables.  Jobs wait in their tables, and training
				 * jobs go on at SageMaker, until ALTER EXTENSION UPDATE;
				 * the next turn then follows them as usual.
				 */
				forget_dispatch(&dispatch);
				if (!version_logged)
					ereport(LOG,
							(errmsg("fairshare dispatcher: the fairshare catalog in database \"%s\" is version %s, but the library is version %s; waiting",
									fairshare_database, version, FAIRSHARE_CATALOG_VERSION),
							 errhint("%s", fairshare_catalog_version_hint(version, fairshare_database))));
				version_logged = true;
				wait_ms = fairshare_poll_interval_ms;
			}
			else if (!have_lock && !(have_lock = take_dispatcher_lock()))
			{
				/* Say it once, not at every poll while the other session keeps it. */
				if (!lock_wait_logged)
					ereport(LOG,
							(errmsg("fairshare dispatcher: another session holds the dispatcher lock on database \"%s\"; waiting",
									fairshare_database),
							 errhint("Find it with: SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %d AND objid = %d AND objsubid = %d.",
									 FAIRSHARE_LOCK_SPACE, FS_LOCK_DISPATCHER, FAIRSHARE_LOCK_SPACE)));
				lock_wait_logged = true;
				wait_ms = fairshare_poll_interval_ms;
			}
			else
			{
				if (lock_wait_logged)
					ereport(LOG,
							(errmsg("fairshare dispatcher: took the dispatcher lock on database \"%s\"",
									fairshare_database)));
				lock_wait_logged = false;
				absence_logged = false;
				if (version_logged)
					ereport(LOG,
							(errmsg("fairshare dispatcher: the fairshare catalog in database \"%s\" is now version %s; dispatching",
									fairshare_database, FAIRSHARE_CATALOG_VERSION)));
				version_logged = false;
				if (dispatch == NULL)
					dispatch = fairshare_dispatch_create();
				fairshare_orphan_sweep_if_due();	/* first at promotion (orphans.c) */
				wait_ms = fairshare_dispatch_turn(dispatch);
				pg_atomic_fetch_add_u64(&fairshare_shared->turns, 1);
				pg_atomic_write_u64(&fairshare_shared->last_turn_end, (uint64) GetCurrentTimestamp());
			}
		}
		PG_CATCH();
		{
			/* Report, clean up and try again shortly: one bad turn must not kill us. */
			recover_from_error(turn_context, dispatch);
			ok = false;
		}
		PG_END_TRY();

		if (!ok)
			wait_ms = ERROR_BACKOFF_MS;
		if (!guarded_wait(turn_context, dispatch, wait_ms))
			wait_for(ERROR_BACKOFF_MS);
		MemoryContextSwitchTo(TopMemoryContext);
	}
}
