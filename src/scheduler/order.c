/*-------------------------------------------------------------------------
 *
 * order.c
 *		fs_queue_order(): the order in which a queue's loaded RUNNABLE jobs
 *		would be placed, for fairshare.queue_snapshot().
 *
 * It walks the jobs the way a pass does but as if capacity were endless,
 * so each job's position says who is ahead of it:
 *	 FIFO			runnable_at, job_id;
 *	 FAIR_SHARE		lowest (U + n) x weight first, each pick adding its
 *					instances to its share's usage;
 *	 QUOTA_SHARE	jobs within their share's guarantee by priority (each
 *					pick counted into its share), then borrowing offers in
 *					idle_assignment order, then jobs their share cannot hold
 *					now, in share order.
 * Nominated jobs come first, misconfigured jobs last.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include "internal.h"

typedef struct FsOrderWalk
{
	FsPass	   *pass;
	int			queue;
	FsOrderEntry *entries;
	int			n;
	int			max;
	double	   *key;
} FsOrderWalk;

static bool
full(const FsOrderWalk *w)
{
	return w->n >= w->max;
}

static void
emit(FsOrderWalk *w, int job)
{
	FsJobState *js = &w->pass->jobs[job];
	const FsShare *share = &w->pass->in->shares[js->share];
	FsOrderEntry *e;

	if (full(w))
		return;
	e = &w->entries[w->n++];
	e->job_id = js->job->job_id;
	e->share = js->share;
	e->job = (int) (js->job - share->runnable);
	e->position = w->n;
	js->status = FS_JOB_PLACED;
}

static bool
waiting(FsOrderWalk *w, int job)
{
	return w->pass->jobs[job].status == FS_JOB_WAITING && !fs_job_misconfigured(w->pass, job);
}

static void
emit_nominated(FsOrderWalk *w)
{
	FsNominationKind kind;
	FsMerge		m;
	int			job;
	int			share;

	for (kind = FS_NOMINATION_PREEMPTION; kind <= FS_NOMINATION_STARVATION; kind++)
	{
		fs_merge_init(&m, w->pass, w->queue);
		while ((job = fs_merge_next(&m, &share)) != FS_MERGE_END)
			if (job >= 0 && waiting(w, job) && w->pass->jobs[job].job->nomination.kind == kind)
				emit(w, job);
	}
}

static void
emit_in_share_order(FsOrderWalk *w)
{
	FsMerge		m;
	int			job;
	int			share;

	fs_merge_init(&m, w->pass, w->queue);
	while ((job = fs_merge_next(&m, &share)) != FS_MERGE_END)
		if (job >= 0 && waiting(w, job))
			emit(w, job);
}

/* ---------- fair share ---------- */

static int
next_waiting(FsOrderWalk *w, int share)
{
	FsShareState *ss = &w->pass->shares[share];

	while (ss->cursor < ss->first_job + ss->n_jobs && !waiting(w, ss->cursor))
		ss->cursor++;
	return ss->cursor < ss->first_job + ss->n_jobs ? ss->cursor : -1;
}

/* The pass's fair-share order (fair_share.c): lowest (U + n) x weight. */
static bool
fair_before(const void *ctx, int a, int b)
{
	const FsOrderWalk *w = ctx;

	return fs_share_turn_before(w->pass, w->queue, w->key, a, b);
}

static void
push_fair(FsOrderWalk *w, FsHeap *heap, int i)
{
	int			share = w->pass->queues[w->queue].shares[i];
	int			job = next_waiting(w, share);
	double		weight = w->pass->in->shares[share].weight > 0 ? w->pass->in->shares[share].weight : 1.0;

	if (job < 0)
		return;
	w->key[i] = (w->pass->shares[share].usage + w->pass->jobs[job].job->instance_count) * weight;
	fs_heap_push(heap, i);
}

static void
emit_fair_share_order(FsOrderWalk *w)
{
	FsQueueState *qs = &w->pass->queues[w->queue];
	FsHeap		heap;
	int			i;

	fs_heap_init(&heap, qs->n_shares, fair_before, w, &w->pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		w->pass->shares[qs->shares[i]].cursor = w->pass->shares[qs->shares[i]].first_job;
		push_fair(w, &heap, i);
	}
	while (heap.n > 0 && !full(w))
	{
		int			i_share = fs_heap_pop(&heap);
		int			share = qs->shares[i_share];
		int			job = w->pass->shares[share].cursor;

		w->pass->shares[share].usage += w->pass->jobs[job].job->instance_count;
		emit(w, job);
		push_fair(w, &heap, i_share);
	}
}

/* ---------- quota share ---------- */

/* The first of the job's types its share may take it on under `right', or -1. */
static int
quota_type(FsOrderWalk *w, int job, FsQuotaRight right)
{
	FsJobState *js = &w->pass->jobs[job];
	int			t,
				unit;

	for (t = 0; t < js->job->n_instance_types; t++)
		if (fs_quota_room(w->pass, js->share, js->job->instance_types[t], right, -1, &unit) >=
			js->job->instance_count)
			return js->job->instance_types[t];
	return -1;
}

static void
take_quota(FsOrderWalk *w, int job, int type)
{
	FsJobState *js = &w->pass->jobs[job];

	fs_quota_add(w->pass, js->share, type, js->job->instance_count, 0, 0);
	emit(w, job);
}

/* The pass's borrowing order (quota_share.c): FAIR by key, else oldest offer. */
static bool
borrow_before(const void *ctx, int a, int b)
{
	const FsOrderWalk *w = ctx;
	bool		fair = w->pass->in->queues[w->queue].idle_assignment == FS_IDLE_FAIR;

	return fs_share_turn_before(w->pass, w->queue, fair ? w->key : NULL, a, b);
}

static void
push_borrower(FsOrderWalk *w, FsHeap *heap, int i)
{
	int			share = w->pass->queues[w->queue].shares[i];
	FsShareState *ss = &w->pass->shares[share];
	double		weight = w->pass->in->shares[share].weight > 0 ? w->pass->in->shares[share].weight : 1.0;

	while (ss->cursor < ss->first_job + ss->n_jobs &&
		   (!waiting(w, ss->cursor) || quota_type(w, ss->cursor, FS_RIGHT_MOST) < 0))
		ss->cursor++;
	if (ss->cursor >= ss->first_job + ss->n_jobs)
		return;
	w->key[i] = (double) (fs_quota_borrowed(w->pass, share) +
						  w->pass->jobs[ss->cursor].job->instance_count) / weight;
	fs_heap_push(heap, i);
}

static void
emit_quota_share_order(FsOrderWalk *w)
{
	FsQueueState *qs = &w->pass->queues[w->queue];
	FsMerge		m;
	FsHeap		heap;
	int			job,
				i,
				share;

	/* within the guarantee, by priority */
	fs_merge_init(&m, w->pass, w->queue);
	while ((job = fs_merge_next(&m, &share)) != FS_MERGE_END)
	{
		int			type;

		if (job < 0 || !waiting(w, job))
			continue;
		type = quota_type(w, job, FS_RIGHT_GUARANTEE);
		if (type >= 0)
			take_quota(w, job, type);
	}

	/* borrowing offers */
	fs_heap_init(&heap, qs->n_shares, borrow_before, w, &w->pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		w->pass->shares[qs->shares[i]].cursor = w->pass->shares[qs->shares[i]].first_job;
		push_borrower(w, &heap, i);
	}
	while (heap.n > 0 && !full(w))
	{
		int			i_share = fs_heap_pop(&heap);

		share = qs->shares[i_share];
		job = w->pass->shares[share].cursor;
		take_quota(w, job, quota_type(w, job, FS_RIGHT_MOST));
		push_borrower(w, &heap, i_share);
	}
}

int
fs_queue_order(const FsInput *input, int queue, int max_jobs,
			   const FsAllocator *allocator, FsOrderEntry **order)
{
	FsPass		pass;
	FsOrderWalk w;
	FsQueueState *qs;
	int			total = 0;
	int			i,
				j;

	*order = NULL;
	if (queue < 0 || queue >= input->n_queues)
		return 0;
	fs_pass_begin(&pass, input, allocator);
	qs = &pass.queues[queue];
	for (i = 0; i < qs->n_shares; i++)
		total += pass.shares[qs->shares[i]].n_jobs;

	w.pass = &pass;
	w.queue = queue;
	w.n = 0;
	w.max = (max_jobs > 0 && max_jobs < total) ? max_jobs : total;
	w.entries = fs_alloc_zero(allocator, sizeof(FsOrderEntry) * (size_t) (w.max + 1));
	w.key = fs_arena_alloc(&pass.arena, sizeof(double) * (size_t) (qs->n_shares + 1));

	emit_nominated(&w);
	switch (input->queues[queue].policy)
	{
		case FS_POLICY_FIFO:
			break;
		case FS_POLICY_FAIR_SHARE:
			emit_fair_share_order(&w);
			break;
		case FS_POLICY_QUOTA_SHARE:
			emit_quota_share_order(&w);
			break;
	}
	emit_in_share_order(&w);	/* whatever is left, e.g. all of a FIFO queue */

	/* misconfigured jobs last */
	for (i = 0; i < qs->n_shares && !full(&w); i++)
	{
		FsShareState *ss = &pass.shares[qs->shares[i]];

		for (j = ss->first_job; j < ss->first_job + ss->n_jobs; j++)
			if (pass.jobs[j].status == FS_JOB_MISCONFIGURED)
				emit(&w, j);
	}

	fs_pass_abandon(&pass);
	*order = w.entries;
	return w.n;
}
