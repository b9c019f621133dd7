/*-------------------------------------------------------------------------
 *
 * progress.c
 *		The progress callback of long work (see progress.h): at most one
 *		registered per process, called at most every
 *		FAIRSHARE_PROGRESS_INTERVAL_US.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "progress.h"

FairshareProgressCallback fairshare_progress_callback = NULL;
static void *progress_arg = NULL;
static TimestampTz last_call = 0;

void
fairshare_progress_register(FairshareProgressCallback callback, void *arg)
{
	fairshare_progress_callback = callback;
	progress_arg = arg;
	last_call = 0;
}

void
fairshare_progress_call(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (now - last_call >= FAIRSHARE_PROGRESS_INTERVAL_US && fairshare_progress_callback != NULL)
	{
		last_call = now;
		fairshare_progress_callback(progress_arg);
	}
}
