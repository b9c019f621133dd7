/*-------------------------------------------------------------------------
 *
 * progress.h
 *		A callback that long work calls now and then, so that the process
 *		running it can keep its other duties moving.
 *
 * A scheduling pass that places thousands of jobs takes a while.  A process
 * that has other work in flight meanwhile (network calls, say) registers a
 * callback with fairshare_progress_register(); the pass and the job
 * transition trigger call fairshare_progress() for every job row they
 * handle, and that calls the callback at most every
 * FAIRSHARE_PROGRESS_INTERVAL_US.  The callback must not touch the
 * database and must not raise an error.  With none registered -- every
 * ordinary backend -- fairshare_progress() costs a test.
 *
 * This is the bottom of the layering: it includes nothing of fairshare's,
 * so that tables/ and sql_api/ can report progress without knowing who
 * listens.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_PROGRESS_H
#define FAIRSHARE_PROGRESS_H

typedef void (*FairshareProgressCallback) (void *arg);

#define FAIRSHARE_PROGRESS_INTERVAL_US	2000

/* Register callback(arg), replacing any; NULL unregisters. */
extern void fairshare_progress_register(FairshareProgressCallback callback, void *arg);

extern FairshareProgressCallback fairshare_progress_callback;
extern void fairshare_progress_call(void);

static inline void
fairshare_progress(void)
{
	if (fairshare_progress_callback != NULL)
		fairshare_progress_call();
}

#endif							/* FAIRSHARE_PROGRESS_H */
