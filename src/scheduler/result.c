/*-------------------------------------------------------------------------
 *
 * result.c
 *		What a pass reports: decisions, wait reasons, misconfigured jobs.
 *
 * The result (FsResult) is allocated with the caller's allocator, not in
 * the pass's arena, because it outlives the pass; everything else here
 * only fills it in.  Decisions are appended in the order they are taken;
 * a job has at most one wait reason, overwritten each time it is looked
 * at again, and dropped at the end of the pass if the job was placed.
 * This file only records: whether a job fits or is misconfigured is
 * decided in capacity.c, which calls down into here, never the reverse.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

/* ---------- decisions and wait reasons ---------- */

/*
 * Room for one more of n items of size bytes in *items (the caller's
 * allocator: the result outlives the pass), doubling *max when full.
 */
static void *
grow(FsPass *pass, void *items, int n, int *max, size_t size)
{
	int			grown;
	void	   *bigger;

	if (n < *max)
		return items;
	grown = *max * 2 + 16;
	bigger = pass->allocator->alloc(pass->allocator->ctx, size * (size_t) grown);
	if (n > 0)
		memcpy(bigger, items, size * (size_t) n);
	if (items != NULL && pass->allocator->free != NULL)
		pass->allocator->free(pass->allocator->ctx, items);
	*max = grown;
	return bigger;
}

FsDecision *
fs_add_decision(FsPass *pass, FsDecisionKind kind, int job)
{
	FsResult   *r = pass->result;
	FsDecision *d;

	r->decisions = grow(pass, r->decisions, r->n_decisions, &pass->max_decisions,
						sizeof(FsDecision));
	d = &r->decisions[r->n_decisions++];
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	if (fs_decision_counted(r, r->n_decisions - 1))
	{
		pass->decided_jobs++;
		if (pass->in->decision_limit > 0 && pass->decided_jobs >= pass->in->decision_limit)
			pass->budget_spent = true;
	}
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
		r->wait_reasons = grow(pass, r->wait_reasons, r->n_wait_reasons, &pass->max_wait_reasons,
							   sizeof(FsWaitReason));
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

/*
 * The job can never fit (capacity.c: fs_job_misconfigured decides that):
 * its MISCONFIGURED decision, naming which limit says so and the most any
 * of its pairs allows, and its wait reason.
 */
void
fs_note_misconfigured(FsPass *pass, int job, FsMisconfiguration why, int64_t largest)
{
	FsJobState *js = &pass->jobs[job];
	FsDecision *d;
	FsWaitReason *w;

	js->misconfiguration = why;
	js->status = FS_JOB_MISCONFIGURED;
	js->considered = true;
	d = fs_add_decision(pass, FS_DECISION_MISCONFIGURED, job);
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
