/*-------------------------------------------------------------------------
 *
 * shared_state.c
 *		Shared memory for the dispatcher, and wake-on-commit.
 *
 * A transaction that inserts or changes jobs should have the dispatcher
 * act on it at once, not at its next poll.  A statement trigger on
 * fairshare.jobs (fairshare._wake_dispatcher) only notes, in the backend,
 * that this transaction changed jobs; a transaction callback sets the
 * dispatcher's latch when the transaction commits.  So a hundred thousand
 * inserts in one transaction make one wake-up, a rollback makes none, and
 * the dispatcher never wakes to find the change not yet visible.  This is
 * pg_net's mechanism.  Only transactions in the dispatcher's own database
 * wake it.
 *
 * The dispatcher's latch pointer is published here under a spinlock, set
 * when it starts and cleared before it detaches from shared memory (the
 * order matters: a backend must never set the latch of a process that has
 * gone and whose PGPROC may be reused).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <signal.h>

#include "commands/trigger.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "worker/shared_state.h"

PG_FUNCTION_INFO_V1(fairshare_wake_dispatcher);
PG_FUNCTION_INFO_V1(fairshare_dispatcher_state);

FairshareSharedState *fairshare_shared = NULL;
bool		fairshare_am_dispatcher = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* This backend's transaction changed jobs; wake the dispatcher at commit. */
static bool wake_at_commit = false;
static bool xact_callback_registered = false;

static void
shared_state_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(FairshareSharedState)));
}

static void
shared_state_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fairshare_shared = ShmemInitStruct("fairshare", sizeof(FairshareSharedState), &found);
	if (!found)
	{
		SpinLockInit(&fairshare_shared->mutex);
		fairshare_shared->dispatcher_pid = 0;
		fairshare_shared->dispatcher_latch = NULL;
		fairshare_shared->dispatcher_database = InvalidOid;
		pg_atomic_init_u64(&fairshare_shared->wake_requests, 0);
		pg_atomic_init_u64(&fairshare_shared->turns, 0);
		pg_atomic_init_u64(&fairshare_shared->last_turn_end, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
fairshare_shared_state_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shared_state_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shared_state_startup;
}

/* Runs before shared memory is detached: unpublish our latch first. */
static void
dispatcher_detach(int code, Datum arg)
{
	SpinLockAcquire(&fairshare_shared->mutex);
	if (fairshare_shared->dispatcher_pid == MyProcPid)
	{
		fairshare_shared->dispatcher_pid = 0;
		fairshare_shared->dispatcher_latch = NULL;
		fairshare_shared->dispatcher_database = InvalidOid;
	}
	SpinLockRelease(&fairshare_shared->mutex);
}

bool
fairshare_dispatcher_attach(void)
{
	pid_t		other;

	if (fairshare_shared == NULL)
		return false;
	SpinLockAcquire(&fairshare_shared->mutex);
	other = fairshare_shared->dispatcher_pid;
	if (other == 0 || other == MyProcPid || kill(other, 0) != 0)
	{
		fairshare_shared->dispatcher_pid = MyProcPid;
		fairshare_shared->dispatcher_latch = MyLatch;
		other = 0;
	}
	SpinLockRelease(&fairshare_shared->mutex);
	if (other != 0)
		return false;
	before_shmem_exit(dispatcher_detach, (Datum) 0);
	fairshare_am_dispatcher = true;
	return true;
}

void
fairshare_dispatcher_set_database(Oid database)
{
	SpinLockAcquire(&fairshare_shared->mutex);
	if (fairshare_shared->dispatcher_pid == MyProcPid)
		fairshare_shared->dispatcher_database = database;
	SpinLockRelease(&fairshare_shared->mutex);
}

static void
wake_xact_callback(XactEvent event, void *arg)
{
	Latch	   *latch = NULL;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (!wake_at_commit)
				break;
			wake_at_commit = false;
			if (fairshare_shared == NULL)
				break;
			/*
			 * Jobs in another database than the dispatcher's are not its
			 * business: waking it would only make it look for nothing.
			 */
			SpinLockAcquire(&fairshare_shared->mutex);
			if (fairshare_shared->dispatcher_database == MyDatabaseId)
				latch = fairshare_shared->dispatcher_latch;
			SpinLockRelease(&fairshare_shared->mutex);
			if (latch != NULL)
				pg_atomic_fetch_add_u64(&fairshare_shared->wake_requests, 1);
			if (latch != NULL)
				SetLatch(latch);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			wake_at_commit = false;
			break;
		case XACT_EVENT_PREPARE:

			/*
			 * COMMIT PREPARED comes later, maybe from another session, and
			 * no callback of ours sees it: the next poll finds those jobs.
			 * The flag must not wake anyone for this session's next
			 * transaction.
			 */
			wake_at_commit = false;
			break;
		default:
			break;
	}
}

/* Statement trigger on fairshare.jobs: wake the dispatcher when we commit. */
Datum
fairshare_wake_dispatcher(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare._wake_dispatcher() must be called as a trigger")));
	if (!fairshare_am_dispatcher)
	{
		if (!xact_callback_registered)
		{
			RegisterXactCallback(wake_xact_callback, NULL);
			xact_callback_registered = true;
		}
		wake_at_commit = true;
	}
	return PointerGetDatum(NULL);
}

/*
 * fairshare.dispatcher_state(): is a dispatcher running, and the counters
 * tests and dashboards read.
 */
Datum
fairshare_dispatcher_state(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	pid_t		pid = 0;
	uint64		last;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "fairshare.dispatcher_state must return a record");
	desc = BlessTupleDesc(desc);
	if (fairshare_shared == NULL)
	{
		memset(nulls, true, sizeof(nulls));
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	}
	SpinLockAcquire(&fairshare_shared->mutex);
	pid = fairshare_shared->dispatcher_pid;
	SpinLockRelease(&fairshare_shared->mutex);
	values[0] = Int32GetDatum(pid);
	nulls[0] = (pid == 0);
	values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&fairshare_shared->wake_requests));
	values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&fairshare_shared->turns));
	last = pg_atomic_read_u64(&fairshare_shared->last_turn_end);
	values[3] = TimestampTzGetDatum((TimestampTz) last);
	nulls[3] = (last == 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
