/*
 * sim.c — the test world behind sim.h: builds an FsInput from the world,
 * runs a pass, applies its decisions, and moves time.  Test code only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void *
counting_alloc(void *ctx, size_t size)
{
	Sim		   *sim = ctx;
	void	   *p = malloc(size);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		abort();
	}
	sim->allocs++;
	return p;
}

static void
counting_free(void *ctx, void *p)
{
	Sim		   *sim = ctx;

	sim->frees++;
	free(p);
}

void
sim_init(Sim *sim)
{
	memset(sim, 0, sizeof(*sim));
	sim->now = FS_SECONDS(1000000);
	sim->min_runtime = FS_SECONDS(300);
	sim->starvation = FS_SECONDS(3600);
	sim->stop_delay = FS_SECONDS(30);
	sim->wait_reasons = true;
	sim->allocator.alloc = counting_alloc;
	sim->allocator.free = counting_free;
	sim->allocator.ctx = sim;
}

static void
release_pass(Sim *sim)
{
	if (sim->result)
		fs_result_free(sim->result, &sim->allocator);
	sim->result = NULL;
}

/*
 * The zeroed array behind one part of the input.  Kept from pass to pass
 * (a simulated day runs tens of thousands of passes; allocating them anew
 * each time cost more than the passes).
 */
static void *
storage(Sim *sim, int slot, size_t n, size_t size)
{
	size_t		bytes = (n + 1) * size;

	if (sim->storage_size[slot] < bytes)
	{
		free(sim->storage[slot]);
		sim->storage_size[slot] = bytes * 2;
		sim->storage[slot] = malloc(sim->storage_size[slot]);
		if (sim->storage[slot] == NULL)
			abort();
	}
	memset(sim->storage[slot], 0, bytes);
	return sim->storage[slot];
}

void
sim_free(Sim *sim)
{
	int			i;

	release_pass(sim);
	for (i = 0; i < 8; i++)
	{
		free(sim->storage[i]);
		sim->storage[i] = NULL;
		sim->storage_size[i] = 0;
	}
	free(sim->jobs);
	sim->jobs = NULL;
}

int
sim_type(Sim *sim, const char *name)
{
	int			t;

	for (t = 0; t < sim->n_types; t++)
		if (strcmp(sim->type_names[t], name) == 0)
			return t;
	snprintf(sim->type_names[sim->n_types], 32, "%s", name);
	sim->type_ptrs[sim->n_types] = sim->type_names[sim->n_types];
	return sim->n_types++;
}

int
sim_env(Sim *sim, const char *name)
{
	SimEnv	   *e = &sim->envs[sim->n_envs];

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->enabled = true;
	return sim->n_envs++;
}

static void
set_limit(FsLimit *limits, int *n, int unit, int64_t max)
{
	int			i;

	for (i = 0; i < *n; i++)
	{
		if (limits[i].unit == unit)
		{
			if (max < 0)
			{
				limits[i] = limits[--(*n)];
				return;
			}
			limits[i].max_capacity = max;
			return;
		}
	}
	if (max < 0)
		return;
	limits[*n].unit = unit;
	limits[*n].max_capacity = max;
	(*n)++;
}

void
sim_env_limit(Sim *sim, int env, int unit, int64_t max)
{
	set_limit(sim->envs[env].limits, &sim->envs[env].n_limits, unit, max);
}

int
sim_queue(Sim *sim, const char *name, int priority, FsPolicyKind policy)
{
	SimQueue   *q = &sim->queues[sim->n_queues];

	memset(q, 0, sizeof(*q));
	snprintf(q->name, sizeof(q->name), "%s", name);
	q->priority = priority;
	q->policy = policy;
	return sim->n_queues++;
}

void
sim_queue_env(Sim *sim, int queue, int env)
{
	sim->queues[queue].envs[sim->queues[queue].n_envs++] = env;
}

int
sim_share(Sim *sim, int queue, const char *name)
{
	SimShare   *s = &sim->shares[sim->n_shares];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->queue = queue;
	s->weight = 1.0;
	s->strategy = FS_STRATEGY_LEND_AND_BORROW;
	s->borrow_limit = -1;
	return sim->n_shares++;
}

void
sim_share_limit(Sim *sim, int share, int unit, int64_t max)
{
	set_limit(sim->shares[share].limits, &sim->shares[share].n_limits, unit, max);
}

static int
new_job(Sim *sim)
{
	SimJob	   *j;

	if (sim->n_jobs == sim->max_jobs)
	{
		sim->max_jobs = sim->max_jobs * 2 + 64;
		sim->jobs = realloc(sim->jobs, sizeof(SimJob) * (size_t) sim->max_jobs);
	}
	j = &sim->jobs[sim->n_jobs];
	memset(j, 0, sizeof(*j));
	j->id = sim->n_jobs + 1;
	j->env = j->type = -1;
	j->duration = SIM_FOREVER;
	return sim->n_jobs++;
}

int
sim_submit(Sim *sim, int share, int count, int priority, int type)
{
	int			i = new_job(sim);
	SimJob	   *j = &sim->jobs[i];

	j->share = share;
	j->count = count;
	j->priority = priority;
	j->runnable_at = sim->now;
	j->types[0] = type;
	j->n_types = 1;
	j->state = SIM_RUNNABLE;
	return i;
}

void
sim_job_type(Sim *sim, int job, int type)
{
	sim->jobs[job].types[sim->jobs[job].n_types++] = type;
}

int
sim_run(Sim *sim, int share, int env, int type, int count, int priority)
{
	int			i = sim_submit(sim, share, count, priority, type);
	SimJob	   *j = &sim->jobs[i];

	j->state = SIM_RUNNING;
	j->env = env;
	j->type = type;
	j->started_at = sim->now - FS_SECONDS(3600);
	j->placements = 1;
	return i;
}

SimJob *
sim_job(Sim *sim, int64_t job_id)
{
	if (job_id < 1 || job_id > sim->n_jobs)
		return NULL;
	return &sim->jobs[job_id - 1];
}

/* ---------- building the input ---------- */

static const Sim *sort_sim;

static int
share_order(const void *a, const void *b)
{
	const SimJob *ja = &sort_sim->jobs[*(const int *) a];
	const SimJob *jb = &sort_sim->jobs[*(const int *) b];

	if (sort_sim->queues[sort_sim->shares[ja->share].queue].policy != FS_POLICY_FIFO &&
		ja->priority != jb->priority)
		return ja->priority > jb->priority ? -1 : 1;
	if (ja->runnable_at != jb->runnable_at)
		return ja->runnable_at < jb->runnable_at ? -1 : 1;
	return ja->id < jb->id ? -1 : (ja->id > jb->id);
}

static void
build_input(Sim *sim)
{
	FsInput    *in = &sim->input;
	FsEnvironment *envs = storage(sim, 0, (size_t) sim->n_envs, sizeof(FsEnvironment));
	FsQueue    *queues = storage(sim, 1, (size_t) sim->n_queues, sizeof(FsQueue));
	FsShare    *shares = storage(sim, 2, (size_t) sim->n_shares, sizeof(FsShare));
	FsRunnableJob *runnable = storage(sim, 3, (size_t) sim->n_jobs, sizeof(FsRunnableJob));
	FsRunningJob *running = storage(sim, 4, (size_t) sim->n_jobs, sizeof(FsRunningJob));
	int		   *order = storage(sim, 5, (size_t) sim->n_jobs, sizeof(int));
	int			n_runnable = 0;
	int			n_running = 0;
	int			i,
				s;

	memset(in, 0, sizeof(*in));
	in->now = sim->now;
	in->preemption_min_runtime = sim->min_runtime;
	in->reclaim_wait = sim->reclaim_wait;
	in->checkpoint_on_stop = sim->checkpoint_on_stop;
	in->starvation_wait = sim->starvation;
	in->victim_order = sim->victim_order;
	in->collect_wait_reasons = sim->wait_reasons;
	in->n_instance_types = sim->n_types;
	in->instance_type_names = sim->type_ptrs;

	for (i = 0; i < sim->n_envs; i++)
	{
		envs[i].name = sim->envs[i].name;
		envs[i].enabled = sim->envs[i].enabled;
		envs[i].n_limits = sim->envs[i].n_limits;
		envs[i].limits = sim->envs[i].limits;
	}
	for (i = 0; i < sim->n_queues; i++)
	{
		SimQueue   *q = &sim->queues[i];

		queues[i].name = q->name;
		queues[i].priority = q->priority;
		queues[i].policy = q->policy;
		queues[i].strict_fifo = q->strict_fifo;
		queues[i].n_environments = q->n_envs;
		queues[i].environments = q->envs;
		queues[i].share_decay = q->share_decay;
		queues[i].compute_reservation = q->compute_reservation;
		queues[i].idle_assignment = q->idle_assignment;
	}

	/* runnable jobs, per share in share order, cut to the prefix */
	sort_sim = sim;
	for (s = 0; s < sim->n_shares; s++)
	{
		SimShare   *sh = &sim->shares[s];
		int			n = 0;
		int			prefix;

		shares[s].name = sh->name;
		shares[s].queue = sh->queue;
		shares[s].weight = sh->weight;
		shares[s].usage = sh->usage;
		shares[s].usage_at = sh->usage_at;
		shares[s].n_limits = sh->n_limits;
		shares[s].limits = sh->limits;
		shares[s].strategy = sh->strategy;
		shares[s].borrow_limit = sh->borrow_limit;
		shares[s].in_share_preemption = sh->in_share_preemption;
		for (i = 0; i < sim->n_jobs; i++)
			if (sim->jobs[i].share == s && sim->jobs[i].state == SIM_RUNNABLE)
				order[n++] = i;
		qsort(order, (size_t) n, sizeof(int), share_order);
		shares[s].runnable = &runnable[n_runnable];
		/* (a bounded pass loads the fair shares it serves last to their first job) */
		prefix = sim->prefix > 0 && sim->first_only_odd && s % 2 == 1 ? 1 : sim->prefix;
		shares[s].more_runnable = prefix > 0 && n > prefix;
		if (prefix > 0 && n > prefix)
		{
			/* the head, and every nominated job beyond it, as the wrapper loads */
			int			kept = prefix;

			for (i = prefix; i < n; i++)
				if (sim->jobs[order[i]].nomination.kind != FS_NOMINATION_NONE)
					order[kept++] = order[i];
			n = kept;
		}
		for (i = 0; i < n; i++)
		{
			SimJob	   *j = &sim->jobs[order[i]];
			FsRunnableJob *r = &runnable[n_runnable++];

			r->job_id = j->id;
			r->priority = j->priority;
			r->runnable_at = j->runnable_at;
			r->instance_count = j->count;
			r->n_instance_types = j->n_types;
			r->instance_types = j->types;
			r->n_backoffs = j->n_backoffs;
			r->backoffs = j->backoffs;
			r->nomination = j->nomination;
			r->max_occupancy = j->max_occupancy;
			j->loaded = true;
		}
		shares[s].n_runnable = n;
	}
	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];

		if (j->state != SIM_RUNNING && j->state != SIM_STOPPING)
			continue;
		running[n_running].job_id = j->id;
		running[n_running].share = j->share;
		running[n_running].environment = j->env;
		running[n_running].instance_type = j->type;
		running[n_running].instance_count = j->count;
		running[n_running].priority = j->priority;
		running[n_running].started_at = j->started_at;
		running[n_running].stopping = j->state == SIM_STOPPING;
		running[n_running].stopping_for = j->stopping_for;
		running[n_running].ends_by = j->max_occupancy > 0 ? j->started_at + j->max_occupancy : 0;
		running[n_running].checkpoint_interval = j->checkpoint_interval;
		/* as the wrapper learns it: once SageMaker says it trains */
		running[n_running].checkpoint_from = j->checkpoint_from <= sim->now ? j->checkpoint_from : 0;
		n_running++;
	}
	in->n_environments = sim->n_envs;
	in->environments = envs;
	in->n_queues = sim->n_queues;
	in->queues = queues;
	in->n_shares = sim->n_shares;
	in->shares = shares;
	in->n_running = n_running;
	in->running = running;
}

static bool
same_decision(const FsDecision *a, const FsDecision *b)
{
	return a->kind == b->kind && a->job_id == b->job_id && a->environment == b->environment &&
		a->instance_type == b->instance_type && a->for_job_id == b->for_job_id &&
		a->instance_count == b->instance_count && a->nomination_kind == b->nomination_kind &&
		a->share == b->share;
}

/*
 * The pass again with FsInput.decision_limit.  It may stop early, but
 * never decide otherwise: its decisions are the first ones of the
 * unbounded pass.  It must not stop before it has spent the limit
 * (fs_decision_counted(): placed, preempted, reclaimed for) or decided all
 * the unbounded pass did, and must say it stopped at the limit when the
 * unbounded pass decided more.
 */
void
sim_compare_bounded(Sim *sim, const FsResult *full)
{
	FsInput		bounded_input = sim->input;
	FsResult   *bounded;
	int			counted_full = 0;
	int			counted_bounded = 0;
	bool		same;

	bounded_input.decision_limit = sim->bounded_check;
	bounded = fs_schedule(&bounded_input, &sim->allocator);
	same = bounded->n_decisions <= full->n_decisions;
	for (int i = 0; same && i < bounded->n_decisions; i++)
		same = same_decision(&full->decisions[i], &bounded->decisions[i]);
	for (int i = 0; i < full->n_decisions; i++)
		if (fs_decision_counted(full, i))
		{
			counted_full++;
			if (i < bounded->n_decisions)
				counted_bounded++;
		}
	if (counted_bounded < (counted_full < sim->bounded_check ? counted_full : sim->bounded_check))
		same = false;
	if (counted_bounded < counted_full && !bounded->decision_limit_reached)
		same = false;
	sim->bounded_passes++;
	if (!same)
		sim->bounded_mismatches++;
	fs_result_free(bounded, &sim->allocator);
}

/* ---------- a pass ---------- */

FsResult *
sim_pass(Sim *sim)
{
	FsResult   *r;
	char		message[256];
	int			i;

	release_pass(sim);
	for (i = 0; i < sim->n_jobs; i++)
	{
		sim->jobs[i].loaded = false;
		sim->jobs[i].placed_last_pass = false;
		sim->jobs[i].stopped_last_pass = false;
		sim->jobs[i].misconfigured = false;
		sim->jobs[i].was_nominated = sim->jobs[i].state == SIM_RUNNABLE &&
			sim->jobs[i].nomination.kind != FS_NOMINATION_NONE;
	}
	build_input(sim);
	if (!fs_check_input(&sim->input, message, sizeof(message)))
	{
		fprintf(stderr, "sim: bad input: %s\n", message);
		abort();
	}
	r = fs_schedule(&sim->input, &sim->allocator);
	sim->result = r;
	if (sim->bounded_check > 0)
		sim_compare_bounded(sim, r);

	for (i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		SimJob	   *j = sim_job(sim, d->job_id);

		switch (d->kind)
		{
			case FS_DECISION_PLACE:
				j->state = SIM_RUNNING;
				j->env = d->environment;
				j->type = d->instance_type;
				j->started_at = sim->now;
				j->checkpoint_from = 0;	/* the caller says when it trains */
				j->nomination.kind = FS_NOMINATION_NONE;
				j->placements++;
				j->placed_last_pass = true;
				break;
			case FS_DECISION_PREEMPT:
				j->state = SIM_STOPPING;
				j->stopped_last_pass = true;
				j->stopping_for = d->for_job_id;
				j->stop_at = sim->now + sim->stop_delay;
				break;
			case FS_DECISION_NOMINATE:
				j->nomination.kind = d->nomination_kind;
				j->nomination.environment = d->environment;
				j->nomination.instance_type = d->instance_type;
				j->nomination.since = d->nominated_since;
				break;
			case FS_DECISION_KEEP_NOMINATION:
				break;
			case FS_DECISION_DROP_NOMINATION:
				j->nomination.kind = FS_NOMINATION_NONE;
				break;
			case FS_DECISION_MISCONFIGURED:
				j->misconfigured = true;
				break;
		}
	}
	for (i = 0; i < sim->n_shares; i++)
	{
		if (sim->queues[sim->shares[i].queue].policy != FS_POLICY_FAIR_SHARE)
			continue;
		sim->shares[i].usage = r->share_usage[i];
		sim->shares[i].usage_at = sim->now;
	}
	return r;
}

void
sim_advance(Sim *sim, FsTime dt)
{
	int			i;

	sim->now += dt;
	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];

		if (j->state == SIM_RUNNING && j->duration != SIM_FOREVER &&
			j->started_at + j->duration <= sim->now)
			j->state = SIM_DONE;
		else if (j->state == SIM_STOPPING && j->stop_at <= sim->now)
		{
			j->state = SIM_RUNNABLE;
			if (!sim->requeue_keeps_place)
				j->runnable_at = sim->now;
			j->preemptions++;
			j->stopping_for = 0;
			j->env = j->type = -1;
			j->checkpoint_from = 0;
		}
	}
}

void
sim_finish_stops(Sim *sim)
{
	int			i;

	for (i = 0; i < sim->n_jobs; i++)
		if (sim->jobs[i].state == SIM_STOPPING)
			sim->jobs[i].stop_at = sim->now;
	sim_advance(sim, 0);
}

void
sim_finish(Sim *sim, int job)
{
	sim->jobs[job].state = SIM_DONE;
}

/* Passes (with stops finishing in between) until a pass decides nothing new. */
int
sim_passes_until_quiet(Sim *sim, int max_passes)
{
	int			n;

	for (n = 1; n <= max_passes; n++)
	{
		FsResult   *r = sim_pass(sim);
		int			i;
		bool		quiet = true;

		for (i = 0; i < r->n_decisions; i++)
			if (r->decisions[i].kind != FS_DECISION_KEEP_NOMINATION &&
				r->decisions[i].kind != FS_DECISION_MISCONFIGURED)
				quiet = false;
		for (i = 0; i < sim->n_jobs; i++)
			if (sim->jobs[i].state == SIM_STOPPING)
				quiet = false;
		if (quiet)
			return n;
		sim_advance(sim, sim->stop_delay);
	}
	return -1;
}

int64_t
sim_held(Sim *sim, int share)
{
	int64_t		held = 0;
	int			i;

	for (i = 0; i < sim->n_jobs; i++)
		if (sim->jobs[i].share == share &&
			(sim->jobs[i].state == SIM_RUNNING || sim->jobs[i].state == SIM_STOPPING))
			held += sim->jobs[i].count;
	return held;
}

int64_t
sim_env_used(Sim *sim, int env, int unit)
{
	int64_t		used = 0;
	int			i;

	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];

		if ((j->state == SIM_RUNNING || j->state == SIM_STOPPING) && j->env == env &&
			(unit == FS_UNIT_NUM_INSTANCES || unit == j->type))
			used += j->count;
	}
	return used;
}

int
sim_count(Sim *sim, FsDecisionKind kind)
{
	int			n = 0;
	int			i;

	for (i = 0; sim->result && i < sim->result->n_decisions; i++)
		if (sim->result->decisions[i].kind == kind)
			n++;
	return n;
}

const FsDecision *
sim_decision(Sim *sim, FsDecisionKind kind, int64_t job_id)
{
	int			i;

	for (i = 0; sim->result && i < sim->result->n_decisions; i++)
		if (sim->result->decisions[i].kind == kind && sim->result->decisions[i].job_id == job_id)
			return &sim->result->decisions[i];
	return NULL;
}

const FsWaitReason *
sim_wait(Sim *sim, int64_t job_id)
{
	int			i;

	for (i = 0; sim->result && i < sim->result->n_wait_reasons; i++)
		if (sim->result->wait_reasons[i].job_id == job_id)
			return &sim->result->wait_reasons[i];
	return NULL;
}

const char *
sim_wait_text(Sim *sim, int64_t job_id)
{
	static char text[512];
	const FsWaitReason *w = sim_wait(sim, job_id);

	if (w == NULL)
		return "(no wait reason)";
	fs_format_wait_reason(&sim->input, w, text, sizeof(text));
	return text;
}
