/*-------------------------------------------------------------------------
 *
 * sagemaker_wait.c
 *		The crank of the SageMaker engine: curl's socket and timer
 *		callbacks, the wait on the process latch and curl's sockets, and
 *		the two ways in, fs_sm_wait() (waits) and fs_sm_pump() (never does).
 *
 * One turn (sagemaker_client.c's header says the same with the states):
 * start what may start (start_ready), fire curl's timer if due, collect
 * finished transfers (collect_finished), and if nothing is final, wait on
 * a WaitEventSet of MyLatch, postmaster death and every socket curl asked
 * us to watch, until the earliest of the caller's timeout, curl's timer,
 * the next backoff and the next token.  A set latch ends the wait and the
 * call, unreset, so a commit that wakes the dispatcher is seen at once.
 * CHECK_FOR_INTERRUPTS runs on every turn; the wait event set is freed on
 * every path (PostgreSQL 15 does not track it).
 *
 * The callbacks must not ereport (curl is not prepared to be unwound
 * through): they use malloc and set flags that are checked after curl
 * returns.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include <math.h>
#include <poll.h>

#include "storage/latch.h"
#include "utils/wait_event.h"

#include "aws/curl_prelude.h"
#include "aws/sagemaker_client.h"
#include "aws/sagemaker_internal.h"
#include "settings.h"

/* ----------------------------------------------------- curl callbacks */

/*
 * CURLMOPT_SOCKETFUNCTION: remember which sockets to watch for what.  Must
 * not ereport; a failure to grow the table is reported after curl returns.
 */
int
socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	FsSmClient *c = (FsSmClient *) userp;
	int			i;

	for (i = 0; i < c->nsocks; i++)
		if (c->socks[i].fd == s)
			break;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < c->nsocks)
			c->socks[i] = c->socks[--c->nsocks];
		return 0;
	}
	if (i == c->nsocks)
	{
		if (c->nsocks == c->socks_cap)
		{
			int			cap = c->socks_cap ? c->socks_cap * 2 : 16;
			SockEntry  *n = realloc(c->socks, cap * sizeof(SockEntry));

			if (n == NULL)
			{
				c->socks_oom = true;
				return 0;
			}
			c->socks = n;
			c->socks_cap = cap;
		}
		c->socks[i].fd = s;
		c->nsocks++;
	}
	c->socks[i].what = what;
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: curl's one timer; -1 deletes it. */
int
timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	FsSmClient *c = (FsSmClient *) userp;

	if (timeout_ms < 0)
		c->timer_set = false;
	else
	{
		c->timer_set = true;
		c->timer_at = GetCurrentTimestamp() + (TimestampTz) timeout_ms * 1000;
	}
	return 0;
}

/* ------------------------------------------------------------- waiting */

static void
check_socket_table(FsSmClient *c)
{
	if (c->socks_oom)
	{
		c->socks_oom = false;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory tracking SageMaker connections")));
	}
}

static void
socket_action(FsSmClient *c, curl_socket_t fd, int mask)
{
	int			running;

	FS_CURLM_CHECK(curl_multi_socket_action, (c->multi, fd, mask, &running));
	check_socket_table(c);
}

/* Milliseconds from now to t, rounded up; 0 if t is past. */
static long
ms_until(TimestampTz t, TimestampTz now)
{
	if (t <= now)
		return 0;
	return (long) ((t - now + 999) / 1000);
}

/*
 * How long the engine may sleep: until curl's timer, the first backoff
 * due, or the next token when a request waits only for one; -1 for
 * "until something happens".
 */
static long
next_wake_ms(FsSmClient *c, TimestampTz now)
{
	long		ms = -1;
	dlist_iter	it;

#define CONSIDER(x) do { long x_ = (x); if (ms < 0 || x_ < ms) ms = x_; } while (0)
	if (c->timer_set)
		CONSIDER(ms_until(c->timer_at, now));
	dlist_foreach(it, &c->backoff)
		CONSIDER(ms_until(dlist_container(SmRequest, node, it.cur)->not_before, now));
	if (c->n_queued > 0 && c->n_running < Max(1, fairshare_max_concurrent_requests))
	{
		/* a request waits for a token only, or (requeued just now) for nothing */
		double		rate = Max(1, fairshare_api_rate_limit);
		double		tokens = c->tokens;

		if (c->bucket_at != 0 && now > c->bucket_at)
			tokens += (double) (now - c->bucket_at) / USECS_PER_SEC * rate;
		if (tokens >= 1.0)
			CONSIDER(0);
		else
			CONSIDER((long) ceil((1.0 - tokens) / rate * 1000.0));
	}
#undef CONSIDER
	return ms;
}

/*
 * One WaitEventSetWait on the latch, postmaster death and curl's sockets
 * for at most wait_ms (-1: no limit).  The wait event set lives only in
 * here and is freed whatever happens (PostgreSQL 15 does not track it).
 */
static int
wait_once(FsSmClient *c, long wait_ms, WaitEvent *events, int nevents)
{
	WaitEventSet *volatile wes = NULL;
	volatile int n = 0;
	int			i;

	PG_TRY();
	{
		wes = CreateWaitEventSet(c->scratch, nevents);
		AddWaitEventToSet(wes, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		if (IsUnderPostmaster)
			AddWaitEventToSet(wes, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		for (i = 0; i < c->nsocks; i++)
		{
			uint32		ev = 0;

			if (c->socks[i].what & CURL_POLL_IN)
				ev |= WL_SOCKET_READABLE;
			if (c->socks[i].what & CURL_POLL_OUT)
				ev |= WL_SOCKET_WRITEABLE;
			if (ev)
				AddWaitEventToSet(wes, ev, c->socks[i].fd, NULL, NULL);
		}
		n = WaitEventSetWait(wes, wait_ms, events, nevents, PG_WAIT_EXTENSION);
	}
	PG_CATCH();
	{
		if (wes)
			FreeWaitEventSet(wes);
		PG_RE_THROW();
	}
	PG_END_TRY();
	FreeWaitEventSet(wes);
	return n;
}

/*
 * Wait as wait_once does, then give curl the socket events.  Returns true
 * when the latch is set.
 */
static bool
wait_for_events(FsSmClient *c, long wait_ms)
{
	int			nevents = c->nsocks + 2;
	WaitEvent  *events = palloc(nevents * sizeof(WaitEvent));
	curl_socket_t *fds = palloc(nevents * sizeof(curl_socket_t));
	int		   *masks = palloc(nevents * sizeof(int));
	int			n;
	int			i;
	int			nready = 0;
	bool		latch = false;

	n = wait_once(c, wait_ms, events, nevents);
	for (i = 0; i < n; i++)
	{
		if (events[i].events & WL_LATCH_SET)
			latch = true;
		else if (events[i].events & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
		{
			int			mask = 0;

			if (events[i].events & WL_SOCKET_READABLE)
				mask |= CURL_CSELECT_IN;
			if (events[i].events & WL_SOCKET_WRITEABLE)
				mask |= CURL_CSELECT_OUT;
			fds[nready] = events[i].fd;
			masks[nready] = mask;
			nready++;
		}
	}
	/* curl may change its socket table while we hand it these */
	for (i = 0; i < nready; i++)
		socket_action(c, fds[i], masks[i]);
	return latch;
}

/*
 * Turn the crank (see the top of the file) until something is final (and
 * the caller wants results), the latch is set, or the deadline passes.
 * Runs in the client's scratch context.
 */
static void
drive(FsSmClient *c, bool has_deadline, TimestampTz deadline, int max_done)
{
	for (;;)
	{
		TimestampTz now;
		long		wait_ms;
		bool		last = false;
		bool		latch;

		CHECK_FOR_INTERRUPTS();
		MemoryContextReset(c->scratch);

		now = GetCurrentTimestamp();
		start_ready(c, now, true);
		/* a request just started set curl's timer to "now": send it at once */
		if (c->timer_set && c->timer_at <= GetCurrentTimestamp())
		{
			c->timer_set = false;
			socket_action(c, CURL_SOCKET_TIMEOUT, 0);
		}
		collect_finished(c);
		if (c->n_done > 0 && max_done > 0)
			return;

		now = GetCurrentTimestamp();
		wait_ms = next_wake_ms(c, now);
		if (has_deadline)
		{
			long		left = ms_until(deadline, now);

			if (left == 0)
				last = true;
			if (wait_ms < 0 || left < wait_ms)
				wait_ms = left;
		}
		latch = wait_for_events(c, wait_ms);
		collect_finished(c);
		if ((c->n_done > 0 && max_done > 0) || latch || last)
			return;
	}
}

int
fs_sm_wait(FsSmClient *c, long timeout_ms, FsSmResult **done, int max_done)
{
	MemoryContext caller = CurrentMemoryContext;
	volatile TimestampTz deadline = 0;
	int			n;

	if (c->cleaned)
		elog(ERROR, "SageMaker client used after it was destroyed");
	if (max_done > 0 && done == NULL)
		elog(ERROR, "fs_sm_wait needs a result array");
	if (timeout_ms >= 0)
		deadline = GetCurrentTimestamp() + (TimestampTz) timeout_ms * 1000;

	MemoryContextSwitchTo(c->scratch);
	PG_TRY();
	{
		drive(c, timeout_ms >= 0, deadline, max_done);
	}
	PG_CATCH();
	{
		/* whoever catches this must not find itself in our scratch memory */
		MemoryContextSwitchTo(caller);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	n = max_done > 0 ? hand_out(c, caller, done, max_done) : 0;
	MemoryContextReset(c->scratch);
	return n;
}

/*
 * One turn of the crank that never waits (see fs_sm_pump in the header):
 * start what may start, give curl the socket events that are ready now
 * (poll(2) with a zero timeout on the sockets curl watches), fire curl's
 * timer if due, and keep what became final for the next fs_sm_wait().
 */
static void
pump(FsSmClient *c)
{
	struct pollfd *fds;
	int			nfds = 0;
	int			n;

	start_ready(c, GetCurrentTimestamp(), false);
	if (c->nsocks > 0)
	{
		fds = palloc(sizeof(struct pollfd) * c->nsocks);
		for (int i = 0; i < c->nsocks; i++)
		{
			short		ev = 0;

			if (c->socks[i].what & CURL_POLL_IN)
				ev |= POLLIN;
			if (c->socks[i].what & CURL_POLL_OUT)
				ev |= POLLOUT;
			if (ev == 0)
				continue;
			fds[nfds].fd = c->socks[i].fd;
			fds[nfds].events = ev;
			fds[nfds].revents = 0;
			nfds++;
		}
		n = nfds > 0 ? poll(fds, nfds, 0) : 0;
		/* EINTR and friends: nothing is ready this time round */
		for (int i = 0; n > 0 && i < nfds; i++)
		{
			int			mask = 0;

			if (fds[i].revents == 0)
				continue;
			if (fds[i].revents & (POLLIN | POLLHUP))
				mask |= CURL_CSELECT_IN;
			if (fds[i].revents & POLLOUT)
				mask |= CURL_CSELECT_OUT;
			if (fds[i].revents & (POLLERR | POLLNVAL))
				mask |= CURL_CSELECT_ERR;
			socket_action(c, fds[i].fd, mask);
		}
	}
	if (c->timer_set && c->timer_at <= GetCurrentTimestamp())
	{
		c->timer_set = false;
		socket_action(c, CURL_SOCKET_TIMEOUT, 0);
	}
	collect_finished(c);
	/* what became final just now may free a slot for the queue */
	start_ready(c, GetCurrentTimestamp(), false);
}

void
fs_sm_pump(FsSmClient *c)
{
	MemoryContext caller = CurrentMemoryContext;

	if (c->cleaned)
		elog(ERROR, "SageMaker client used after it was destroyed");
	MemoryContextSwitchTo(c->scratch);
	PG_TRY();
	{
		pump(c);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(caller);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	MemoryContextReset(c->scratch);
}
