/*-------------------------------------------------------------------------
 *
 * share_order.c
 *		The order of a share's jobs, a queue's loaded jobs as one list, and
 *		a share's loaded head used up.
 *
 * The pass (pass.c) sorts each share's loaded jobs with fs_sort_share_jobs;
 * the policies (fifo.c, fair_share.c, quota_share.c) and the snapshot
 * (order.c) walk a queue's jobs with fs_merge_* and stop the pass with
 * fs_prefix_used_up.  These live below all of them, not in the
 * orchestrator, so that calls in the core go one way: pass.c calls the
 * policies, the policies never call pass.c (test/core/core.test checks
 * that the core's files call each other without a cycle).
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include "internal.h"

/*
 * The order of a share's RUNNABLE jobs: FIFO queues by runnable_at then
 * job_id (2.4); fair and quota shares by scheduling_priority descending,
 * then runnable_at, then job_id (2.5, 2.6).  ctx points to the policy.
 */
static int
job_order_cmp(const void *a, const void *b, const void *ctx)
{
	const FsRunnableJob *ja = ((const FsJobState *) a)->job;
	const FsRunnableJob *jb = ((const FsJobState *) b)->job;

	if (*(const FsPolicyKind *) ctx != FS_POLICY_FIFO && ja->priority != jb->priority)
		return ja->priority > jb->priority ? -1 : 1;
	if (ja->runnable_at != jb->runnable_at)
		return ja->runnable_at < jb->runnable_at ? -1 : 1;
	return ja->job_id < jb->job_id ? -1 : (ja->job_id > jb->job_id);
}

/* Sort a share's n loaded jobs into share order. */
void
fs_sort_share_jobs(FsPass *pass, FsJobState *jobs, int n, FsPolicyKind policy)
{
	fs_sort(jobs, n, sizeof(FsJobState), job_order_cmp, &policy, &pass->arena);
}

/*
 * Walk the loaded jobs of a queue's shares as one list in share order
 * (merging the shares' sorted prefixes), e.g. all jobs of a quota-share
 * queue by priority for step 2 of 2.6.  The heap compares keys kept per
 * share (job_order_cmp's fields of its next job), not the jobs: at 10,000
 * shares a step's walk made some 26 comparisons per job, and reaching the
 * jobs through the shares was most of a pass.
 */
static bool
merge_before(const void *ctx, int a, int b)
{
	const FsMerge *m = ctx;
	const FsMergeKey *ka = &m->key[a];
	const FsMergeKey *kb = &m->key[b];

	if (ka->priority != kb->priority)
		return ka->priority > kb->priority;
	if (ka->runnable_at != kb->runnable_at)
		return ka->runnable_at < kb->runnable_at;
	if (ka->job_id != kb->job_id)
		return ka->job_id < kb->job_id;
	if (ka->unloaded != kb->unloaded)
		return !ka->unloaded;	/* real jobs first */
	return a < b;
}

/*
 * The key of the i-th share's next job.  A share past its prefix stands for
 * its next, unloaded job, which comes at the earliest right after its last
 * loaded one.
 */
static void
merge_key(FsMerge *m, int i)
{
	const FsShareState *ss = &m->pass->shares[m->pass->queues[m->queue].shares[i]];
	FsMergeKey *k = &m->key[i];
	int			j = m->cursor[i];
	const FsRunnableJob *job;

	k->unloaded = j == ss->first_job + ss->n_jobs;
	job = m->pass->jobs[k->unloaded ? j - 1 : j].job;
	k->job_id = job->job_id;
	k->runnable_at = job->runnable_at;
	k->priority = m->policy != FS_POLICY_FIFO ? job->priority : 0;
}

void
fs_merge_init(FsMerge *m, FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	int			i;

	m->pass = pass;
	m->queue = queue;
	m->policy = pass->in->queues[queue].policy;
	m->cursor = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) (qs->n_shares + 1));
	m->key = fs_arena_alloc(&pass->arena, sizeof(FsMergeKey) * (size_t) (qs->n_shares + 1));
	fs_heap_init(&m->heap, qs->n_shares, merge_before, m, &pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		FsShareState *ss = &pass->shares[qs->shares[i]];

		m->cursor[i] = ss->first_job;
		if (ss->n_jobs > 0)
		{
			merge_key(m, i);
			fs_heap_push(&m->heap, i);
		}
	}
}

int
fs_merge_next(FsMerge *m, int *share)
{
	FsPass	   *pass = m->pass;
	int			i;
	int			job;
	FsShareState *ss;

	if (m->heap.n == 0)
		return FS_MERGE_END;
	i = m->heap.items[0];
	*share = pass->queues[m->queue].shares[i];
	ss = &pass->shares[*share];
	if (m->cursor[i] == ss->first_job + ss->n_jobs)
	{
		fs_heap_pop(&m->heap);
		return FS_MERGE_UNLOADED;
	}
	job = m->cursor[i]++;
	if (m->cursor[i] < ss->first_job + ss->n_jobs || pass->in->shares[*share].more_runnable)
	{
		merge_key(m, i);
		fs_heap_sift_top(&m->heap);	/* it goes after the job just taken */
	}
	else
		fs_heap_pop(&m->heap);
	return job;
}

/*
 * The next loaded job of a queue's turn in share order, passing over
 * shares past their loaded prefix -- unless such a share placed all it had
 * loaded: then the pass stops there (fs_prefix_used_up) and so does the
 * walk (FS_MERGE_END).
 */
int
fs_merge_next_loaded(FsMerge *m, int *share)
{
	int			job;

	if (m->pass->budget_spent)
		return FS_MERGE_END;
	while ((job = fs_merge_next(m, share)) == FS_MERGE_UNLOADED)
		if (fs_prefix_used_up(m->pass, *share))
			return FS_MERGE_END;
	return job;
}

/*
 * The share's next job is beyond its loaded prefix.  If the share placed
 * every job it had loaded, that unknown job may well be next in line, so
 * the pass must not give the capacity to anything after it: it stops here.
 * (If some loaded job was left waiting, the share had its chance; jobs
 * beyond a prefix cannot back-fill, which is the price of loading heads.)
 * A head that is all MISCONFIGURED does not stop the pass: the wrapper
 * reads such a share deeper, past those jobs, in its next round and its
 * next passes, and may not be able to read far enough in this pass (a
 * sweep of thousands), so stopping could give its queue and every lower
 * one nothing for as long as those jobs wait.
 */
bool
fs_prefix_used_up(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];
	bool		placed = false;
	int			j;

	if (!pass->in->shares[share].more_runnable || ss->n_jobs == 0)
		return false;
	for (j = ss->first_job; j < ss->first_job + ss->n_jobs; j++)
	{
		if (pass->jobs[j].status == FS_JOB_PLACED)
			placed = true;
		else if (pass->jobs[j].status != FS_JOB_MISCONFIGURED)
			return false;
	}
	if (!placed)
		return false;
	pass->prefix_used_up = true;
	pass->result->more_jobs_needed = true;
	return true;
}
