/* Temporary: the SageMaker side of a turn lands with the client. */
#include "pg_prelude.h"

#include "storage/latch.h"
#include "utils/wait_event.h"

#include "fairshare.h"
#include "worker/dispatch.h"
#include "worker/dispatcher.h"

struct FairshareDispatch
{
	int			unused;
};

FairshareDispatch *
fairshare_dispatch_create(void)
{
	return MemoryContextAllocZero(TopMemoryContext, sizeof(FairshareDispatch));
}

long
fairshare_dispatch_turn(FairshareDispatch *dispatch)
{
	fairshare_dispatcher_exec("SELECT count(*) FROM fairshare.schedule()");
	return fairshare_poll_interval_ms;
}

void
fairshare_dispatch_wait(FairshareDispatch *dispatch, long timeout_ms)
{
	int			rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							   Max(timeout_ms, 1), PG_WAIT_EXTENSION);

	if (rc & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

void
fairshare_dispatch_reset(FairshareDispatch *dispatch)
{
}
