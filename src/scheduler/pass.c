/*-------------------------------------------------------------------------
 *
 * pass.c
 *		One scheduling pass: fs_schedule(), from snapshot to decisions.
 *
 * The pass, in the order it runs (each step is one call in fs_schedule()):
 *
 *	 1. snapshot		occupancy of every environment unit, what every share
 *						holds, the decayed usage of fair shares, and each
 *						share's loaded RUNNABLE jobs in share order (here,
 *						sorted by share_order.c);
 *	 2. nominations		keep or drop the nominations of earlier passes and
 *						hold their room: the room a preemption freed stays
 *						with the job it was freed for (nomination.c, 2.6);
 *	 3. nominated jobs	place every job that earlier preemptions were made
 *						for whose room is there now (nomination.c, 2.6 step 1);
 *	 4. queues			serve the queues in priority order, ties by name
 *						(2.3), each by its policy: fifo.c, fair_share.c,
 *						quota_share.c; a queue's jobs see what higher queues
 *						took, and then hold nothing back from lower ones but
 *						their nominations;
 *	 5. starvation		hold room for each queue's head job that has waited
 *						longer than starvation_wait, does not fit, and saw
 *						smaller jobs placed past it in this pass (nomination.c,
 *						2.2a);
 *	 6. requeue			every loaded job left waiting keeps its wait reason
 *						(result.c); fair shares get their new usage.
 *
 * Never include a PostgreSQL header here; all memory comes from the
 * caller's allocator (see scheduler.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

/* ---------- 1. snapshot ---------- */

static int
queue_order_cmp(const void *a, const void *b, const void *ctx)
{
	const FsInput *in = ctx;
	int			qa = *(const int *) a;
	int			qb = *(const int *) b;
	const char *na = in->queues[qa].name ? in->queues[qa].name : "";
	const char *nb = in->queues[qb].name ? in->queues[qb].name : "";
	int			c;

	if (in->queues[qa].priority != in->queues[qb].priority)
		return in->queues[qa].priority > in->queues[qb].priority ? -1 : 1;
	c = strcmp(na, nb);
	if (c != 0)
		return c;
	return qa < qb ? -1 : (qa > qb);
}

static bool
env_in_range(const FsInput *in, int env)
{
	return env >= 0 && env < in->n_environments;
}

static void
snapshot_environments(FsPass *pass)
{
	const FsInput *in = pass->in;
	int			e,
				i;

	pass->env_max = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments * pass->n_units + 1));
	pass->env_occupied = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments * pass->n_units + 1));
	pass->env_held = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments * pass->n_units + 1));
	pass->env_held_starving = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments * pass->n_units + 1));
	pass->env_total = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments + 1));
	pass->env_placements = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments + 1));
	for (i = 0; i < in->n_environments * pass->n_units; i++)
		pass->env_max[i] = FS_NO_LIMIT;
	for (e = 0; e < in->n_environments; e++)
	{
		const FsEnvironment *env = &in->environments[e];
		int64_t		type_total = 0;

		for (i = 0; i < env->n_limits; i++)
		{
			const FsLimit *l = &env->limits[i];

			if (l->unit < FS_UNIT_NUM_INSTANCES || l->unit >= in->n_instance_types)
				continue;
			*fs_env_unit(pass, pass->env_max, e, FS_UNIT_INDEX(l->unit)) =
				l->max_capacity > 0 ? l->max_capacity : 0;
			if (l->unit != FS_UNIT_NUM_INSTANCES && l->max_capacity > 0)
				type_total += l->max_capacity;
		}
		pass->env_total[e] = *fs_env_unit(pass, pass->env_max, e, 0);
		if (pass->env_total[e] == FS_NO_LIMIT)
			pass->env_total[e] = type_total;
	}
}

static void
snapshot_queues_and_shares(FsPass *pass)
{
	const FsInput *in = pass->in;
	int			q,
				s,
				i;

	pass->queue_order = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) (in->n_queues + 1));
	for (q = 0; q < in->n_queues; q++)
		pass->queue_order[q] = q;
	fs_sort(pass->queue_order, in->n_queues, sizeof(int), queue_order_cmp, in, &pass->arena);

	pass->queues = fs_arena_alloc(&pass->arena, sizeof(FsQueueState) * (size_t) (in->n_queues + 1));
	pass->shares = fs_arena_alloc(&pass->arena, sizeof(FsShareState) * (size_t) (in->n_shares + 1));
	for (s = 0; s < in->n_shares; s++)
		if (in->shares[s].queue >= 0 && in->shares[s].queue < in->n_queues)
			pass->queues[in->shares[s].queue].n_shares++;
	for (q = 0; q < in->n_queues; q++)
	{
		FsQueueState *qs = &pass->queues[q];

		qs->shares = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) (qs->n_shares + 1));
		qs->n_shares = 0;
		qs->starver = -1;
		qs->first_starving = -1;
		qs->fair_reserved = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) (in->n_environments + 1));
		if (in->queues[q].policy == FS_POLICY_QUOTA_SHARE)
		{
			qs->reserve_unused = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
			qs->reserve_kept = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		}
	}
	for (s = 0; s < in->n_shares; s++)
	{
		const FsShare *share = &in->shares[s];
		FsShareState *ss = &pass->shares[s];

		if (share->queue < 0 || share->queue >= in->n_queues)
			continue;
		pass->queues[share->queue].shares[pass->queues[share->queue].n_shares++] = s;
		if (in->queues[share->queue].policy != FS_POLICY_QUOTA_SHARE)
			continue;
		ss->limit = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		ss->held = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		ss->stopping = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		ss->nominated = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		ss->stopped_now = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		ss->unused_kept = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) pass->n_units);
		for (i = 0; i < pass->n_units; i++)
			ss->limit[i] = FS_NO_LIMIT;
		for (i = 0; i < share->n_limits; i++)
		{
			const FsLimit *l = &share->limits[i];

			if (l->unit < FS_UNIT_NUM_INSTANCES || l->unit >= in->n_instance_types)
				continue;
			ss->limit[FS_UNIT_INDEX(l->unit)] = l->max_capacity > 0 ? l->max_capacity : 0;
		}
	}
}

/*
 * What every environment unit and share holds: every running job, stopping
 * or not, occupies its environment; a quota share counts its stopping jobs
 * apart, since they are already on their way out (victims are never chosen
 * twice, and a share's guarantee is judged on what it keeps).
 */
static void
snapshot_running(FsPass *pass)
{
	const FsInput *in = pass->in;
	int			r,
				q,
				s,
				u;

	pass->run_stopping = fs_arena_alloc(&pass->arena, sizeof(bool) * (size_t) (in->n_running + 1));
	for (r = 0; r < in->n_running; r++)
	{
		const FsRunningJob *run = &in->running[r];

		pass->run_stopping[r] = run->stopping;
		if (!env_in_range(in, run->environment) || run->instance_count <= 0)
			continue;
		*fs_env_unit(pass, pass->env_occupied, run->environment, 0) += run->instance_count;
		if (run->instance_type >= 0 && run->instance_type < in->n_instance_types)
			*fs_env_unit(pass, pass->env_occupied, run->environment,
						 FS_UNIT_INDEX(run->instance_type)) += run->instance_count;
		if (run->share < 0 || run->share >= in->n_shares ||
			in->shares[run->share].queue < 0 || in->shares[run->share].queue >= in->n_queues)
			continue;
		pass->shares[run->share].held_instances += run->instance_count;
		pass->shares[run->share].running_jobs++;
		pass->queues[in->shares[run->share].queue].n_running++;
		if (pass->shares[run->share].limit != NULL)
		{
			FsShareState *ss = &pass->shares[run->share];
			int64_t    *where = run->stopping ? ss->stopping : ss->held;

			where[0] += run->instance_count;
			if (run->instance_type >= 0 && run->instance_type < in->n_instance_types)
				where[FS_UNIT_INDEX(run->instance_type)] += run->instance_count;
		}
	}

	/* each queue's and quota share's running jobs, for victim searches */
	for (q = 0; q < in->n_queues; q++)
	{
		pass->queues[q].running = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) (pass->queues[q].n_running + 1));
		pass->queues[q].n_running = 0;
	}
	for (s = 0; s < in->n_shares; s++)
		if (pass->shares[s].limit != NULL)
			pass->shares[s].running = fs_arena_alloc(&pass->arena, sizeof(int) *
													 (size_t) (pass->shares[s].running_jobs + 1));
	for (r = 0; r < in->n_running; r++)
	{
		const FsRunningJob *run = &in->running[r];

		if (!env_in_range(in, run->environment) || run->instance_count <= 0 ||
			run->share < 0 || run->share >= in->n_shares ||
			in->shares[run->share].queue < 0 || in->shares[run->share].queue >= in->n_queues)
			continue;
		q = in->shares[run->share].queue;
		pass->queues[q].running[pass->queues[q].n_running++] = r;
		if (pass->shares[run->share].running != NULL)
			pass->shares[run->share].running[pass->shares[run->share].n_running++] = r;
	}

	/* unused room of RESERVE shares, kept from borrowers (2.6) */
	for (s = 0; s < in->n_shares; s++)
	{
		FsShareState *ss = &pass->shares[s];

		if (ss->limit == NULL || in->shares[s].strategy != FS_STRATEGY_RESERVE)
			continue;
		for (u = 0; u < pass->n_units; u++)
		{
			int64_t		unused;

			if (ss->limit[u] == FS_NO_LIMIT)
				continue;
			unused = ss->limit[u] - ss->held[u];
			if (unused > 0)
				pass->queues[in->shares[s].queue].reserve_unused[u] += unused;
		}
	}
}

/* Fair shares: U decays towards what the share holds now (2.5). */
static void
decay_usage(FsPass *pass)
{
	const FsInput *in = pass->in;
	int			s;

	for (s = 0; s < in->n_shares; s++)
	{
		const FsShare *share = &in->shares[s];

		if (share->queue < 0 || share->queue >= in->n_queues ||
			in->queues[share->queue].policy != FS_POLICY_FAIR_SHARE)
			continue;
		pass->shares[s].usage = fs_decayed_usage(share->usage, share->usage_at, in->now,
												 in->queues[share->queue].share_decay,
												 pass->shares[s].held_instances);
	}
}

static void
load_runnable(FsPass *pass)
{
	const FsInput *in = pass->in;
	int			total = 0;
	int			s,
				i;

	for (s = 0; s < in->n_shares; s++)
		if (in->shares[s].queue >= 0 && in->shares[s].queue < in->n_queues && in->shares[s].n_runnable > 0)
			total += in->shares[s].n_runnable;
	pass->jobs = fs_arena_alloc(&pass->arena, sizeof(FsJobState) * (size_t) (total + 1));
	pass->n_jobs = 0;
	for (s = 0; s < in->n_shares; s++)
	{
		const FsShare *share = &in->shares[s];
		FsShareState *ss = &pass->shares[s];
		FsPolicyKind policy;

		ss->first_job = pass->n_jobs;
		ss->cursor = ss->head = ss->first_job;
		if (share->queue < 0 || share->queue >= in->n_queues || share->n_runnable <= 0)
			continue;
		policy = in->queues[share->queue].policy;
		for (i = 0; i < share->n_runnable; i++)
		{
			FsJobState *js = &pass->jobs[pass->n_jobs++];

			js->job = &share->runnable[i];
			js->share = s;
			js->nominee = -1;
			js->wait = -1;
			js->status = FS_JOB_WAITING;
		}
		ss->n_jobs = share->n_runnable;
		fs_sort_share_jobs(pass, &pass->jobs[ss->first_job], ss->n_jobs, policy);
		for (i = 0; i < ss->n_jobs; i++)
			pass->jobs[ss->first_job + i].position = i + 1;
	}
}

void
fs_pass_begin(FsPass *pass, const FsInput *in, const FsAllocator *allocator)
{
	memset(pass, 0, sizeof(*pass));
	pass->in = in;
	pass->allocator = allocator;
	fs_arena_init(&pass->arena, allocator);
	pass->n_units = in->n_instance_types + 1;

	pass->result = fs_alloc_zero(allocator, sizeof(FsResult));
	pass->result->n_shares = in->n_shares;
	pass->result->share_usage = fs_alloc_zero(allocator, sizeof(double) * (size_t) (in->n_shares + 1));
	pass->result->share_held = fs_alloc_zero(allocator, sizeof(int64_t) * (size_t) (in->n_shares + 1));

	snapshot_environments(pass);
	snapshot_queues_and_shares(pass);
	snapshot_running(pass);
	decay_usage(pass);
	load_runnable(pass);

	/* one wait reason at most per loaded job: room for all, no regrowing */
	if (in->collect_wait_reasons && pass->n_jobs > 0)
	{
		pass->result->wait_reasons = allocator->alloc(allocator->ctx,
													  sizeof(FsWaitReason) * (size_t) pass->n_jobs);
		pass->max_wait_reasons = pass->n_jobs;
	}
}

/* ---------- 6. requeue ---------- */

static void
pass_end(FsPass *pass)
{
	const FsInput *in = pass->in;
	FsResult   *r = pass->result;
	int			s,
				i,
				kept = 0;

	for (s = 0; s < in->n_shares; s++)
	{
		r->share_usage[s] = pass->shares[s].usage;
		r->share_held[s] = pass->shares[s].held_instances;
		if (in->shares[s].more_runnable && pass->shares[s].placed > 0)
			r->more_jobs_needed = true;
	}
	for (i = 0; i < pass->n_jobs; i++)
		if (pass->jobs[i].considered)
			r->stats.considered++;

	/* a job placed after an earlier failure in this pass does not wait */
	for (i = 0; i < r->n_wait_reasons; i++)
	{
		FsWaitReason *w = &r->wait_reasons[i];
		const FsShare *share = &in->shares[w->share];

		/* the job's state, through its share's slice and its position */
		if (pass->jobs[pass->shares[w->share].first_job + w->position - 1].status == FS_JOB_PLACED)
			continue;
		if (in->queues[share->queue].policy == FS_POLICY_FAIR_SHARE)
		{
			w->share_usage = pass->shares[w->share].usage;
			w->share_weight = share->weight > 0 ? share->weight : 1.0;
		}
		r->wait_reasons[kept++] = *w;
	}
	r->n_wait_reasons = kept;
	fs_arena_release(&pass->arena);
}

/* ---------- the pass ---------- */

FsResult *
fs_schedule(const FsInput *input, const FsAllocator *allocator)
{
	FsPass		pass;
	FsResult   *result;
	int			i;

	fs_pass_begin(&pass, input, allocator); /* 1. snapshot */
	fs_take_nominations(&pass);	/* 2. keep or drop earlier nominations */
	fs_place_nominated_jobs(&pass); /* 3. jobs earlier preemptions were for */

	for (i = 0; i < input->n_queues; i++)	/* 4. queues, by priority */
	{
		int			queue = pass.queue_order[i];

		switch (input->queues[queue].policy)
		{
			case FS_POLICY_FIFO:
				fs_fifo_turn(&pass, queue);
				break;
			case FS_POLICY_FAIR_SHARE:
				fs_fair_share_turn(&pass, queue);
				break;
			case FS_POLICY_QUOTA_SHARE:
				fs_quota_share_turn(&pass, queue);
				break;
		}
		if (fs_pass_halted(&pass))
			break;				/* the rest waits for a pass with fresh heads,
								 * or for the next bounded pass */
	}
	for (i = 0; i < input->n_queues && !pass.budget_spent; i++)	/* 5. starvation */
		fs_nominate_starving_job(&pass, pass.queue_order[i]);

	result = pass.result;
	result->decision_limit_reached = pass.budget_spent;
	pass_end(&pass);			/* 6. requeue with reasons */
	return result;
}

/* End a pass that is not used for decisions (fs_queue_order). */
void
fs_pass_abandon(FsPass *pass)
{
	fs_result_free(pass->result, pass->allocator);
	fs_arena_release(&pass->arena);
}

