/*-------------------------------------------------------------------------
 *
 * pass.c
 *		One scheduling pass: fs_schedule(), from snapshot to decisions.
 *
 * The pass, in the order it runs (each step is one function below):
 *
 *	 1. snapshot		occupancy of every environment unit, what every share
 *						holds, the decayed usage of fair shares, and each
 *						share's loaded RUNNABLE jobs in share order;
 *	 2. nominations		keep or drop the nominations of earlier passes and
 *						hold their room: the room a preemption freed stays
 *						with the job it was freed for (design 2.6);
 *	 3. nominated jobs	place every job that earlier preemptions were made
 *						for whose room is there now (2.6 step 1);
 *	 4. queues			serve the queues in priority order, ties by name
 *						(2.3), each by its policy: fifo.c, fair_share.c,
 *						quota_share.c; a queue's jobs see what higher queues
 *						took, and then hold nothing back from lower ones but
 *						their nominations;
 *	 5. starvation		hold room for each queue's head job that has waited
 *						longer than starvation_wait, does not fit, and saw
 *						smaller jobs placed past it in this pass (2.2a);
 *	 6. requeue			every loaded job left waiting gets its wait reason;
 *						fair shares get their new usage.
 *
 * Never include a PostgreSQL header here; all memory comes from the
 * caller's allocator (see scheduler.h).
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

/* ---------- decisions and wait reasons ---------- */

FsDecision *
fs_add_decision(FsPass *pass, FsDecisionKind kind, int job)
{
	FsResult   *r = pass->result;
	FsDecision *d;

	if (r->n_decisions == pass->max_decisions)
	{
		int			grown = pass->max_decisions * 2 + 16;
		FsDecision *bigger = pass->allocator->alloc(pass->allocator->ctx,
													sizeof(FsDecision) * (size_t) grown);

		if (r->n_decisions > 0)
			memcpy(bigger, r->decisions, sizeof(FsDecision) * (size_t) r->n_decisions);
		if (r->decisions != NULL && pass->allocator->free != NULL)
			pass->allocator->free(pass->allocator->ctx, r->decisions);
		r->decisions = bigger;
		pass->max_decisions = grown;
	}
	d = &r->decisions[r->n_decisions++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->environment = -1;
	d->instance_type = -1;
	d->for_share = -1;
	d->victim_share_limit = -1;
	if (job >= 0)
	{
		FsJobState *js = &pass->jobs[job];

		d->job_id = js->job->job_id;
		d->share = js->share;
		d->instance_count = js->job->instance_count;
	}
	else
		d->share = -1;
	return d;
}

static FsWaitReason *
wait_reason_of(FsPass *pass, int job)
{
	FsResult   *r = pass->result;
	FsJobState *js = &pass->jobs[job];
	FsWaitReason *w;

	if (!pass->in->collect_wait_reasons)
		return NULL;
	if (js->wait < 0)
	{
		if (r->n_wait_reasons == pass->max_wait_reasons)
		{
			int			grown = pass->max_wait_reasons * 2 + 16;
			FsWaitReason *bigger = pass->allocator->alloc(pass->allocator->ctx,
														  sizeof(FsWaitReason) * (size_t) grown);

			if (r->n_wait_reasons > 0)
				memcpy(bigger, r->wait_reasons, sizeof(FsWaitReason) * (size_t) r->n_wait_reasons);
			if (r->wait_reasons != NULL && pass->allocator->free != NULL)
				pass->allocator->free(pass->allocator->ctx, r->wait_reasons);
			r->wait_reasons = bigger;
			pass->max_wait_reasons = grown;
		}
		js->wait = r->n_wait_reasons++;
	}
	w = &r->wait_reasons[js->wait];
	memset(w, 0, sizeof(*w));
	w->job_id = js->job->job_id;
	w->share = js->share;
	w->position = js->position;
	w->needed = js->job->instance_count;
	w->environment = -1;
	w->instance_type = -1;
	w->unit = FS_UNIT_NUM_INSTANCES;
	return w;
}

/* The job was considered and left waiting, for the reason in fit. */
void
fs_note_wait(FsPass *pass, int job, const FsFit *fit)
{
	FsWaitReason *w;

	pass->jobs[job].considered = true;
	w = wait_reason_of(pass, job);
	if (w == NULL)
		return;
	w->kind = fit->kind;
	w->environment = fit->environment;
	w->instance_type = fit->instance_type;
	w->unit = fit->unit;
	w->share_level = fit->share_level;
	w->limit = fit->limit;
	w->in_use = fit->in_use;
	w->held = fit->held;
	w->reserved = fit->reserved;
	w->free = fit->limit - fit->in_use - fit->held - fit->reserved;
	if (w->free < 0)
		w->free = 0;
	w->held_for_job_id = fit->held_for_job_id;
	w->backoff_until = fit->backoff_until;
	if (fit->share_level)
	{
		const FsShare *s = &pass->in->shares[pass->jobs[job].share];
		int			ui = FS_UNIT_INDEX(fit->unit);

		w->strategy = s->strategy;
		w->share_guarantee = pass->shares[pass->jobs[job].share].limit[ui];
	}
	if (fit->kind == FS_WAIT_STRICT_FIFO)
		w->blocked_by_job_id = fit->held_for_job_id;
}

/* The job waits with room held for it. */
void
fs_note_nominated(FsPass *pass, int job)
{
	FsJobState *js = &pass->jobs[job];
	FsNominee  *n = &pass->nominees[js->nominee];
	FsWaitReason *w;
	int			ui;
	int64_t		max;

	js->considered = true;
	w = wait_reason_of(pass, job);
	if (w == NULL)
		return;
	w->kind = FS_WAIT_NOMINATED;
	w->nomination_kind = n->kind;
	w->environment = n->environment;
	w->instance_type = n->instance_type;
	w->stopping = n->stopping_num > n->stopping_type ? n->stopping_num : n->stopping_type;
	/* numbers of the unit that is shorter of room */
	ui = FS_UNIT_INDEX(n->instance_type);
	max = *fs_env_unit(pass, pass->env_max, n->environment, ui);
	if (max == FS_NO_LIMIT)
		ui = 0;
	w->unit = ui - 1;
	w->limit = *fs_env_unit(pass, pass->env_max, n->environment, ui);
	w->in_use = *fs_env_unit(pass, pass->env_occupied, n->environment, ui);
	w->held = *fs_env_unit(pass, pass->env_held, n->environment, ui);
	w->free = w->limit - w->in_use - w->held + (ui == 0 ? n->hold_num : n->hold_type);
	if (w->free < 0)
		w->free = 0;
	if (w->held >= (ui == 0 ? n->hold_num : n->hold_type))
		w->held -= (ui == 0 ? n->hold_num : n->hold_type);
}

/* Is the job the first of its share not yet placed (or misconfigured)? */
bool
fs_job_is_head(FsPass *pass, int job)
{
	FsShareState *ss = &pass->shares[pass->jobs[job].share];

	while (ss->head < ss->first_job + ss->n_jobs &&
		   (pass->jobs[ss->head].status == FS_JOB_PLACED ||
			pass->jobs[ss->head].status == FS_JOB_MISCONFIGURED))
		ss->head++;
	return ss->head == job;
}

static int64_t
placements_in_queue_envs(FsPass *pass, int queue)
{
	const FsQueue *q = &pass->in->queues[queue];
	int64_t		n = 0;
	int			i;

	for (i = 0; i < q->n_environments; i++)
		n += pass->env_placements[q->environments[i]];
	return n;
}

/*
 * Remember the queue's first head job that has waited past starvation_wait
 * and did not fit for lack of room (not for its share's limit: that is no
 * back-fill starving it).  If anything is placed after it in its queue's
 * environments in this pass -- back-fill, from its queue or a lower one --
 * nominate_starving_jobs() holds room for it from the next pass on.  A head
 * that waits only because capacity is full is not starving: it is first in
 * line when capacity frees.
 */
void
fs_note_starving(FsPass *pass, int queue, int job, const FsFit *fit)
{
	FsQueueState *qs = &pass->queues[queue];
	const FsRunnableJob *j = pass->jobs[job].job;

	if (pass->in->starvation_wait <= 0 || qs->first_starving >= 0)
		return;
	if (fit->kind != FS_WAIT_CAPACITY && fit->kind != FS_WAIT_HELD &&
		fit->kind != FS_WAIT_RESERVED)
		return;
	if (pass->in->now - j->runnable_at <= pass->in->starvation_wait)
		return;
	if (!fs_job_is_head(pass, job))
		return;
	qs->first_starving = job;
	qs->placed_before_starving = placements_in_queue_envs(pass, queue);
}

/*
 * A job that can never fit -- bigger than every (environment, type) it may
 * use allows -- is MISCONFIGURED (design 2.1) and does not block the jobs
 * behind it.  Decided once per pass, when the job is first looked at.
 */
bool
fs_job_misconfigured(FsPass *pass, int job)
{
	FsJobState *js = &pass->jobs[job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	FsMisconfiguration why = FS_MISCONFIG_ENVIRONMENT_MAX;
	int64_t		largest = 0;
	int			e,
				t;

	if (js->misconfiguration_known)
		return js->misconfiguration != FS_MISCONFIG_NONE;
	js->misconfiguration_known = true;
	js->misconfiguration = FS_MISCONFIG_NONE;
	if (js->job->instance_count > 0)
	{
		for (e = 0; e < queue->n_environments; e++)
		{
			for (t = 0; t < js->job->n_instance_types; t++)
			{
				FsMisconfiguration pair_why = FS_MISCONFIG_NONE;

				if (fs_pair_static_fit(pass, js->share, queue->environments[e],
									   js->job->instance_types[t],
									   js->job->instance_count, &pair_why, &largest))
					return false;
				if (pair_why == FS_MISCONFIG_QUOTA_SHARE_MAX)
					why = FS_MISCONFIG_QUOTA_SHARE_MAX;
			}
		}
	}
	js->misconfiguration = why;
	js->status = FS_JOB_MISCONFIGURED;
	js->considered = true;
	{
		FsDecision *d = fs_add_decision(pass, FS_DECISION_MISCONFIGURED, job);
		FsWaitReason *w;

		d->misconfiguration = why;
		d->largest_limit = largest;
		pass->result->stats.misconfigured++;
		w = wait_reason_of(pass, job);
		if (w != NULL)
		{
			w->kind = FS_WAIT_MISCONFIGURED;
			w->misconfiguration = why;
			w->limit = largest;
		}
	}
	return true;
}

int
fs_add_nominee(FsPass *pass, int job, FsNominationKind kind, int env, int type, FsTime since)
{
	FsNominee  *n;

	if (pass->n_nominees == pass->max_nominees)
	{
		int			grown = pass->max_nominees * 2 + 16;
		FsNominee  *bigger = fs_arena_alloc(&pass->arena, sizeof(FsNominee) * (size_t) grown);

		if (pass->n_nominees > 0)
			memcpy(bigger, pass->nominees, sizeof(FsNominee) * (size_t) pass->n_nominees);
		pass->nominees = bigger;
		pass->max_nominees = grown;
	}
	n = &pass->nominees[pass->n_nominees];
	memset(n, 0, sizeof(*n));
	n->job = job;
	n->kind = kind;
	n->environment = env;
	n->instance_type = type;
	n->count = pass->jobs[job].job->instance_count;
	n->since = since;
	n->active = true;
	pass->jobs[job].nominee = pass->n_nominees;
	return pass->n_nominees++;
}

/* ---------- share order ---------- */

/*
 * The order of a share's RUNNABLE jobs: FIFO queues by runnable_at then
 * job_id (2.4); fair and quota shares by scheduling_priority descending,
 * then runnable_at, then job_id (2.5, 2.6).  ctx points to the policy.
 */
int
fs_job_order_cmp(const void *a, const void *b, const void *ctx)
{
	const FsRunnableJob *ja = ((const FsJobState *) a)->job;
	const FsRunnableJob *jb = ((const FsJobState *) b)->job;

	if (*(const FsPolicyKind *) ctx != FS_POLICY_FIFO && ja->priority != jb->priority)
		return ja->priority > jb->priority ? -1 : 1;
	if (ja->runnable_at != jb->runnable_at)
		return ja->runnable_at < jb->runnable_at ? -1 : 1;
	return ja->job_id < jb->job_id ? -1 : (ja->job_id > jb->job_id);
}

/*
 * Walk the loaded jobs of a queue's shares as one list in share order
 * (merging the shares' sorted prefixes), e.g. all jobs of a quota-share
 * queue by priority for step 2 of 2.6.
 */
static bool
merge_before(const void *ctx, int a, int b)
{
	const FsMerge *m = ctx;
	const FsPass *pass = m->pass;
	const FsQueueState *qs = &pass->queues[m->queue];
	int			ja = m->cursor[a];
	int			jb = m->cursor[b];
	int			c;

	/*
	 * A share past its prefix stands for its next, unloaded job, which comes
	 * at the earliest right after its last loaded one.
	 */
	if (ja == pass->shares[qs->shares[a]].first_job + pass->shares[qs->shares[a]].n_jobs)
		ja--;
	if (jb == pass->shares[qs->shares[b]].first_job + pass->shares[qs->shares[b]].n_jobs)
		jb--;
	c = fs_job_order_cmp(&pass->jobs[ja], &pass->jobs[jb], &m->policy);
	if (c == 0)
		c = (ja != m->cursor[a]) - (jb != m->cursor[b]);	/* real jobs first */
	return c < 0 || (c == 0 && a < b);
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
	fs_heap_init(&m->heap, qs->n_shares, merge_before, m, &pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		FsShareState *ss = &pass->shares[qs->shares[i]];

		m->cursor[i] = ss->first_job;
		if (ss->n_jobs > 0)
			fs_heap_push(&m->heap, i);
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
	i = fs_heap_pop(&m->heap);
	*share = pass->queues[m->queue].shares[i];
	ss = &pass->shares[*share];
	if (m->cursor[i] == ss->first_job + ss->n_jobs)
		return FS_MERGE_UNLOADED;
	job = m->cursor[i]++;
	if (m->cursor[i] < ss->first_job + ss->n_jobs || pass->in->shares[*share].more_runnable)
		fs_heap_push(&m->heap, i);
	return job;
}

/*
 * The share's next job is beyond its loaded prefix.  If the share placed
 * every job it had loaded, that unknown job may well be next in line, so
 * the pass must not give the capacity to anything after it: it stops here.
 * (If some loaded job was left waiting, the share had its chance; jobs
 * beyond a prefix cannot back-fill, which is the price of loading heads.)
 */
bool
fs_prefix_used_up(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];
	int			j;

	if (!pass->in->shares[share].more_runnable || ss->n_jobs == 0)
		return false;
	for (j = ss->first_job; j < ss->first_job + ss->n_jobs; j++)
		if (pass->jobs[j].status != FS_JOB_PLACED && pass->jobs[j].status != FS_JOB_MISCONFIGURED)
			return false;
	pass->prefix_used_up = true;
	pass->result->more_jobs_needed = true;
	return true;
}

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
		fs_sort(&pass->jobs[ss->first_job], ss->n_jobs, sizeof(FsJobState),
				fs_job_order_cmp, &policy, &pass->arena);
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

/* ---------- 2. nominations of earlier passes ---------- */

/* Open-addressing map from a nominee's job_id to its nominee index. */
typedef struct FsIdMap
{
	int64_t    *keys;
	int		   *values;
	int			mask;
} FsIdMap;

static void
idmap_init(FsIdMap *map, int n, FsArena *arena)
{
	int			size = 16;

	while (size < 2 * n)
		size *= 2;
	map->keys = fs_arena_alloc(arena, sizeof(int64_t) * (size_t) size);
	map->values = fs_arena_alloc(arena, sizeof(int) * (size_t) size);
	map->mask = size - 1;
}

static uint32_t
idmap_hash(int64_t key)
{
	uint64_t	h = (uint64_t) key * UINT64_C(0x9E3779B97F4A7C15);

	return (uint32_t) (h >> 32);
}

static void
idmap_put(FsIdMap *map, int64_t key, int value)
{
	uint32_t	i = idmap_hash(key) & (uint32_t) map->mask;

	while (map->keys[i] != 0 && map->keys[i] != key)
		i = (i + 1) & (uint32_t) map->mask;
	map->keys[i] = key;
	map->values[i] = value;
}

static int
idmap_get(const FsIdMap *map, int64_t key)
{
	uint32_t	i = idmap_hash(key) & (uint32_t) map->mask;

	while (map->keys[i] != 0)
	{
		if (map->keys[i] == key)
			return map->values[i];
		i = (i + 1) & (uint32_t) map->mask;
	}
	return -1;
}

static int
nominee_order_cmp(const void *a, const void *b, const void *ctx)
{
	const FsPass *pass = ctx;
	const FsNominee *na = a;
	const FsNominee *nb = b;
	int64_t		ida = pass->jobs[na->job].job->job_id;
	int64_t		idb = pass->jobs[nb->job].job->job_id;

	/* preemption nominations first: their room was bought with victims */
	if (na->kind != nb->kind)
		return na->kind == FS_NOMINATION_PREEMPTION ? -1 : 1;
	if (na->since != nb->since)
		return na->since < nb->since ? -1 : 1;
	return ida < idb ? -1 : (ida > idb);
}

static void
drop_nomination(FsPass *pass, int job)
{
	FsJobState *js = &pass->jobs[job];
	FsDecision *d = fs_add_decision(pass, FS_DECISION_DROP_NOMINATION, job);

	d->nomination_kind = js->job->nomination.kind;
	d->environment = js->job->nomination.environment;
	d->instance_type = js->job->nomination.instance_type;
	d->nominated_since = js->job->nomination.since;
	if (js->nominee >= 0)
	{
		pass->nominees[js->nominee].active = false;
		js->nominee = -1;
	}
	if (js->status != FS_JOB_MISCONFIGURED)
		js->status = FS_JOB_WAITING;
}

/* Is the earlier nomination still one the job may have? */
static bool
nomination_still_stands(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];
	FsJobState *js = &pass->jobs[n->job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	FsMisconfiguration why = FS_MISCONFIG_NONE;
	int64_t		largest = 0;
	FsFit		fit;
	bool		in_queue = false;
	bool		in_job = false;
	int			i;

	if (fs_job_misconfigured(pass, n->job))
		return false;
	for (i = 0; i < queue->n_environments; i++)
		if (queue->environments[i] == n->environment)
			in_queue = true;
	for (i = 0; i < js->job->n_instance_types; i++)
		if (js->job->instance_types[i] == n->instance_type)
			in_job = true;
	if (!in_queue || !in_job)
		return false;
	if (!fs_pair_usable(pass, n->job, n->environment, n->instance_type, &fit))
		return false;
	if (!fs_pair_static_fit(pass, js->share, n->environment, n->instance_type,
							n->count, &why, &largest))
		return false;

	/* a quota share must still be allowed to hold it */
	if (pass->shares[js->share].limit != NULL)
	{
		int			unit;

		if (fs_quota_room(pass, js->share, n->instance_type, FS_RIGHT_MOST, -1, &unit) < n->count)
			return false;
		/* a starving job that is now within its guarantee reclaims instead */
		if (n->kind == FS_NOMINATION_STARVATION &&
			fs_quota_guaranteed(pass, js->share, n->instance_type, n->count))
			return false;
	}
	return true;
}

/*
 * Would a preemption nominee fit once its victims have stopped, next to the
 * nominees kept before it?  If not (a limit was lowered, say), it is
 * dropped rather than left holding room for ever.
 */
static bool
nominee_feasible(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];
	int			u;

	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(n->instance_type);
		int64_t		max = *fs_env_unit(pass, pass->env_max, n->environment, ui);
		int64_t		after;

		if (max == FS_NO_LIMIT)
			continue;
		after = *fs_env_unit(pass, pass->env_occupied, n->environment, ui)
			- (u == 0 ? n->stopping_num : n->stopping_type)
			+ *fs_env_unit(pass, pass->env_held, n->environment, ui)
			+ n->count;
		if (after > max)
			return false;
	}
	return true;
}

static void
take_nominations(FsPass *pass)
{
	const FsInput *in = pass->in;
	FsIdMap		map;
	int			n_earlier = 0;
	int			i,
				r;

	for (i = 0; i < pass->n_jobs; i++)
		if (pass->jobs[i].job->nomination.kind != FS_NOMINATION_NONE)
			n_earlier++;
	if (n_earlier == 0)
		return;

	for (i = 0; i < pass->n_jobs; i++)
	{
		const FsNomination *nom = &pass->jobs[i].job->nomination;

		if (nom->kind == FS_NOMINATION_NONE)
			continue;
		if (!env_in_range(in, nom->environment))
		{
			drop_nomination(pass, i);
			continue;
		}
		fs_add_nominee(pass, i, nom->kind, nom->environment, nom->instance_type, nom->since);
	}
	fs_sort(pass->nominees, pass->n_nominees, sizeof(FsNominee), nominee_order_cmp,
			pass, &pass->arena);

	/* count each nominee's victims that are still stopping */
	idmap_init(&map, pass->n_nominees, &pass->arena);
	for (i = 0; i < pass->n_nominees; i++)
	{
		pass->jobs[pass->nominees[i].job].nominee = i;
		idmap_put(&map, pass->jobs[pass->nominees[i].job].job->job_id, i);
	}
	for (r = 0; r < in->n_running; r++)
	{
		const FsRunningJob *run = &in->running[r];
		int			n;

		if (!run->stopping || run->stopping_for == 0)
			continue;
		n = idmap_get(&map, run->stopping_for);
		if (n < 0 || run->environment != pass->nominees[n].environment)
			continue;
		pass->nominees[n].stopping_num += run->instance_count;
		if (run->instance_type == pass->nominees[n].instance_type)
			pass->nominees[n].stopping_type += run->instance_count;
	}

	/* keep, in order, those that still stand, and hold their room */
	for (i = 0; i < pass->n_nominees; i++)
	{
		FsNominee  *n = &pass->nominees[i];
		FsJobState *js = &pass->jobs[n->job];
		FsQueueState *qs = &pass->queues[in->shares[js->share].queue];

		if (!nomination_still_stands(pass, i) ||
			(n->kind == FS_NOMINATION_PREEMPTION && !nominee_feasible(pass, i)) ||
			(n->kind == FS_NOMINATION_STARVATION && qs->starver >= 0))
		{
			drop_nomination(pass, n->job);
			continue;
		}
		js->status = FS_JOB_NOMINATED;
		fs_quota_add(pass, js->share, n->instance_type, 0, 0, n->count);
		if (n->kind == FS_NOMINATION_PREEMPTION)
		{
			n->hold_num = n->count - n->stopping_num;
			n->hold_type = n->count - n->stopping_type;
			if (n->hold_num < 0)
				n->hold_num = 0;
			if (n->hold_type < 0)
				n->hold_type = 0;
			fs_hold(pass, i);
		}
		else
		{
			/* held from the queue's turn on (fs_serve_starver) */
			n->hold_num = n->hold_type = n->count;
			qs->starver = i;
		}
	}
}

/* ---------- 3. jobs that earlier preemptions were made for ---------- */

static void
place_nominated_jobs(FsPass *pass)
{
	int			i;

	for (i = 0; i < pass->n_nominees; i++)
	{
		FsNominee  *n = &pass->nominees[i];
		FsJobState *js = &pass->jobs[n->job];
		FsRules		rules;
		FsFit		fit;
		FsDecision *d;

		if (!n->active || n->kind != FS_NOMINATION_PREEMPTION)
			continue;
		fs_init_rules(&rules);
		rules.own_nominee = i;
		if (pass->shares[js->share].limit != NULL)
			rules.right = FS_RIGHT_MOST;
		js->considered = true;
		if (fs_pair_fits(pass, n->job, n->environment, n->instance_type, &rules, &fit))
		{
			fs_place(pass, n->job, n->environment, n->instance_type);
			continue;
		}
		d = fs_add_decision(pass, FS_DECISION_KEEP_NOMINATION, n->job);
		d->environment = n->environment;
		d->instance_type = n->instance_type;
		d->nomination_kind = n->kind;
		d->nominated_since = n->since;
		fs_note_nominated(pass, n->job);
	}
}

/*
 * The starvation nominee of a queue, at the start of the queue's turn (or,
 * in a quota-share queue, where its class of job is served): placed if it
 * fits anywhere now, else its room is held as it frees up.
 */
void
fs_serve_starver(FsPass *pass, int queue, const FsRules *base_rules)
{
	FsQueueState *qs = &pass->queues[queue];
	FsNominee  *n;
	FsRules		rules = *base_rules;
	FsFit		fit;
	FsDecision *d;

	if (qs->starver < 0 || !pass->nominees[qs->starver].active)
		return;
	n = &pass->nominees[qs->starver];
	if (pass->jobs[n->job].status != FS_JOB_NOMINATED)
		return;
	rules.own_nominee = qs->starver;
	pass->jobs[n->job].considered = true;
	if (fs_try_place(pass, n->job, &rules, &fit))
		return;
	fs_hold(pass, qs->starver);
	d = fs_add_decision(pass, FS_DECISION_KEEP_NOMINATION, n->job);
	d->environment = n->environment;
	d->instance_type = n->instance_type;
	d->nomination_kind = n->kind;
	d->nominated_since = n->since;
	fs_note_nominated(pass, n->job);
}

/* ---------- 5. starvation ---------- */

static void
nominate_starving_job(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	const FsQueue *q = &pass->in->queues[queue];
	int			job = qs->first_starving;
	FsJobState *js;
	int			e,
				t;

	if (job < 0 || (qs->starver >= 0 && pass->nominees[qs->starver].active))
		return;
	js = &pass->jobs[job];
	if (js->status != FS_JOB_WAITING)
		return;
	if (placements_in_queue_envs(pass, queue) == qs->placed_before_starving)
		return;					/* nothing went past it: it is first in line */
	for (e = 0; e < q->n_environments; e++)
	{
		for (t = 0; t < js->job->n_instance_types; t++)
		{
			int			env = q->environments[e];
			int			type = js->job->instance_types[t];
			FsMisconfiguration why = FS_MISCONFIG_NONE;
			int64_t		largest = 0;
			FsFit		fit;
			int			n;
			FsDecision *d;

			if (!fs_pair_usable(pass, job, env, type, &fit) ||
				!fs_pair_static_fit(pass, js->share, env, type,
									js->job->instance_count, &why, &largest))
				continue;
			n = fs_add_nominee(pass, job, FS_NOMINATION_STARVATION, env, type, pass->in->now);
			pass->nominees[n].hold_num = pass->nominees[n].hold_type = pass->nominees[n].count;
			fs_hold(pass, n);
			fs_quota_add(pass, js->share, type, 0, 0, pass->nominees[n].count);
			qs->starver = n;
			js->status = FS_JOB_NOMINATED;
			d = fs_add_decision(pass, FS_DECISION_NOMINATE, job);
			d->environment = env;
			d->instance_type = type;
			d->nomination_kind = FS_NOMINATION_STARVATION;
			d->nominated_since = pass->in->now;
			pass->result->stats.nominated++;
			fs_note_nominated(pass, job);
			return;
		}
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
	take_nominations(&pass);	/* 2. keep or drop earlier nominations */
	place_nominated_jobs(&pass);	/* 3. jobs earlier preemptions were for */

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
		if (pass.prefix_used_up)
			break;				/* the rest waits for a pass with fresh heads */
	}
	for (i = 0; i < input->n_queues; i++)	/* 5. starvation */
		nominate_starving_job(&pass, pass.queue_order[i]);

	result = pass.result;
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

void
fs_result_free(FsResult *result, const FsAllocator *allocator)
{
	if (result == NULL || allocator->free == NULL)
		return;
	if (result->decisions)
		allocator->free(allocator->ctx, result->decisions);
	if (result->wait_reasons)
		allocator->free(allocator->ctx, result->wait_reasons);
	allocator->free(allocator->ctx, result->share_usage);
	allocator->free(allocator->ctx, result->share_held);
	allocator->free(allocator->ctx, result);
}
