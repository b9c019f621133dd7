/*-------------------------------------------------------------------------
 *
 * quota_share.c
 *		A quota-share queue's turn in a pass (docs/scheduling.md,
 *		'Quota-share queues').
 *
 * Each quota share q has limits L_q, a strategy (RESERVE, LEND,
 * LEND_AND_BORROW), a borrow_limit and in_share_preemption.  The turn runs
 * the steps of 2.6 in the order random workloads showed not to thrash:
 *
 *	 1. jobs that earlier preemptions were made for -- done for every queue
 *		at the start of the pass (nomination.c: fs_place_nominated_jobs), since their
 *		room is held for them whatever the queue order;
 *	 2. guaranteed jobs, by priority: those that fit within their share's
 *		limit counting what it holds and its nominated jobs; when there is no
 *		room, reclaim it from shares above their limit and nominate the job;
 *	 3. borrowers, in idle_assignment order, from room nobody is nominated
 *		for and RESERVE shares do not keep;
 *	 4. in-share preemption for higher-priority jobs that still wait;
 *	 then steps 2 and 3 again while the room kept for RESERVE shares shrank
 *	 in a way the round could not take up at once (see the end of
 *	 fs_quota_share_turn), so that no job is left waiting that fits in free
 *	 capacity.
 *
 * Guarantees are within the queue: the shares of one quota-share queue
 * lend to and reclaim from each other, not from other queues.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include "internal.h"

/* A quota-share queue places up to right, keeping RESERVE shares' room. */
static void
quota_rules(FsRules *rules, FsQuotaRight right)
{
	fs_init_rules(rules);
	rules->right = right;
	rules->respect_reserve = true;
}

/* Is the job within its share's guarantee on any of its instance types? */
static bool
guaranteed_somewhere(FsPass *pass, int job)
{
	FsJobState *js = &pass->jobs[job];
	int			t;

	for (t = 0; t < js->job->n_instance_types; t++)
		if (fs_quota_guaranteed(pass, js->share, js->job->instance_types[t],
								js->job->instance_count))
			return true;
	return false;
}

/* Step 2: jobs within their share's guarantee, by priority; reclaim if need be. */
static void
place_guaranteed_jobs(FsPass *pass, int queue)
{
	FsMerge		order;
	FsRules		rules;
	int			job;
	int			share;

	quota_rules(&rules, FS_RIGHT_GUARANTEE);

	fs_forget_failed_searches(pass, queue);
	fs_merge_init(&order, pass, queue);
	while ((job = fs_merge_next_loaded(&order, &share)) != FS_MERGE_END)
	{
		FsJobState *js = &pass->jobs[job];
		FsFit		fit;

		if (js->status != FS_JOB_WAITING || fs_job_misconfigured(pass, job))
			continue;
		if (!guaranteed_somewhere(pass, job))
			continue;			/* a borrower: step 3 */
		js->tried_guaranteed = true;
		if (fs_try_place(pass, job, &rules, &fit))
			continue;
		if (fs_reclaim(pass, job))
			continue;
		fs_note_wait(pass, job, &fit);
	}
}

/* ---------- step 3: borrowers ---------- */

typedef struct FsBorrowTurn
{
	FsPass	   *pass;
	int			queue;
	bool		fair;
	double	   *key;			/* FAIR: (borrowed + n) / weight */
} FsBorrowTurn;

/*
 * FIFO (as AWS): the offer that has waited longest; FAIR: the share with
 * the lowest (borrowed + n) / weight, then the longest-waiting offer.
 */
static bool
borrow_before(const void *ctx, int a, int b)
{
	const FsBorrowTurn *turn = ctx;

	return fs_share_turn_before(turn->pass, turn->queue, turn->fair ? turn->key : NULL, a, b);
}

/* Jobs a share offers to borrow: those still waiting that step 2 did not try. */
static bool
is_borrow_offer(FsPass *pass, int job)
{
	FsJobState *js = &pass->jobs[job];

	if (js->status != FS_JOB_WAITING || fs_job_misconfigured(pass, job))
		return false;
	/* a LEND_AND_BORROW share may borrow on another type, so try those again */
	return !js->tried_guaranteed ||
		pass->in->shares[js->share].strategy == FS_STRATEGY_LEND_AND_BORROW;
}

static void
offer_borrower(FsBorrowTurn *turn, FsHeap *heap, int i)
{
	FsPass	   *pass = turn->pass;
	int			share = pass->queues[turn->queue].shares[i];
	FsShareState *ss = &pass->shares[share];
	int			end = ss->first_job + ss->n_jobs;

	while (ss->cursor < end && !is_borrow_offer(pass, ss->cursor))
		ss->cursor++;
	if (ss->cursor >= end)
	{
		/* its unloaded jobs may be the longest-waiting offers: stop here */
		fs_prefix_used_up(pass, share);
		return;
	}
	if (turn->fair)
	{
		double		weight = pass->in->shares[share].weight > 0 ? pass->in->shares[share].weight : 1.0;

		turn->key[i] = (double) (fs_quota_borrowed(pass, share) +
								 pass->jobs[ss->cursor].job->instance_count) / weight;
	}
	fs_heap_push(heap, i);
}

static void
place_borrowers(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	FsBorrowTurn turn;
	FsHeap		heap;
	FsRules		rules;
	int			i;

	quota_rules(&rules, FS_RIGHT_MOST);

	turn.pass = pass;
	turn.queue = queue;
	turn.fair = pass->in->queues[queue].idle_assignment == FS_IDLE_FAIR;
	turn.key = fs_arena_alloc(&pass->arena, sizeof(double) * (size_t) (qs->n_shares + 1));
	fs_heap_init(&heap, qs->n_shares, borrow_before, &turn, &pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		pass->shares[qs->shares[i]].cursor = pass->shares[qs->shares[i]].first_job;
		offer_borrower(&turn, &heap, i);
	}
	while (heap.n > 0 && !fs_pass_halted(pass))
	{
		int			i_share = fs_heap_pop(&heap);
		int			share = qs->shares[i_share];

		fs_place_or_wait(pass, queue, pass->shares[share].cursor, &rules);
		pass->shares[share].cursor++;
		offer_borrower(&turn, &heap, i_share);
	}
}

/* Step 4: in-share preemption for the higher-priority jobs that still wait. */
static void
preempt_within_shares(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	FsMerge		order;
	bool		any = false;
	int			i,
				job,
				share;

	for (i = 0; i < qs->n_shares; i++)
		if (pass->in->shares[qs->shares[i]].in_share_preemption &&
			pass->shares[qs->shares[i]].running_jobs > 0)
			any = true;
	if (!any)
		return;
	fs_forget_failed_searches(pass, queue);
	fs_merge_init(&order, pass, queue);
	while (!pass->budget_spent && (job = fs_merge_next(&order, &share)) != FS_MERGE_END)
	{
		FsJobState *js;

		if (job == FS_MERGE_UNLOADED)
			continue;
		js = &pass->jobs[job];
		if (js->status != FS_JOB_WAITING || !js->considered ||
			!pass->in->shares[js->share].in_share_preemption)
			continue;
		fs_preempt_in_share(pass, job);
	}
}

void
fs_quota_share_turn(FsPass *pass, int queue)
{
	FsRules		borrower;
	int64_t		reserve_shrunk = pass->reserve_shrunk;
	int			rounds;

	/* step 1 ran at the start of the pass for every queue */
	fs_keep_reserve(pass, queue);
	place_guaranteed_jobs(pass, queue); /* step 2 */
	if (fs_pass_halted(pass))
		return;

	/* a starving borrower's room is held from here on, not against step 2 */
	quota_rules(&borrower, FS_RIGHT_MOST);
	fs_serve_starver(pass, queue, &borrower);

	place_borrowers(pass, queue);	/* step 3 */
	if (fs_pass_halted(pass))
		return;
	preempt_within_shares(pass, queue); /* step 4 */

	/*
	 * Work conservation: within a round the room kept for RESERVE shares is
	 * frozen (fs_keep_reserve), but for a RESERVE share's placements of its
	 * own, which use up its kept room at once (capacity.c: quota_place).
	 * What else shrank it -- a RESERVE share's nomination, its placement on
	 * an environment with no limit of the unit -- is still counted as kept,
	 * so jobs passed over for that room may fit now.  Steps 2 and 3 run
	 * again until a round leaves no such change; each round only places,
	 * and such changes are few, so this rarely takes more than a round or
	 * two.  The bound is a backstop.  (Step 4's victims free nothing within
	 * the pass: they count towards their share until the next.)
	 */
	for (rounds = 0; rounds <= pass->queues[queue].n_shares &&
		 pass->reserve_shrunk != reserve_shrunk; rounds++)
	{
		reserve_shrunk = pass->reserve_shrunk;
		fs_keep_reserve(pass, queue);
		place_guaranteed_jobs(pass, queue);
		if (fs_pass_halted(pass))
			return;
		place_borrowers(pass, queue);
		if (fs_pass_halted(pass))
			return;
	}
}
