/*-------------------------------------------------------------------------
 *
 * dispatch.h
 *		One dispatcher turn: the scheduling pass, and carrying out its
 *		decisions against SageMaker.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_DISPATCH_H
#define FAIRSHARE_DISPATCH_H

typedef struct FairshareDispatch FairshareDispatch;

extern FairshareDispatch *fairshare_dispatch_create(void);

/* Run a turn; returns how long (ms) the dispatcher may wait before the next. */
extern long fairshare_dispatch_turn(FairshareDispatch *dispatch);

/* Wait up to timeout_ms for the latch or for calls to finish, applying outcomes. */
extern void fairshare_dispatch_wait(FairshareDispatch *dispatch, long timeout_ms);

/* Forget what a failed turn left half done (it is read again next turn). */
extern void fairshare_dispatch_reset(FairshareDispatch *dispatch);

/*
 * Drop everything: calls in flight are cancelled, attempts forgotten.  For
 * when the extension is gone: what a new one holds is another installation.
 */
extern void fairshare_dispatch_destroy(FairshareDispatch *dispatch);

/*
 * The fairshare:job-submitted tag of the training job named name, of a job
 * submitted at submitted_us (Unix microseconds): that time, a dot, and the
 * hex HMAC-SHA256 of "<name>.<time>" under the installation's tag_key.
 * Only the dispatcher makes it (attempts.c); the orphan sweep checks it.
 */
extern char *fairshare_submission_tag(const char *tag_key, const char *name, int64 submitted_us);

#endif							/* FAIRSHARE_DISPATCH_H */
