/*
 * property.c — property tests of the scheduling core on random workloads.
 *
 * Each workload is a random world (environments, limits, FIFO, fair-share
 * and quota-share queues, shares) driven for many passes with arrivals,
 * completions, stops that finish after a delay, capacity failures with
 * back-off, priority changes, limit changes and environments switched off
 * and on.  After every pass an independent checker (it does not call the
 * core) verifies:
 *
 *	 capacity	no capacity limit is exceeded, counting stopping jobs (a limit
 *				lowered below use only forbids new placements there); every
 *				placement is on a usable (environment, type) of the job;
 *	 victims	a reclaim takes only from other shares above their limit;
 *				in-share preemption only lower-priority jobs of the share;
 *				among jobs alike by the rules, the ones that lose least
 *				work (half the jobs keep checkpoints; a third of the
 *				workloads count a last checkpoint at the stop, and a
 *				quarter let a reclaim wait 30-300 s first);
 *	 fit		a job that preemptions were made for is placed in the first
 *				pass after its victims have stopped, unless something with
 *				a right to it changed (a limit, a priority, an environment);
 *	 order		no job is placed before an earlier job of its share (FIFO,
 *				or share order) that fits the same room; strict FIFO queues
 *				place nothing behind a waiting head;
 *	 work		no loaded RUNNABLE job is left that fits in free capacity
 *				not held for a nominated job, under its queue's rules;
 *	 reclaim	once arrivals stop and stops finish (a quiet point), no quota
 *				share's job within its guarantee waits while shares above
 *				their limit hold enough to make it fit;
 *	 thrash		the quiet point is reached, and no job is preempted more
 *				than a few times over the run;
 *	 no room	a pass on the same input without the RUNNABLE jobs (but
 *				the nominated ones) of the shares fs_shares_without_room()
 *				names decides the same, but that those jobs are
 *				MISCONFIGURED, and gives every fair share the same usage
 *				(the wrapper leaves those jobs out); and those shares
 *				include every share of the queues fs_queues_without_room()
 *				names.
 * Then fair-share convergence: weights 1/3/5 on a saturated environment
 * end at 15/23, 5/23, 3/23 within one instance, for many seeds.
 *
 * Usage: core_property [workloads [first-seed]]   (default 3000, 1)
 *        core_property --seed N                     (one workload, verbose:
 *                          dumps the world at each violation)
 *        core_property --converge N                 (one convergence run)
 * With --seed, TRACE_JOB=id (and TRACE_SHARE=index) in the environment
 * print every decision about that job (share) and its wait reasons;
 * with --converge, DEBUG_PASS=n dumps pass n.
 * Every failure prints its seed; the last line is "N passed, M failed".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/*
 * A job low in priority in a share with in-share preemption is preempted
 * whenever a higher-priority job arrives, so the count per job is bounded
 * by the arrivals, not by a constant; this bound only catches runaways.
 * Thrash proper is a ping-pong, checked in check_pass().
 */
#define MAX_PREEMPTIONS_PER_JOB 25

static uint64_t rng;
static bool verbose;

static uint32_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t) ((rng * UINT64_C(2685821657736338717)) >> 32);
}

static int
rnd_int(int lo, int hi)
{
	return lo + (int) (rnd() % (uint32_t) (hi - lo + 1));
}

static bool
chance(int percent)
{
	return (int) (rnd() % 100) < percent;
}

/* ---------- the workload ---------- */

typedef struct Workload
{
	uint64_t	seed;
	bool		prefixed;		/* loads heads only: jobs beyond are invisible */
	bool		simple_quota;	/* one unit everywhere: the reclaim check applies */
	int			steps;
	int			epoch;			/* bumped whenever a right to capacity changes */
	int			changes;		/* ... or anything else changes: arrivals, completions */
	int		   *nominated_epoch;	/* per job */
	int			max_nominated;
	int			violations;
	const char *first_property;
	int			preemptions;
	int			placements;
	struct
	{
		int64_t		victim;
		int64_t		for_job;
		int			epoch;
	}		   *preempted;		/* every preemption so far */
	int			n_preempted;
	int			max_preempted;
} Workload;

static void
violation(Workload *w, const char *property, int step, const char *fmt, long long a, long long b)
{
	w->violations++;
	if (w->first_property == NULL)
		w->first_property = property;
	if (w->violations <= 5 || verbose)
	{
		printf("    seed %llu step %d: %s: ", (unsigned long long) w->seed, step, property);
		printf(fmt, a, b);
		printf("\n");
	}
}

static void
generate_world(Sim *sim, Workload *w)
{
	int			n_types = rnd_int(1, 3);
	int			n_envs = rnd_int(1, 2);
	int			n_queues = rnd_int(1, 3);
	int			i,
				k;

	w->simple_quota = chance(40);
	sim->min_runtime = chance(50) ? 0 : FS_SECONDS(300);
	sim->starvation = chance(50) ? 0 : FS_SECONDS(rnd_int(600, 3600));
	sim->stop_delay = FS_SECONDS(rnd_int(20, 90));
	sim->prefix = chance(50) ? 0 : rnd_int(1, 8);
	sim->first_only_odd = sim->prefix % 2 == 0;	/* no draw: the workloads stay the same */
	sim->wait_reasons = chance(50) || verbose;

	for (i = 0; i < n_types; i++)
	{
		char		name[16];

		snprintf(name, sizeof(name), "ml.t%d", i);
		sim_type(sim, name);
	}
	for (i = 0; i < n_envs; i++)
	{
		char		name[16];
		int			env;
		bool		any = false;

		snprintf(name, sizeof(name), "env%d", i);
		env = sim_env(sim, name);
		if (w->simple_quota)
		{
			sim_env_limit(sim, env, FS_UNIT_NUM_INSTANCES, rnd_int(6, 40));
			continue;
		}
		if (chance(50))
		{
			sim_env_limit(sim, env, FS_UNIT_NUM_INSTANCES, rnd_int(4, 40));
			any = true;
		}
		for (k = 0; k < n_types; k++)
			if (chance(70) || (!any && k == n_types - 1))
			{
				sim_env_limit(sim, env, k, rnd_int(2, 30));
				any = true;
			}
	}
	for (i = 0; i < n_queues; i++)
	{
		char		name[16];
		int			r = rnd_int(0, 99);
		FsPolicyKind policy = r < 30 ? FS_POLICY_FIFO : r < 65 ? FS_POLICY_FAIR_SHARE : FS_POLICY_QUOTA_SHARE;
		int			q;
		int			n_shares;
		int			first_env = rnd_int(0, n_envs - 1);

		snprintf(name, sizeof(name), "queue%d", i);
		q = sim_queue(sim, name, rnd_int(0, 3), policy);
		sim_queue_env(sim, q, first_env);
		if (n_envs > 1 && chance(50) && !(w->simple_quota && policy == FS_POLICY_QUOTA_SHARE))
			sim_queue_env(sim, q, 1 - first_env);
		sim->queues[q].strict_fifo = policy == FS_POLICY_FIFO && chance(20);
		if (policy == FS_POLICY_FAIR_SHARE)
		{
			sim->queues[q].share_decay = chance(50) ? 0 : FS_SECONDS(rnd_int(60, 3600));
			sim->queues[q].compute_reservation = chance(20) ? rnd_int(10, 60) : 0;
		}
		sim->queues[q].idle_assignment = chance(50) ? FS_IDLE_FIFO : FS_IDLE_FAIR;
		n_shares = policy == FS_POLICY_FIFO ? 1 : rnd_int(1, 4);
		for (k = 0; k < n_shares; k++)
		{
			static const double weights[] = {0.5, 1, 2, 3, 5};
			int			s;

			snprintf(name, sizeof(name), "q%ds%d", i, k);
			s = sim_share(sim, q, name);
			sim->shares[s].weight = weights[rnd_int(0, 4)];
			if (policy != FS_POLICY_QUOTA_SHARE)
				continue;
			sim->shares[s].strategy = (FsStrategy) rnd_int(0, 2);
			sim->shares[s].borrow_limit = chance(40) ? -1 : (int[]) {0, 50, 100}[rnd_int(0, 2)];
			sim->shares[s].in_share_preemption = chance(40);
			if (w->simple_quota || chance(60))
				sim_share_limit(sim, s, FS_UNIT_NUM_INSTANCES, rnd_int(0, 25));
			if (!w->simple_quota)
			{
				int			t;

				for (t = 0; t < n_types; t++)
					if (chance(40))
						sim_share_limit(sim, s, t, rnd_int(0, 20));
			}
		}
	}
}

static void
submit_random_job(Sim *sim, int share)
{
	const SimQueue *q = &sim->queues[sim->shares[share].queue];
	int			env = q->envs[0];
	int64_t		biggest = 1;
	int			count;
	int			j,
				i;

	for (i = 0; i < sim->envs[env].n_limits; i++)
		if (sim->envs[env].limits[i].max_capacity > biggest)
			biggest = sim->envs[env].limits[i].max_capacity;
	count = chance(10) ? rnd_int(1, (int) (biggest * 3 / 2) + 1) : rnd_int(1, 6);
	j = sim_submit(sim, share, count, rnd_int(0, 5), rnd_int(0, sim->n_types - 1));
	if (sim->n_types > 1 && chance(40))
	{
		int			other = rnd_int(0, sim->n_types - 1);

		if (other != sim->jobs[j].types[0])
			sim_job_type(sim, j, other);
	}
	sim->jobs[j].duration = chance(10) ? SIM_FOREVER : FS_SECONDS(rnd_int(60, 1800));
	/* half of the others carry a time limit that holds, so some back-fill held room */
	if (sim->jobs[j].duration != SIM_FOREVER && chance(50))
		sim->jobs[j].max_occupancy = sim->jobs[j].duration + FS_SECONDS(rnd_int(0, 600));
}

static void
random_events(Sim *sim, Workload *w, bool arrivals)
{
	int			i;

	if (arrivals)
	{
		for (i = 0; i < sim->n_queues; i++)
		{
			int			n = rnd_int(0, 3);

			while (n-- > 0)
			{
				int			shares[SIM_MAX_SHARES];
				int			n_shares = 0;
				int			s;

				w->changes++;
				for (s = 0; s < sim->n_shares; s++)
					if (sim->shares[s].queue == i)
						shares[n_shares++] = s;
				submit_random_job(sim, shares[rnd_int(0, n_shares - 1)]);
			}
		}
	}
	if (sim->n_jobs > 0 && chance(3))
	{
		SimJob	   *j = &sim->jobs[rnd_int(0, sim->n_jobs - 1)];

		if (j->state != SIM_DONE)
		{
			j->priority = rnd_int(0, 5);
			w->epoch++;
		}
	}
	if (chance(3))
	{
		if (chance(50))
		{
			SimEnv	   *e = &sim->envs[rnd_int(0, sim->n_envs - 1)];
			FsLimit    *l = &e->limits[rnd_int(0, e->n_limits - 1)];

			l->max_capacity += rnd_int(-5, 5);
			if (l->max_capacity < 1)
				l->max_capacity = 1;
		}
		else
		{
			SimShare   *s = &sim->shares[rnd_int(0, sim->n_shares - 1)];

			if (s->n_limits > 0)
			{
				FsLimit    *l = &s->limits[rnd_int(0, s->n_limits - 1)];

				l->max_capacity += rnd_int(-5, 5);
				if (l->max_capacity < 0)
					l->max_capacity = 0;
			}
		}
		w->epoch++;
	}
	if (chance(1))
	{
		SimEnv	   *e = &sim->envs[rnd_int(0, sim->n_envs - 1)];

		e->enabled = !e->enabled;
		w->epoch++;
	}
	/* SageMaker fails a fresh attempt for lack of capacity: back-off on its pair */
	if (chance(5))
	{
		for (i = 0; i < sim->n_jobs; i++)
		{
			SimJob	   *j = &sim->jobs[i];

			if (j->placed_last_pass && j->state == SIM_RUNNING && j->n_backoffs < 4)
			{
				j->backoffs[j->n_backoffs].environment = j->env;
				j->backoffs[j->n_backoffs].instance_type = j->type;
				j->backoffs[j->n_backoffs].until = sim->now + FS_SECONDS(rnd_int(300, 900));
				j->n_backoffs++;
				j->state = SIM_RUNNABLE;
				j->runnable_at = sim->now;
				j->env = j->type = -1;
				w->epoch++;
				break;
			}
		}
	}
}

/* ---------- the checker ---------- */

static void
dump_world(Sim *sim)
{
	int			i,
				k;

	for (i = 0; i < sim->n_envs; i++)
	{
		printf("      env %d %s%s:", i, sim->envs[i].name, sim->envs[i].enabled ? "" : " DISABLED");
		for (k = 0; k < sim->envs[i].n_limits; k++)
			printf(" unit %d max %lld used %lld;", sim->envs[i].limits[k].unit,
				   (long long) sim->envs[i].limits[k].max_capacity,
				   (long long) sim_env_used(sim, i, sim->envs[i].limits[k].unit));
		printf("\n");
	}
	for (i = 0; i < sim->n_queues; i++)
	{
		printf("      queue %d %s prio %d policy %d strict %d reserv %d idle %d envs", i, sim->queues[i].name,
			   sim->queues[i].priority, sim->queues[i].policy, sim->queues[i].strict_fifo,
			   sim->queues[i].compute_reservation, sim->queues[i].idle_assignment);
		for (k = 0; k < sim->queues[i].n_envs; k++)
			printf(" %d", sim->queues[i].envs[k]);
		printf("\n");
	}
	for (i = 0; i < sim->n_shares; i++)
	{
		printf("      share %d %s queue %d w %.1f strat %d borrow %d inshare %d held %lld limits",
			   i, sim->shares[i].name, sim->shares[i].queue, sim->shares[i].weight, sim->shares[i].strategy,
			   sim->shares[i].borrow_limit, sim->shares[i].in_share_preemption, (long long) sim_held(sim, i));
		for (k = 0; k < sim->shares[i].n_limits; k++)
			printf(" %d:%lld", sim->shares[i].limits[k].unit, (long long) sim->shares[i].limits[k].max_capacity);
		printf("\n");
	}
	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];

		if (j->state == SIM_DONE)
			continue;
		printf("      job %lld share %d state %d count %d prio %d types", (long long) j->id, j->share,
			   j->state, j->count, j->priority);
		for (k = 0; k < j->n_types; k++)
			printf(" %d", j->types[k]);
		if (j->n_backoffs)
			printf(" backoff %d/%d until +%llds", j->backoffs[0].environment, j->backoffs[0].instance_type, (long long) ((j->backoffs[0].until - sim->now) / FS_USECS_PER_SEC));
		printf(" env %d type %d nom %d:%d/%d loaded %d misc %d runnable_at %lld stopfor %lld\n", j->env, j->type,
			   j->nomination.kind, j->nomination.environment, j->nomination.instance_type, j->loaded,
			   j->misconfigured, (long long) (j->runnable_at / FS_USECS_PER_SEC), (long long) j->stopping_for);
		if (j->state == SIM_RUNNABLE && sim_wait(sim, j->id))
			printf("        %s\n", sim_wait_text(sim, j->id));
	}
	for (i = 0; i < sim->result->n_decisions; i++)
	{
		char		text[300];

		fs_format_decision(&sim->input, &sim->result->decisions[i], text, sizeof(text));
		printf("      decision %d job %lld env %d type %d: %s\n", sim->result->decisions[i].kind,
			   (long long) sim->result->decisions[i].job_id, sim->result->decisions[i].environment,
			   sim->result->decisions[i].instance_type, text);
	}
}

#define UNITS (SIM_MAX_TYPES + 1)

typedef struct World
{
	int64_t		occupied[SIM_MAX_ENVS][UNITS];	/* running + stopping */
	int64_t		held[SIM_MAX_ENVS][UNITS];	/* for nominated jobs */
	int64_t		share_held[SIM_MAX_SHARES][UNITS];	/* non-stopping */
	int64_t		share_nominated[SIM_MAX_SHARES][UNITS];
	int64_t		share_stopped_now[SIM_MAX_SHARES][UNITS];	/* victims of the last pass */
	int64_t		share_in_env[SIM_MAX_SHARES][SIM_MAX_ENVS];	/* non-stopping, instances */
} World;

static int64_t
env_max(const Sim *sim, int env, int unit)
{
	int			i;

	for (i = 0; i < sim->envs[env].n_limits; i++)
		if (sim->envs[env].limits[i].unit == unit)
			return sim->envs[env].limits[i].max_capacity;
	return -1;
}

static int64_t
share_limit(const Sim *sim, int share, int unit)
{
	int			i;

	for (i = 0; i < sim->shares[share].n_limits; i++)
		if (sim->shares[share].limits[i].unit == unit)
			return sim->shares[share].limits[i].max_capacity;
	return -1;
}

static bool
is_quota(const Sim *sim, int share)
{
	return sim->queues[sim->shares[share].queue].policy == FS_POLICY_QUOTA_SHARE;
}

static void
look_at_world(const Sim *sim, World *wd)
{
	int			i,
				k;

	memset(wd, 0, sizeof(*wd));
	for (i = 0; i < sim->n_jobs; i++)
	{
		const SimJob *j = &sim->jobs[i];

		if (j->state == SIM_RUNNING || j->state == SIM_STOPPING)
		{
			wd->occupied[j->env][0] += j->count;
			wd->occupied[j->env][j->type + 1] += j->count;
			if (j->stopped_last_pass)
			{
				wd->share_stopped_now[j->share][0] += j->count;
				wd->share_stopped_now[j->share][j->type + 1] += j->count;
			}
			if (j->state == SIM_RUNNING)
			{
				wd->share_held[j->share][0] += j->count;
				wd->share_held[j->share][j->type + 1] += j->count;
				wd->share_in_env[j->share][j->env] += j->count;
			}
		}
		if (j->state == SIM_RUNNABLE && j->nomination.kind != FS_NOMINATION_NONE)
		{
			int64_t		stop_num = 0,
						stop_type = 0;
			int			e = j->nomination.environment;
			int			t = j->nomination.instance_type;

			if (j->nomination.kind == FS_NOMINATION_PREEMPTION)
				for (k = 0; k < sim->n_jobs; k++)
					if (sim->jobs[k].state == SIM_STOPPING && sim->jobs[k].stopping_for == j->id &&
						sim->jobs[k].env == e)
					{
						stop_num += sim->jobs[k].count;
						if (sim->jobs[k].type == t)
							stop_type += sim->jobs[k].count;
					}
			wd->held[e][0] += j->count - stop_num > 0 ? j->count - stop_num : 0;
			wd->held[e][t + 1] += j->count - stop_type > 0 ? j->count - stop_type : 0;
			wd->share_nominated[j->share][0] += j->count;
			wd->share_nominated[j->share][t + 1] += j->count;
		}
	}
}

static bool
in_backoff(const Sim *sim, const SimJob *j, int env, int type)
{
	int			i;

	for (i = 0; i < j->n_backoffs; i++)
		if (j->backoffs[i].environment == env && j->backoffs[i].instance_type == type &&
			j->backoffs[i].until > sim->now)
			return true;
	return false;
}

static bool
has_type(const SimJob *j, int type)
{
	int			i;

	for (i = 0; i < j->n_types; i++)
		if (j->types[i] == type)
			return true;
	return false;
}

static bool
queue_has_env(const SimQueue *q, int env)
{
	int			i;

	for (i = 0; i < q->n_envs; i++)
		if (q->envs[i] == env)
			return true;
	return false;
}

/* The most a quota share may hold of a unit, -1 without a limit, INT64_MAX unbounded. */
static int64_t
share_cap(const Sim *sim, int share, int unit)
{
	int64_t		l = share_limit(sim, share, unit);
	const SimShare *s = &sim->shares[share];

	if (l < 0)
		return -1;
	if (s->strategy != FS_STRATEGY_LEND_AND_BORROW)
		return l;
	if (s->borrow_limit < 0)
		return INT64_MAX;
	return l + l * s->borrow_limit / 100;
}

/*
 * Fair share: must job j leave the compute reservation of env alone, and
 * how big is it?  floor(total x (r/100)^active), kept from shares that held
 * capacity at the start of the pass or were placed in it (docs/scheduling.md,
 * 'Fair-share queues').
 */
static int64_t
compute_reservation(const Sim *sim, const SimJob *j, int env, bool *restricted)
{
	const FsInput *in = &sim->input;
	const SimQueue *q = &sim->queues[sim->shares[j->share].queue];
	int64_t		total = env_max(sim, env, FS_UNIT_NUM_INSTANCES);
	double		ratio = 1.0;
	int			active = 0;
	int			s,
				i;

	*restricted = false;
	for (i = 0; i < in->n_running; i++)
		if (in->running[i].share == j->share)
			*restricted = true;
	for (i = 0; i < sim->n_jobs; i++)
		if (sim->jobs[i].share == j->share && sim->jobs[i].placed_last_pass)
			*restricted = true;
	for (s = 0; s < sim->n_shares; s++)
	{
		bool		is_active = in->shares[s].n_runnable > 0;

		if (sim->shares[s].queue != sim->shares[j->share].queue)
			continue;
		for (i = 0; i < in->n_running && !is_active; i++)
			if (in->running[i].share == s)
				is_active = true;
		active += is_active;
	}
	if (total < 0)
	{
		total = 0;
		for (i = 0; i < sim->envs[env].n_limits; i++)
			if (sim->envs[env].limits[i].unit != FS_UNIT_NUM_INSTANCES)
				total += sim->envs[env].limits[i].max_capacity;
	}
	/* exactly: in doubles 100 x 0.29 is 28.999... */
	{
		uint64_t	num = (uint64_t) total;
		uint64_t	den = 1;

		for (i = 0; i < active && num <= UINT64_MAX / 100 && den <= UINT64_MAX / 100; i++)
		{
			num *= (uint64_t) q->compute_reservation;
			den *= 100;
		}
		if (i == active)
			return (int64_t) (num / den);
	}
	for (i = 0; i < active; i++)
		ratio *= q->compute_reservation / 100.0;
	return (int64_t) floor((double) total * ratio * (1 + 1e-12));
}

/* Could job j run on (env, type) in the world as it is now, by its queue's rules? */
static bool
could_run(const Sim *sim, const World *wd, const SimJob *j, int env, int type)
{
	const SimQueue *q = &sim->queues[sim->shares[j->share].queue];
	bool		any = false;
	int			u;

	if (!sim->envs[env].enabled || in_backoff(sim, j, env, type))
		return false;
	for (u = 0; u < 2; u++)
	{
		int			unit = u == 0 ? FS_UNIT_NUM_INSTANCES : type;
		int64_t		max = env_max(sim, env, unit);
		int64_t		room;

		if (max < 0)
			continue;
		any = true;
		room = max - wd->occupied[env][unit + 1] - wd->held[env][unit + 1];
		if (room < j->count)
			return false;
		if (q->policy == FS_POLICY_QUOTA_SHARE)
		{
			/* what RESERVE shares do not use is kept, across the queue's environments */
			int64_t		kept = 0;
			int64_t		total = 0;
			int			p,
						e;

			for (p = 0; p < sim->n_shares; p++)
			{
				int64_t		l = share_limit(sim, p, unit);
				int64_t		unused;

				if (p == j->share || sim->shares[p].queue != sim->shares[j->share].queue ||
					sim->shares[p].strategy != FS_STRATEGY_RESERVE || l < 0)
					continue;
				unused = l - wd->share_held[p][unit + 1] - wd->share_nominated[p][unit + 1];
				if (unused > 0)
					kept += unused;
			}
			for (e = 0; e < q->n_envs; e++)
			{
				int64_t		m = env_max(sim, q->envs[e], unit);
				int64_t		r = m - wd->occupied[q->envs[e]][unit + 1] - wd->held[q->envs[e]][unit + 1];

				if (m >= 0 && r > 0)
					total += r;
			}
			if (kept > 0 && total - kept < j->count)
				return false;
		}
	}
	if (!any)
		return false;
	if (q->policy == FS_POLICY_FAIR_SHARE && q->compute_reservation > 0)
	{
		bool		restricted;
		int64_t		reserved = compute_reservation(sim, j, env, &restricted);
		int64_t		total = env_max(sim, env, FS_UNIT_NUM_INSTANCES);
		int			i;

		if (total < 0)
			for (total = 0, i = 0; i < sim->envs[env].n_limits; i++)
				total += sim->envs[env].limits[i].max_capacity;
		if (restricted && total - wd->occupied[env][0] - wd->held[env][0] - j->count < reserved)
			return false;
	}
	if (q->policy == FS_POLICY_QUOTA_SHARE)
	{
		bool		limited = false;

		for (u = 0; u < 2; u++)
		{
			int			unit = u == 0 ? FS_UNIT_NUM_INSTANCES : type;
			int64_t		cap = share_cap(sim, j->share, unit);

			if (cap < 0)
				continue;
			limited = true;
			/* the last pass's victims still count towards their share's limits */
			if (cap != INT64_MAX &&
				wd->share_held[j->share][unit + 1] + wd->share_stopped_now[j->share][unit + 1] +
				wd->share_nominated[j->share][unit + 1] + j->count > cap)
				return false;
		}
		if (!limited && !(sim->shares[j->share].strategy == FS_STRATEGY_LEND_AND_BORROW &&
						  sim->shares[j->share].borrow_limit < 0))
			return false;
	}
	return true;
}

static int
share_order_cmp(const Sim *sim, const SimJob *a, const SimJob *b)
{
	if (sim->queues[sim->shares[a->share].queue].policy != FS_POLICY_FIFO && a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->runnable_at != b->runnable_at)
		return a->runnable_at < b->runnable_at ? -1 : 1;
	return a->id < b->id ? -1 : 1;
}

static bool
waiting(const SimJob *j)
{
	return j->state == SIM_RUNNABLE && j->loaded && !j->misconfigured &&
		j->nomination.kind == FS_NOMINATION_NONE;
}

/* capacity: no limit exceeded; placements only on pairs the job may use */
static void
check_capacity(Sim *sim, Workload *w, int step)
{
	const FsInput *in = &sim->input;
	const FsResult *r = sim->result;
	int64_t		before[SIM_MAX_ENVS][UNITS];
	World		wd;
	int			i,
				e,
				u;

	memset(before, 0, sizeof(before));
	for (i = 0; i < in->n_running; i++)
	{
		before[in->running[i].environment][0] += in->running[i].instance_count;
		before[in->running[i].environment][in->running[i].instance_type + 1] += in->running[i].instance_count;
	}
	look_at_world(sim, &wd);
	for (e = 0; e < sim->n_envs; e++)
		for (u = 0; u <= sim->n_types; u++)
		{
			int64_t		max = env_max(sim, e, u - 1);

			if (max >= 0 && wd.occupied[e][u] > max && wd.occupied[e][u] > before[e][u])
				violation(w, "capacity", step, "limit exceeded in environment %lld unit %lld", e, u - 1);
		}
	for (i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const SimJob *j;

		if (d->kind != FS_DECISION_PLACE)
			continue;
		j = sim_job(sim, d->job_id);
		if (!sim->envs[d->environment].enabled ||
			!queue_has_env(&sim->queues[sim->shares[j->share].queue], d->environment) ||
			!has_type(j, d->instance_type) || in_backoff(sim, j, d->environment, d->instance_type) ||
			(env_max(sim, d->environment, FS_UNIT_NUM_INSTANCES) < 0 &&
			 env_max(sim, d->environment, d->instance_type) < 0))
			violation(w, "capacity", step, "job %lld placed on a pair it may not use (env %lld)",
					  d->job_id, d->environment);
	}
}

/* victims: reclaim only from other shares above their limit; in-share only lower priority */
static void
check_victims(Sim *sim, Workload *w, int step)
{
	const FsInput *in = &sim->input;
	const FsResult *r = sim->result;
	int64_t		held[SIM_MAX_SHARES][UNITS];
	int64_t		nominated[SIM_MAX_SHARES][UNITS];
	int			i;

	memset(held, 0, sizeof(held));
	memset(nominated, 0, sizeof(nominated));
	for (i = 0; i < in->n_running; i++)
	{
		const FsRunningJob *run = &in->running[i];

		if (run->stopping || run->share < 0)
			continue;
		held[run->share][0] += run->instance_count;
		held[run->share][run->instance_type + 1] += run->instance_count;
	}
	for (i = 0; i < sim->n_jobs; i++)
	{
		const SimJob *j = &sim->jobs[i];

		/* nominations kept into this pass: those not dropped */
		if (j->was_nominated && j->loaded && !sim_decision(sim, FS_DECISION_DROP_NOMINATION, j->id))
		{
			const FsDecision *keep = sim_decision(sim, FS_DECISION_KEEP_NOMINATION, j->id);
			const FsDecision *place = sim_decision(sim, FS_DECISION_PLACE, j->id);
			int			t = keep ? keep->instance_type : place ? place->instance_type : -1;

			if (t < 0)
				continue;
			nominated[j->share][0] += j->count;
			nominated[j->share][t + 1] += j->count;
		}
	}
	for (i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const SimJob *j = sim_job(sim, d->job_id);

		switch (d->kind)
		{
			case FS_DECISION_PLACE:
				held[j->share][0] += j->count;
				held[j->share][d->instance_type + 1] += j->count;
				if (j->was_nominated)
				{
					nominated[j->share][0] -= j->count;
					nominated[j->share][d->instance_type + 1] -= j->count;
				}
				break;
			case FS_DECISION_NOMINATE:
				nominated[j->share][0] += j->count;
				nominated[j->share][d->instance_type + 1] += j->count;
				break;
			case FS_DECISION_PREEMPT:
				{
					const SimJob *for_job = sim_job(sim, d->for_job_id);
					int			p = j->share;

					if (d->preempt_reason == FS_PREEMPT_RECLAIM)
					{
						bool		over = false;
						bool		limited = false;
						int			u;

						for (u = 0; u < 2; u++)
						{
							int			unit = u == 0 ? FS_UNIT_NUM_INSTANCES : j->type;
							int64_t		l = share_limit(sim, p, unit);

							if (l < 0)
								continue;
							limited = true;
							if (held[p][unit + 1] > l)
								over = true;
						}
						if (p == for_job->share || !is_quota(sim, p) ||
							sim->shares[p].queue != sim->shares[for_job->share].queue ||
							(limited && !over))
							violation(w, "victims", step,
									  "job %lld reclaimed from a share not above its limit for job %lld",
									  d->job_id, d->for_job_id);
					}
					else if (p != for_job->share || j->priority >= for_job->priority ||
							 !sim->shares[p].in_share_preemption)
						violation(w, "victims", step, "bad in-share victim %lld for job %lld",
								  d->job_id, d->for_job_id);
					held[p][0] -= j->count;
					held[p][j->type + 1] -= j->count;
				}
				break;
			default:
				break;
		}
	}
}

/*
 * victim order: among the victims the rules leave equal, the one that loses
 * least goes first.  No running job that was a candidate like a victim --
 * same share, priority, pair and size, young or not alike, not stopping,
 * not placed at this moment -- and is not a victim itself loses less work
 * than it (fs_lost_work()); were there one, the search would have taken it
 * first, and the reverse walk drops the later of two equal jobs first.
 */
static void
check_victim_order(Sim *sim, Workload *w, int step)
{
	const FsInput *in = &sim->input;
	const FsResult *r = sim->result;
	int			i,
				k;

	for (i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const FsRunningJob *v = NULL;

		if (d->kind != FS_DECISION_PREEMPT)
			continue;
		for (k = 0; k < in->n_running; k++)
			if (in->running[k].job_id == d->job_id)
				v = &in->running[k];
		if (v == NULL)
			continue;
		if (d->victim_lost != fs_lost_work(in, v))
			violation(w, "victims", step, "victim %lld: the reason's lost work is not fs_lost_work() (%lld s)", d->job_id,
					  (long long) (d->victim_lost / FS_USECS_PER_SEC));
		for (k = 0; k < in->n_running; k++)
		{
			const FsRunningJob *u = &in->running[k];
			bool		young_u = in->now - u->started_at < in->preemption_min_runtime;
			bool		young_v = in->now - v->started_at < in->preemption_min_runtime;

			if (u == v || u->stopping || u->started_at >= in->now || u->share != v->share ||
				u->priority != v->priority || u->environment != v->environment ||
				u->instance_type != v->instance_type || u->instance_count != v->instance_count ||
				young_u != young_v || sim_decision(sim, FS_DECISION_PREEMPT, u->job_id) != NULL)
				continue;
			if (fs_lost_work(in, u) < fs_lost_work(in, v))
				violation(w, "victims", step, "victim %lld loses more work than job %lld of the same kind",
						  d->job_id, u->job_id);
		}
	}
}

/*
 * Half the placed jobs keep checkpoints, every 1-30 minutes from 0-4
 * minutes after placement (a hash of the job, so the random stream of the
 * workload stays as it was): victim searches then weigh lost work.
 */
static void
give_checkpoints(Sim *sim)
{
	int			i;

	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];
		uint64_t	h = (uint64_t) j->id * UINT64_C(0x9E3779B97F4A7C15) + (uint64_t) j->placements * 7919u;

		h ^= h >> 29;
		if (!j->placed_last_pass)
			continue;
		j->checkpoint_interval = h % 2 == 0 ? FS_SECONDS(60 * (int64_t) (1 + (h >> 8) % 30)) : 0;
		j->checkpoint_from = j->checkpoint_interval > 0 ? sim->now + FS_SECONDS(60 * (int64_t) ((h >> 16) % 5)) : 0;
	}
}

/* fit: a job preemptions were made for is placed once its victims stopped */
static void
check_fit(Sim *sim, Workload *w, int step)
{
	const FsInput *in = &sim->input;
	int			i,
				k;

	for (i = 0; i < sim->n_jobs; i++)
	{
		SimJob	   *j = &sim->jobs[i];
		bool		victims_left = false;

		if (!j->was_nominated || !j->loaded || w->nominated_epoch[i] != w->epoch)
			continue;
		if (sim_decision(sim, FS_DECISION_PLACE, j->id) ||
			sim_decision(sim, FS_DECISION_NOMINATE, j->id))
			continue;
		/* was it a preemption nomination? look at what the pass was told */
		for (k = 0; k < in->n_running; k++)
			if (in->running[k].stopping_for == j->id)
				victims_left = true;
		if (victims_left)
			continue;
		{
			const FsDecision *keep = sim_decision(sim, FS_DECISION_KEEP_NOMINATION, j->id);
			const FsDecision *drop = sim_decision(sim, FS_DECISION_DROP_NOMINATION, j->id);
			const FsDecision *d = keep ? keep : drop;

			if (d == NULL || d->nomination_kind != FS_NOMINATION_PREEMPTION || d->reclaim_waits)
				continue;		/* a reclaim that waits has no victims yet */
			violation(w, "fit", step, "job %lld not placed after its victims stopped (%lld)",
					  j->id, drop != NULL);
		}
	}
}

/* order: nothing placed before an earlier job of its share that fits the same room */
static void
check_order(Sim *sim, Workload *w, int step)
{
	const FsResult *r = sim->result;
	int			i,
				k;

	for (i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const SimJob *p;
		const SimQueue *q;

		if (d->kind != FS_DECISION_PLACE)
			continue;
		p = sim_job(sim, d->job_id);
		if (p->was_nominated)
			continue;
		q = &sim->queues[sim->shares[p->share].queue];
		for (k = 0; k < sim->n_jobs; k++)
		{
			const SimJob *e = &sim->jobs[k];

			if (!waiting(e) || share_order_cmp(sim, e, p) >= 0)
				continue;
			if (q->strict_fifo && sim->shares[e->share].queue == sim->shares[p->share].queue)
			{
				violation(w, "order", step, "strict FIFO: job %lld placed behind waiting job %lld",
						  p->id, e->id);
				continue;
			}
			if (e->share != p->share || e->count > p->count || !has_type(e, d->instance_type) ||
				in_backoff(sim, e, d->environment, d->instance_type))
				continue;
			/* room held for a starving job takes only jobs gone soon enough */
			if (p->max_occupancy > 0 &&
				(e->max_occupancy <= 0 || e->max_occupancy > p->max_occupancy))
				continue;
			violation(w, "order", step, "job %lld placed before earlier job %lld of its share",
					  p->id, e->id);
			if (verbose)
				dump_world(sim);
		}
	}
}

/* work: no loaded job waits that fits in free, un-held capacity it may use */
static void
check_work_conservation(Sim *sim, Workload *w, int step)
{
	World		wd;
	int			i,
				e,
				t;

	if (sim->result->more_jobs_needed)
		return;					/* the pass stopped early and asks for another */
	look_at_world(sim, &wd);
	for (i = 0; i < sim->n_jobs; i++)
	{
		const SimJob *j = &sim->jobs[i];
		const SimQueue *q;

		if (!waiting(j))
			continue;
		q = &sim->queues[sim->shares[j->share].queue];
		if (q->strict_fifo)
		{
			int			k;
			bool		behind = false;

			for (k = 0; k < sim->n_jobs; k++)
				if (sim->jobs[k].share == j->share && sim->jobs[k].state == SIM_RUNNABLE &&
					!sim->jobs[k].misconfigured && share_order_cmp(sim, &sim->jobs[k], j) < 0)
					behind = true;
			if (behind)
				continue;
		}
		for (e = 0; e < q->n_envs; e++)
			for (t = 0; t < j->n_types; t++)
				if (could_run(sim, &wd, j, q->envs[e], j->types[t]))
				{
					violation(w, "work", step, "job %lld waits but fits in environment %lld",
							  j->id, q->envs[e]);
					if (verbose)
						dump_world(sim);
					e = q->n_envs;
					break;
				}
	}
}

/* reclaim, at a quiet point: guaranteed jobs do not wait while borrowers could give way */
static void
check_reclaim(Sim *sim, Workload *w, int step)
{
	World		wd;
	int			i;

	if (!w->simple_quota)
		return;
	look_at_world(sim, &wd);
	for (i = 0; i < sim->n_jobs; i++)
	{
		const SimJob *j = &sim->jobs[i];
		const SimQueue *q;
		int			env,
					p;
		int64_t		l,
					room,
					reclaimable = 0;

		if (!waiting(j))
			continue;
		q = &sim->queues[sim->shares[j->share].queue];
		if (q->policy != FS_POLICY_QUOTA_SHARE)
			continue;
		env = q->envs[0];
		l = share_limit(sim, j->share, FS_UNIT_NUM_INSTANCES);
		if (l < 0 || !sim->envs[env].enabled ||
			wd.share_held[j->share][0] + wd.share_nominated[j->share][0] + j->count > l)
			continue;			/* not within its guarantee */
		{
			bool		usable = false;
			int			t;

			for (t = 0; t < j->n_types; t++)
				if (!in_backoff(sim, j, env, j->types[t]))
					usable = true;
			if (!usable)
				continue;
		}
		room = env_max(sim, env, FS_UNIT_NUM_INSTANCES) - wd.occupied[env][0] - wd.held[env][0];
		for (p = 0; p < sim->n_shares; p++)
		{
			int64_t		lp = share_limit(sim, p, FS_UNIT_NUM_INSTANCES);
			int64_t		over;

			if (p == j->share || sim->shares[p].queue != sim->shares[j->share].queue || lp < 0)
				continue;
			over = wd.share_held[p][0] - lp;
			if (sim->shares[p].strategy == FS_STRATEGY_RESERVE)
			{
				int64_t		unused = lp - wd.share_held[p][0] - wd.share_nominated[p][0];

				if (unused > 0)
					room -= unused; /* unused RESERVE room is not for j */
			}
			if (over > 0)
				reclaimable += over < wd.share_in_env[p][env] ? over : wd.share_in_env[p][env];
		}
		if (room + reclaimable >= j->count)
			violation(w, "reclaim", step, "job %lld within its guarantee waits; %lld could be reclaimed",
					  j->id, reclaimable);
	}
}

/*
 * reclaim groups: a preemption's victims come together, right before the
 * nomination of the job they make room for.  A bounded pass
 * (src/sql_api/schedule.c, decisions_cut) writes a prefix of the decisions
 * and cuts only before a placement or the first victim of a group, so a
 * group is written whole only if it is contiguous and ends so.
 */
static void
check_reclaim_groups(Sim *sim, Workload *w, int step)
{
	const FsResult *r = sim->result;

	for (int i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];
		const FsDecision *next = i + 1 < r->n_decisions ? &r->decisions[i + 1] : NULL;

		if (d->kind != FS_DECISION_PREEMPT)
			continue;
		if (next == NULL)
			violation(w, "reclaim groups", step, "victim %lld for job %lld is the last decision",
					  d->job_id, d->for_job_id);
		else if (next->kind == FS_DECISION_PREEMPT && next->for_job_id != d->for_job_id)
			violation(w, "reclaim groups", step, "victims for jobs %lld and %lld are not apart",
					  d->for_job_id, next->for_job_id);
		else if (next->kind != FS_DECISION_PREEMPT &&
				 (next->kind != FS_DECISION_NOMINATE || next->job_id != d->for_job_id ||
				  next->nomination_kind != FS_NOMINATION_PREEMPTION))
			violation(w, "reclaim groups", step, "victim %lld for job %lld is not followed by its nomination",
					  d->job_id, d->for_job_id);
	}
}

static void
check_pass(Sim *sim, Workload *w, int step, bool final)
{
	int			i;

	check_capacity(sim, w, step);
	check_reclaim_groups(sim, w, step);
	check_victims(sim, w, step);
	check_victim_order(sim, w, step);
	check_fit(sim, w, step);
	check_order(sim, w, step);
	if (final)
		check_work_conservation(sim, w, step);
	if (verbose && getenv("TRACE_JOB"))
	{
		SimJob	   *tj = sim_job(sim, atoll(getenv("TRACE_JOB")));

		for (i = 0; tj && i < sim->result->n_decisions; i++)
		{
			const FsDecision *d = &sim->result->decisions[i];

			if (d->job_id == tj->id || d->for_job_id == tj->id ||
				(getenv("TRACE_SHARE") && d->share == atoi(getenv("TRACE_SHARE"))))
				printf("    step %d epoch %d: decision %d job %lld for %lld env %d type %d kind %d\n", step, w->epoch,
					   d->kind, (long long) d->job_id, (long long) d->for_job_id, d->environment, d->instance_type,
					   d->nomination_kind);
		}
		if (tj && tj->state == SIM_RUNNABLE && sim_wait(sim, tj->id))
			printf("    step %d: %s\n", step, sim_wait_text(sim, tj->id));
	}
	for (i = 0; i < sim->result->n_decisions; i++)
	{
		const FsDecision *d = &sim->result->decisions[i];

		if (d->kind == FS_DECISION_NOMINATE)
			w->nominated_epoch[d->job_id - 1] = w->epoch;
		if (d->kind == FS_DECISION_PREEMPT)
		{
			int			k;

			/*
			 * Ping-pong: A stopped for B, then B for A, with nothing changed in
			 * between -- no arrival, completion, priority or limit change (with
			 * those, shares lend and reclaim in turn as they should).  Only with
			 * every job loaded: a guaranteed job beyond its share's loaded head
			 * is invisible while borrowers take its room, and reclaims it once
			 * it is loaded -- the price of loading heads.
			 */
			for (k = 0; !w->prefixed && k < w->n_preempted; k++)
				if (w->preempted[k].victim == d->for_job_id && w->preempted[k].for_job == d->job_id &&
					w->preempted[k].epoch == w->changes)
					violation(w, "thrash", step, "job %lld preempted for job %lld, which it was preempted for",
							  d->job_id, d->for_job_id);
			if (w->n_preempted == w->max_preempted)
			{
				w->max_preempted = w->max_preempted * 2 + 16;
				w->preempted = realloc(w->preempted, sizeof(*w->preempted) * (size_t) w->max_preempted);
			}
			w->preempted[w->n_preempted].victim = d->job_id;
			w->preempted[w->n_preempted].for_job = d->for_job_id;
			w->preempted[w->n_preempted].epoch = w->changes;
			w->n_preempted++;
			w->preemptions++;
			if (verbose && getenv("TRACE_JOB") && atoll(getenv("TRACE_JOB")) == d->job_id)
			{
				char		text[300];
				SimJob	   *v = sim_job(sim, d->job_id);
				SimJob	   *f = sim_job(sim, d->for_job_id);

				fs_format_decision(&sim->input, d, text, sizeof(text));
				printf("    step %d epoch %d: victim %lld (share %d prio %d count %d started %llds ago) for %lld (share %d prio %d count %d): %s\n",
					   step, w->epoch, (long long) v->id, v->share, v->priority, v->count,
					   (long long) ((sim->now - v->started_at) / FS_USECS_PER_SEC),
					   (long long) f->id, f->share, f->priority, f->count, text);
			}
		}
		if (d->kind == FS_DECISION_PLACE)
			w->placements++;
	}
}

/* Passes where some share had no room, compared by check_without_room(). */
static long without_room_compared;
static long quota_without_room_compared;

static bool
same_decision(const FsDecision *a, const FsDecision *b)
{
	return a->kind == b->kind && a->job_id == b->job_id && a->environment == b->environment &&
		a->instance_type == b->instance_type && a->for_job_id == b->for_job_id &&
		a->nomination_kind == b->nomination_kind && a->nominated_since == b->nominated_since;
}

/*
 * The "no room" property: the last pass again, on its input without the
 * RUNNABLE jobs the wrapper leaves out for shares without room.
 */
static void
check_without_room(Sim *sim, Workload *w, int step)
{
	const FsInput *in = &sim->input;
	const FsResult *full = sim->result;
	int64_t    *scratch = malloc(sizeof(int64_t) * (size_t) (in->n_environments + in->n_shares + 1));
	bool	   *queue_without = malloc(sizeof(bool) * (size_t) (in->n_queues + 1));
	bool	   *without = malloc(sizeof(bool) * (size_t) (in->n_shares + 1));
	FsShare    *shares;
	FsRunnableJob *kept;
	FsInput		less = *in;
	FsResult   *r;
	bool		quota = false;
	int			n_kept = 0;
	int			i,
				k,
				s;

	(void) fs_queues_without_room(in, scratch, queue_without);
	if (fs_shares_without_room(in, scratch, without) == 0)
	{
		free(scratch);
		free(queue_without);
		free(without);
		return;
	}
	shares = malloc(sizeof(FsShare) * (size_t) (in->n_shares + 1));
	kept = malloc(sizeof(FsRunnableJob) * (size_t) (sim->n_jobs + 1));
	for (s = 0; s < in->n_shares; s++)
	{
		shares[s] = in->shares[s];
		if (queue_without[in->shares[s].queue] && !without[s])
			violation(w, "no room", step, "share %lld of queue %lld without room is not named",
					  s, in->shares[s].queue);
		if (!without[s])
			continue;
		if (in->queues[in->shares[s].queue].policy == FS_POLICY_QUOTA_SHARE)
			quota = true;
		shares[s].runnable = &kept[n_kept];
		shares[s].n_runnable = 0;
		shares[s].more_runnable = false;
		for (i = 0; i < in->shares[s].n_runnable; i++)
			if (in->shares[s].runnable[i].nomination.kind != FS_NOMINATION_NONE)
			{
				kept[n_kept++] = in->shares[s].runnable[i];
				shares[s].n_runnable++;
			}
	}
	less.shares = shares;
	r = fs_schedule(&less, &sim->allocator);
	without_room_compared++;
	if (quota)
		quota_without_room_compared++;

	/* the full pass's decisions, but MISCONFIGURED about the jobs left out */
	for (i = 0, k = 0; i < full->n_decisions; i++)
	{
		const FsDecision *d = &full->decisions[i];
		const SimJob *j = sim_job(sim, d->job_id);

		if (d->kind == FS_DECISION_MISCONFIGURED && j && without[j->share] && !j->was_nominated)
			continue;
		if (k >= r->n_decisions || !same_decision(d, &r->decisions[k]))
		{
			violation(w, "no room", step, "without the jobs of shares without room, decision %lld "
					  "differs (job %lld)", i, d->job_id);
			break;
		}
		k++;
	}
	if (i == full->n_decisions && k != r->n_decisions)
	{
		violation(w, "no room", step, "without the jobs of shares without room, %lld decisions "
				  "instead of %lld", r->n_decisions, k);
		for (i = k; verbose && i < r->n_decisions; i++)
			printf("    without them, also decision %d about job %lld\n", (int) r->decisions[i].kind,
				   (long long) r->decisions[i].job_id);
	}
	for (s = 0; s < in->n_shares; s++)
		if (in->queues[in->shares[s].queue].policy == FS_POLICY_FAIR_SHARE &&
			full->share_usage[s] != r->share_usage[s])
			violation(w, "no room", step, "without the jobs of shares without room, share %lld's "
					  "usage differs (queue %lld)", s, in->shares[s].queue);
	fs_result_free(r, &sim->allocator);
	free(shares);
	free(kept);
	free(scratch);
	free(queue_without);
	free(without);
}

/* One pass as the wrapper runs it: again while the core asks for more heads. */
static void
wrapper_pass(Sim *sim, Workload *w, int step)
{
	int			k;

	for (k = 0; k < 20; k++)
	{
		if (sim->n_jobs > w->max_nominated)
		{
			w->max_nominated = sim->n_jobs * 2;
			w->nominated_epoch = realloc(w->nominated_epoch, sizeof(int) * (size_t) w->max_nominated);
		}
		sim_pass(sim);
		check_without_room(sim, w, step);
		give_checkpoints(sim);
		if (!sim->result->more_jobs_needed || sim_count(sim, FS_DECISION_PLACE) == 0)
		{
			check_pass(sim, w, step, true);
			return;
		}
		check_pass(sim, w, step, false);
	}
}

static bool
run_workload(uint64_t seed)
{
	Sim			sim;
	Workload	w;
	int			step,
				i,
				quiet;

	rng = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
	memset(&w, 0, sizeof(w));
	w.seed = seed;
	sim_init(&sim);
	generate_world(&sim, &w);
	/* from the seed, not the generator, so the workloads stay what they were */
	sim.reclaim_wait = seed % 4 == 1 ? FS_SECONDS(30 + (int64_t) (seed / 4 % 270)) : 0;
	sim.checkpoint_on_stop = seed % 3 == 2;
	/* every pass again as a bounded pass of 1 to 24 jobs, compared */
	sim.bounded_check = 1 + (int) (seed % 24);
	w.prefixed = sim.prefix > 0;
	w.steps = rnd_int(60, 140);

	for (step = 0; step < w.steps; step++)
	{
		int			epoch = w.epoch;
		int			done = 0;

		random_events(&sim, &w, true);
		if (w.epoch != epoch)
			w.changes++;
		wrapper_pass(&sim, &w, step);
		for (i = 0; i < sim.n_jobs; i++)
			done -= sim.jobs[i].state == SIM_DONE;
		sim_advance(&sim, FS_SECONDS(rnd_int(20, 120)));
		for (i = 0; i < sim.n_jobs; i++)
			done += sim.jobs[i].state == SIM_DONE;
		if (done > 0)
			w.changes++;
	}

	/* a quiet point: no arrivals, nothing finishes, stops do */
	for (i = 0; i < sim.n_jobs; i++)
		sim.jobs[i].duration = SIM_FOREVER;
	sim.prefix = 0;
	w.epoch++;
	for (quiet = 0; quiet < 60; quiet++)
	{
		bool		busy = false;

		wrapper_pass(&sim, &w, step + quiet);
		for (i = 0; i < sim.result->n_decisions; i++)
			if (sim.result->decisions[i].kind != FS_DECISION_KEEP_NOMINATION &&
				sim.result->decisions[i].kind != FS_DECISION_MISCONFIGURED)
				busy = true;
		for (i = 0; i < sim.n_jobs; i++)
			if (sim.jobs[i].state == SIM_STOPPING)
				busy = true;
		if (!busy)
			break;
		if (verbose && quiet >= 50)
		{
			printf("    quiet pass %d:\n", quiet);
			dump_world(&sim);
		}
		sim_advance(&sim, sim.stop_delay);
	}
	if (quiet == 60)
		violation(&w, "thrash", step, "no quiet point after %lld passes (%lld preemptions)", 60, w.preemptions);
	else
		check_reclaim(&sim, &w, step + quiet);
	for (i = 0; i < sim.n_jobs; i++)
		if (sim.jobs[i].preemptions > MAX_PREEMPTIONS_PER_JOB)
			violation(&w, "thrash", step, "job %lld preempted %lld times", sim.jobs[i].id,
					  sim.jobs[i].preemptions);

	if (sim.bounded_mismatches > 0)
		violation(&w, "bounded pass", step, "%lld of %lld passes decided otherwise with a decision_limit",
				  sim.bounded_mismatches, sim.bounded_passes);

	if (verbose)
		printf("    seed %llu: %d steps, %d jobs, %d placements, %d preemptions, %d violations\n",
			   (unsigned long long) seed, w.steps, sim.n_jobs, w.placements, w.preemptions, w.violations);
	sim_free(&sim);
	if (sim.allocs != sim.frees)
		violation(&w, "memory", step, "%lld allocations, %lld frees", sim.allocs, sim.frees);
	free(w.nominated_epoch);
	free(w.preempted);
	if (w.violations > 0)
		printf("FAILED workload seed %llu: %d violations, first: %s (rerun: core_property --seed %llu)\n",
			   (unsigned long long) seed, w.violations, w.first_property, (unsigned long long) seed);
	return w.violations == 0;
}

/* ---------- fair-share convergence ---------- */

static bool
run_convergence(uint64_t seed)
{
	Sim			sim;
	int			t,
				env,
				q,
				s[3],
				i,
				k,
				pass;
	double		weights[3] = {1, 3, 5};
	int			capacity;
	int			expected[3];
	int			worst = 0;

	rng = seed * UINT64_C(0x2545F4914F6CDD1D) + 7;
	capacity = 23 * rnd_int(1, 4);
	for (i = 0; i < 3; i++)
		expected[i] = capacity / 23 * (i == 0 ? 15 : i == 1 ? 5 : 3);
	sim_init(&sim);
	t = sim_type(&sim, "ml.p4d.24xlarge");
	env = sim_env(&sim, "P4Env");
	sim_env_limit(&sim, env, chance(50) ? FS_UNIT_NUM_INSTANCES : t, capacity);
	q = sim_queue(&sim, "fair", 1, FS_POLICY_FAIR_SHARE);
	sim_queue_env(&sim, q, env);
	for (i = 0; i < 3; i++)
	{
		char		name[16];

		snprintf(name, sizeof(name), "w%g", weights[i]);
		s[i] = sim_share(&sim, q, name);
		sim.shares[s[i]].weight = weights[i];
	}
	sim.prefix = rnd_int(4, 32);
	sim.wait_reasons = false;
	for (pass = 0; pass < 400; pass++)
	{
		for (i = 0; i < 3; i++)
		{
			int			n_waiting = 0;

			for (k = 0; k < sim.n_jobs; k++)
				if (sim.jobs[k].share == s[i] && sim.jobs[k].state == SIM_RUNNABLE)
					n_waiting++;
			while (n_waiting++ < capacity)
			{
				int			j = sim_submit(&sim, s[i], 1, rnd_int(0, 3), t);

				sim.jobs[j].duration = FS_SECONDS(rnd_int(60, 900));
			}
		}
		for (k = 0; k < 50 && (k == 0 || sim.result->more_jobs_needed); k++)
		{
			sim_pass(&sim);
			if (verbose && getenv("DEBUG_PASS") && atoi(getenv("DEBUG_PASS")) == pass)
			{
				int			d;

				printf("  inner %d: held %lld %lld %lld more %d\n", k, (long long) sim_held(&sim, s[0]),
					   (long long) sim_held(&sim, s[1]), (long long) sim_held(&sim, s[2]), sim.result->more_jobs_needed);
				for (d = 0; d < sim.result->n_decisions; d++)
					printf("    decision %d job %lld share %d\n", sim.result->decisions[d].kind,
						   (long long) sim.result->decisions[d].job_id, sim.result->decisions[d].share);
				for (d = 0; d < sim.input.n_shares; d++)
					printf("    share %d usage %.2f loaded %d more %d\n", d, sim.input.shares[d].usage,
						   sim.input.shares[d].n_runnable, sim.input.shares[d].more_runnable);
			}
		}
		if (pass >= 150)
			for (i = 0; i < 3; i++)
			{
				int			off = (int) sim_held(&sim, s[i]) - expected[i];

				if (off < 0)
					off = -off;
				if (off > worst)
					worst = off;
			}
		if (verbose)
			printf("pass %d prefix %d: %lld %lld %lld passes %d usage %.2f %.2f %.2f\n", pass, sim.prefix, (long long) sim_held(&sim, s[0]),
				   (long long) sim_held(&sim, s[1]), (long long) sim_held(&sim, s[2]), k,
				   sim.shares[s[0]].usage, sim.shares[s[1]].usage, sim.shares[s[2]].usage);
		sim_advance(&sim, FS_SECONDS(rnd_int(10, 60)));
	}
	sim_free(&sim);
	if (worst > 1)
		printf("FAILED convergence seed %llu: capacity %d, a share strays %d from %d/%d/%d\n",
			   (unsigned long long) seed, capacity, worst, expected[0], expected[1], expected[2]);
	return worst <= 1;
}

int
main(int argc, char **argv)
{
	uint64_t	first = 1;
	int			n = 3000;
	int			n_convergence = 100;
	int			passed = 0,
				failed = 0;
	int			i;

	if (argc > 2 && strcmp(argv[1], "--converge") == 0)
	{
		verbose = true;
		return run_convergence(strtoull(argv[2], NULL, 10)) ? 0 : 1;
	}
	if (argc > 2 && strcmp(argv[1], "--seed") == 0)
	{
		verbose = true;
		return run_workload(strtoull(argv[2], NULL, 10)) ? 0 : 1;
	}
	if (argc > 1)
		n = atoi(argv[1]);
	if (argc > 2)
		first = strtoull(argv[2], NULL, 10);
	for (i = 0; i < n; i++)
	{
		if (run_workload(first + (uint64_t) i))
			passed++;
		else
			failed++;
	}
	printf("%d random workloads: %d passed, %d failed\n", n, passed, failed);
	/* the "no room" property must have been tried, or it proves nothing */
	printf("%ld passes had shares without room (%ld of a quota-share queue), compared without "
		   "their jobs\n", without_room_compared, quota_without_room_compared);
	if (without_room_compared == 0 || quota_without_room_compared == 0)
	{
		printf("FAILED: no pass had shares without room of both kinds\n");
		failed++;
	}
	for (i = 0; i < n_convergence; i++)
	{
		if (run_convergence(first + (uint64_t) i))
			passed++;
		else
			failed++;
	}
	printf("%d fair-share convergence runs done\n", n_convergence);
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
