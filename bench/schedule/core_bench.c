/*
 * core_bench.c — how fast is the pure scheduling core (src/scheduler)?
 *
 * Builds synthetic passes with 100 shares on one environment of 1,000
 * instances (NUM_INSTANCES 1000, two instance types of 600 each) and times
 * fs_schedule() on them, for each policy (100 FIFO queues; one fair-share
 * queue of 100 share identifiers; one quota-share queue of 100 quota shares
 * of 10 instances, LEND_AND_BORROW -- and, up to 10k loaded, the same with
 * every share RESERVE) and each size of what is loaded:
 *
 *	 head	100 shares x a head of 64 jobs = 6,400: what the SQL wrapper loads
 *	 10k, 100k, 1M loaded jobs, for comparison (the wrapper never loads these)
 *
 * and two states of the environment:
 *
 *	 fill	  nothing runs: the pass fills all 1,000 instances
 *	 steady	  950 instances are held by running jobs, as after some finished
 *
 * Each line prints the median pass time, the placements, and two rates:
 * "outcomes/s" counts one outcome per loaded job (a decision or a wait
 * reason: every loaded job gets one), "decisions/s" the decisions alone.
 * Wait reasons are collected, as the wrapper does for explain().
 *
 * Then the quota-share pass as measured inside the server, once with every
 * share RESERVE and once LEND (the two should cost about the same):
 * 100 quota shares of NUM_INSTANCES 10 on one environment of NUM_INSTANCES
 * 1,000 (no type limits), nothing running, the head of 64 jobs per share
 * that the wrapper loads, every job 1 instance, priorities 0-9 mixed, wait
 * reasons off as in fairshare.schedule().  Every share gets its 10 best
 * jobs: 1,000 placements.
 *
 * Usage: core_bench [max-loaded]   (default 1000000)
 * Not part of the test suite: numbers depend on the machine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/scheduler.h"

#define N_SHARES	100
#define CAPACITY	1000

static uint64_t rng = 88172645463325252ULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t) rng;
}

static void *
bench_alloc(void *ctx, size_t size)
{
	void	   *p = malloc(size);

	(void) ctx;
	if (p == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return p;
}

static void
bench_free(void *ctx, void *p)
{
	(void) ctx;
	free(p);
}

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

typedef struct Bench
{
	FsInput		in;
	FsEnvironment env;
	FsLimit		env_limits[3];
	FsQueue    *queues;
	FsShare    *shares;
	FsLimit    *share_limits;
	FsRunnableJob *jobs;
	FsRunningJob *running;
	int			types[2][2];	/* the two preference orders */
	int			env_index;
	const char *type_names[2];
	char		(*names)[16];
} Bench;

static void
build(Bench *b, FsPolicyKind policy, FsStrategy strategy, int loaded, bool steady)
{
	int			per_share = loaded / N_SHARES;
	int			i,
				s,
				n_running = 0;
	int64_t		held = 0;
	FsTime		now = FS_SECONDS(1000000);

	memset(b, 0, sizeof(*b));
	b->type_names[0] = "ml.p4d.24xlarge";
	b->type_names[1] = "ml.p5.48xlarge";
	b->types[0][0] = 0;
	b->types[0][1] = 1;
	b->types[1][0] = 1;
	b->types[1][1] = 0;
	b->env_limits[0].unit = FS_UNIT_NUM_INSTANCES;
	b->env_limits[0].max_capacity = CAPACITY;
	b->env_limits[1].unit = 0;
	b->env_limits[1].max_capacity = 600;
	b->env_limits[2].unit = 1;
	b->env_limits[2].max_capacity = 600;
	b->env.name = "BenchEnv";
	b->env.enabled = true;
	b->env.n_limits = 3;
	b->env.limits = b->env_limits;

	b->names = calloc(N_SHARES, sizeof(*b->names));
	b->queues = calloc(N_SHARES, sizeof(FsQueue));
	b->shares = calloc(N_SHARES, sizeof(FsShare));
	b->share_limits = calloc(N_SHARES, sizeof(FsLimit));
	b->jobs = calloc((size_t) loaded + 1, sizeof(FsRunnableJob));
	b->running = calloc(CAPACITY, sizeof(FsRunningJob));

	for (s = 0; s < N_SHARES; s++)
	{
		FsQueue    *q = &b->queues[policy == FS_POLICY_FIFO ? s : 0];
		FsShare    *sh = &b->shares[s];

		snprintf(b->names[s], sizeof(b->names[s]), "share%03d", s);
		if (policy == FS_POLICY_FIFO || s == 0)
		{
			q->name = b->names[s];
			q->priority = policy == FS_POLICY_FIFO ? (int) (rnd() % 4) : 1;
			q->policy = policy;
			q->n_environments = 1;
			q->environments = &b->env_index;
			q->share_decay = FS_SECONDS(3600);
			q->idle_assignment = FS_IDLE_FAIR;
		}
		sh->name = b->names[s];
		sh->queue = policy == FS_POLICY_FIFO ? s : 0;
		sh->weight = 1 + rnd() % 5;
		sh->usage = (double) (rnd() % 50);
		sh->usage_at = now - FS_SECONDS(60);
		b->share_limits[s].unit = FS_UNIT_NUM_INSTANCES;
		b->share_limits[s].max_capacity = CAPACITY / N_SHARES;
		if (policy == FS_POLICY_QUOTA_SHARE)
		{
			sh->n_limits = 1;
			sh->limits = &b->share_limits[s];
			sh->strategy = strategy;
			sh->borrow_limit = -1;
			sh->in_share_preemption = true;
		}
		sh->runnable = &b->jobs[s * per_share];
		sh->n_runnable = per_share;
		sh->more_runnable = false;	/* what is loaded is all there is */
		for (i = 0; i < per_share; i++)
		{
			FsRunnableJob *j = &b->jobs[s * per_share + i];

			j->job_id = (int64_t) s * per_share + i + 1;
			j->priority = policy == FS_POLICY_FIFO ? 0 : (int) (per_share - i) / 16;
			j->runnable_at = now - FS_SECONDS(per_share - i);
			j->instance_count = 1 + (int) (rnd() % 8);
			j->n_instance_types = 2;
			j->instance_types = b->types[rnd() % 2];
		}
	}
	if (steady)
	{
		while (held < CAPACITY * 95 / 100)
		{
			FsRunningJob *r = &b->running[n_running];
			int			count = 1 + (int) (rnd() % 8);

			if (held + count > CAPACITY * 95 / 100)
				count = (int) (CAPACITY * 95 / 100 - held);
			r->job_id = 10000000 + n_running;
			r->share = (int) (rnd() % N_SHARES);
			r->environment = 0;
			r->instance_type = n_running % 2;
			r->instance_count = count;
			r->priority = (int) (rnd() % 4);
			r->started_at = now - FS_SECONDS(rnd() % 7200);
			held += count;
			n_running++;
		}
	}

	b->in.now = now;
	b->in.preemption_min_runtime = FS_SECONDS(300);
	b->in.starvation_wait = FS_SECONDS(3600);
	b->in.collect_wait_reasons = true;
	b->in.n_instance_types = 2;
	b->in.instance_type_names = b->type_names;
	b->in.n_environments = 1;
	b->in.environments = &b->env;
	b->in.n_queues = policy == FS_POLICY_FIFO ? N_SHARES : 1;
	b->in.queues = b->queues;
	b->in.n_shares = N_SHARES;
	b->in.shares = b->shares;
	b->in.n_running = n_running;
	b->in.running = b->running;
}

/* The server's quota-share pass (see the top): all shares of one strategy. */
static void
build_quota_strategy(Bench *b, FsStrategy strategy)
{
	int			per_share = 64;
	int			i,
				s;
	FsTime		now = FS_SECONDS(1000000);

	rng = 88172645463325252ULL; /* the same input whatever ran before */
	memset(b, 0, sizeof(*b));
	b->type_names[0] = "ml.p4d.24xlarge";
	b->types[0][0] = 0;
	b->env_limits[0].unit = FS_UNIT_NUM_INSTANCES;
	b->env_limits[0].max_capacity = CAPACITY;
	b->env.name = "BenchEnv";
	b->env.enabled = true;
	b->env.n_limits = 1;
	b->env.limits = b->env_limits;

	b->names = calloc(N_SHARES, sizeof(*b->names));
	b->queues = calloc(1, sizeof(FsQueue));
	b->shares = calloc(N_SHARES, sizeof(FsShare));
	b->share_limits = calloc(N_SHARES, sizeof(FsLimit));
	b->jobs = calloc((size_t) N_SHARES * per_share, sizeof(FsRunnableJob));
	b->running = calloc(1, sizeof(FsRunningJob));

	b->queues[0].name = "quota";
	b->queues[0].priority = 1;
	b->queues[0].policy = FS_POLICY_QUOTA_SHARE;
	b->queues[0].n_environments = 1;
	b->queues[0].environments = &b->env_index;
	b->queues[0].idle_assignment = FS_IDLE_FIFO;
	for (s = 0; s < N_SHARES; s++)
	{
		FsShare    *sh = &b->shares[s];

		snprintf(b->names[s], sizeof(b->names[s]), "share%03d", s);
		sh->name = b->names[s];
		sh->queue = 0;
		sh->weight = 1;
		b->share_limits[s].unit = FS_UNIT_NUM_INSTANCES;
		b->share_limits[s].max_capacity = CAPACITY / N_SHARES;
		sh->n_limits = 1;
		sh->limits = &b->share_limits[s];
		sh->strategy = strategy;
		sh->borrow_limit = -1;
		sh->runnable = &b->jobs[s * per_share];
		sh->n_runnable = per_share;
		sh->more_runnable = true;	/* the wrapper loads a head of 64 */
		for (i = 0; i < per_share; i++)
		{
			FsRunnableJob *j = &b->jobs[s * per_share + i];

			j->job_id = (int64_t) s * per_share + i + 1;
			j->priority = (int) (rnd() % 10);
			j->runnable_at = now - FS_SECONDS(1 + rnd() % 7200);
			j->instance_count = 1;
			j->n_instance_types = 1;
			j->instance_types = b->types[0];
		}
	}

	b->in.now = now;
	b->in.preemption_min_runtime = FS_SECONDS(300);
	b->in.starvation_wait = FS_SECONDS(3600);
	b->in.collect_wait_reasons = false;
	b->in.n_instance_types = 1;
	b->in.instance_type_names = b->type_names;
	b->in.n_environments = 1;
	b->in.environments = &b->env;
	b->in.n_queues = 1;
	b->in.queues = b->queues;
	b->in.n_shares = N_SHARES;
	b->in.shares = b->shares;
	b->in.n_running = 0;
	b->in.running = b->running;
}

static void
release(Bench *b)
{
	free(b->names);
	free(b->queues);
	free(b->shares);
	free(b->share_limits);
	free(b->jobs);
	free(b->running);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* Time fs_schedule() on a built input and print one line. */
static void
measure(Bench *b, const char *policy_name, const char *label, int loaded, const char *state)
{
	FsAllocator alloc = {bench_alloc, bench_free, NULL};
	double		times[64];
	int			runs = 0;
	double		spent = 0;
	FsResult   *r = NULL;
	int			placed = 0,
				i;
	double		t;
	char		message[200];

	if (!fs_check_input(&b->in, message, sizeof(message)))
	{
		fprintf(stderr, "bad bench input: %s\n", message);
		exit(1);
	}
	while (runs < 64 && (runs < 3 || spent < 1.0))
	{
		double		start = seconds();

		if (r)
			fs_result_free(r, &alloc);
		r = fs_schedule(&b->in, &alloc);
		times[runs] = seconds() - start;
		spent += times[runs];
		runs++;
	}
	qsort(times, (size_t) runs, sizeof(double), cmp_double);
	t = times[runs / 2];
	for (i = 0; i < r->n_decisions; i++)
		if (r->decisions[i].kind == FS_DECISION_PLACE)
			placed++;
	printf("%-12s %-7s %9d %-7s %10.3f %7d %12.0f %12.0f\n", policy_name, label, loaded,
		   state, t * 1000.0, placed,
		   (r->n_decisions + r->n_wait_reasons) / t, r->n_decisions / t);
	fflush(stdout);
	fs_result_free(r, &alloc);
}

/*
 * The scale of a large company: n_shares shares in one queue
 * (FAIR_SHARE identifiers, or QUOTA_SHARE shares of capacity / n_shares
 * each, LEND_AND_BORROW) on one environment of `capacity' instances, each
 * share with `head' jobs loaded out of a longer backlog (more_runnable),
 * 1-8 instances each, priorities 0-9.  "burst": 95% of the capacity is
 * held by running jobs spread evenly over the shares (each holds about 95%
 * of a quota share's guarantee, some above it, some below), and the first
 * pass places into the 5% that is free and, with quota shares, reclaims
 * for every share below its guarantee -- thousands of victim searches, as
 * after a burst of submissions; "steady": the pass after that one
 * (apply_pass), as the dispatcher's passes run between bursts; "fill":
 * nothing runs.  Wait reasons off, as in the dispatcher's passes.  The
 * core's time depends on the jobs loaded, not on the backlog behind them.
 */
typedef struct Scale
{
	FsInput		in;
	FsEnvironment env;
	FsLimit		env_limit;
	FsQueue		queue;
	FsShare    *shares;
	FsLimit    *share_limits;
	FsRunnableJob *jobs;
	FsRunningJob *running;
	char	   *names;
	int			type;
	int			env_index;
	const char *type_name;
} Scale;

static void
build_scale(Scale *b, FsPolicyKind policy, int n_shares, int capacity, int head, bool steady)
{
	FsTime		now = FS_SECONDS(1000000);
	int64_t		held = 0,
				target = steady ? (int64_t) capacity * 95 / 100 : 0;
	int			n_running = 0,
				max_running = (int) target + 1;

	rng = 88172645463325252ULL;
	memset(b, 0, sizeof(*b));
	b->type_name = "ml.p4d.24xlarge";
	b->env_limit.unit = FS_UNIT_NUM_INSTANCES;
	b->env_limit.max_capacity = capacity;
	b->env.name = "BenchEnv";
	b->env.enabled = true;
	b->env.n_limits = 1;
	b->env.limits = &b->env_limit;
	b->queue.name = "big";
	b->queue.priority = 1;
	b->queue.policy = policy;
	b->queue.n_environments = 1;
	b->queue.environments = &b->env_index;
	b->queue.share_decay = FS_SECONDS(3600);
	b->queue.idle_assignment = FS_IDLE_FIFO;
	b->names = calloc((size_t) n_shares, 16);
	b->shares = calloc((size_t) n_shares, sizeof(FsShare));
	b->share_limits = calloc((size_t) n_shares, sizeof(FsLimit));
	b->jobs = calloc((size_t) n_shares * head, sizeof(FsRunnableJob));
	b->running = calloc((size_t) max_running, sizeof(FsRunningJob));
	if (!b->names || !b->shares || !b->share_limits || !b->jobs || !b->running)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (int s = 0; s < n_shares; s++)
	{
		FsShare    *sh = &b->shares[s];

		snprintf(b->names + 16 * s, 16, "share%05d", s);
		sh->name = b->names + 16 * s;
		sh->queue = 0;
		sh->weight = 1 + rnd() % 5;
		sh->usage = (double) (rnd() % 50);
		sh->usage_at = now - FS_SECONDS(60);
		if (policy == FS_POLICY_QUOTA_SHARE)
		{
			b->share_limits[s].unit = FS_UNIT_NUM_INSTANCES;
			b->share_limits[s].max_capacity = capacity / n_shares;
			sh->n_limits = 1;
			sh->limits = &b->share_limits[s];
			sh->strategy = FS_STRATEGY_LEND_AND_BORROW;
			sh->borrow_limit = -1;
		}
		sh->runnable = &b->jobs[(size_t) s * head];
		sh->n_runnable = head;
		sh->more_runnable = true;
		for (int i = 0; i < head; i++)
		{
			FsRunnableJob *j = &b->jobs[(size_t) s * head + i];

			j->job_id = (int64_t) s * head + i + 1;
			j->priority = (int) (rnd() % 10);
			j->runnable_at = now - FS_SECONDS(1 + rnd() % 3000);
			j->instance_count = 1 + (int) (rnd() % 8);
			j->n_instance_types = 1;
			j->instance_types = &b->type;
		}
	}
	while (held < target)
	{
		FsRunningJob *r = &b->running[n_running];
		int			count = 1 + (int) (rnd() % 8);

		if (held + count > target)
			count = (int) (target - held);
		r->job_id = 100000000 + n_running;
		r->share = n_running % n_shares;	/* every share holds about 95% of its guarantee */
		r->instance_count = count;
		r->priority = (int) (rnd() % 10);
		r->started_at = now - FS_SECONDS(rnd() % 7200);
		held += count;
		n_running++;
	}
	b->in.now = now;
	b->in.preemption_min_runtime = FS_SECONDS(300);
	b->in.starvation_wait = FS_SECONDS(3600);
	b->in.collect_wait_reasons = false;
	b->in.n_instance_types = 1;
	b->in.instance_type_names = &b->type_name;
	b->in.n_environments = 1;
	b->in.environments = &b->env;
	b->in.n_queues = 1;
	b->in.queues = &b->queue;
	b->in.n_shares = n_shares;
	b->in.shares = b->shares;
	b->in.n_running = n_running;
	b->in.running = b->running;
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * Median wall and CPU time of fs_schedule() on a built input, its
 * placements and preemptions; the result of the last run in *result
 * (the caller frees it).  CPU time is printed too: on a loaded machine it
 * is the steadier of the two.
 */
static double
time_scale(const FsInput *in, int *placed, int *preempted, double *cpu, FsResult **result)
{
	FsAllocator alloc = {bench_alloc, bench_free, NULL};
	double		times[16],
				cpus[16];
	int			runs = 0;
	double		spent = 0;
	char		message[200];

	if (!fs_check_input(in, message, sizeof(message)))
	{
		fprintf(stderr, "bad bench input: %s\n", message);
		exit(1);
	}
	*result = NULL;
	while (runs < 16 && (runs < 3 || spent < 2.0))
	{
		double		start = seconds(),
					start_cpu = cpu_seconds();
		FsResult   *r = fs_schedule(in, &alloc);

		times[runs] = seconds() - start;
		cpus[runs] = cpu_seconds() - start_cpu;
		spent += times[runs];
		runs++;
		*placed = *preempted = 0;
		for (int i = 0; i < r->n_decisions; i++)
		{
			if (r->decisions[i].kind == FS_DECISION_PLACE)
				(*placed)++;
			if (r->decisions[i].kind == FS_DECISION_PREEMPT)
				(*preempted)++;
		}
		if (*result != NULL)
			fs_result_free(*result, &alloc);
		*result = r;
	}
	qsort(times, (size_t) runs, sizeof(double), cmp_double);
	qsort(cpus, (size_t) runs, sizeof(double), cmp_double);
	*cpu = cpus[runs / 2];
	return times[runs / 2];
}

/*
 * The input of the pass after `r', as the wrapper would load it a minute
 * later: placed jobs run (and leave the heads), victims are stopping for
 * the jobs they were stopped for, nominations are stored with their jobs.
 * Nothing has finished yet, so the pass finds the room held and little
 * to do: what the dispatcher's passes cost between bursts.
 */
static void
apply_pass(Scale *b, const FsResult *r, int head)
{
	int			n_placed = 0,
				n_shares = b->in.n_shares;
	int			first_running = (int) b->running[0].job_id;

	for (int i = 0; i < r->n_decisions; i++)
		if (r->decisions[i].kind == FS_DECISION_PLACE)
			n_placed++;
	b->running = realloc(b->running, sizeof(FsRunningJob) * (size_t) (b->in.n_running + n_placed + 1));
	if (b->running == NULL)
	{
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (int i = 0; i < r->n_decisions; i++)
	{
		const FsDecision *d = &r->decisions[i];

		if (d->kind == FS_DECISION_PLACE)
		{
			FsRunnableJob *j = &b->jobs[d->job_id - 1];
			FsRunningJob *run = &b->running[b->in.n_running++];

			memset(run, 0, sizeof(*run));
			run->job_id = d->job_id;
			run->share = d->share;
			run->environment = d->environment;
			run->instance_type = d->instance_type;
			run->instance_count = d->instance_count;
			run->priority = j->priority;
			run->started_at = b->in.now;
			j->instance_count = 0;	/* gone from the heads, below */
		}
		else if (d->kind == FS_DECISION_PREEMPT)
		{
			FsRunningJob *run = &b->running[d->job_id - first_running];

			run->stopping = true;
			run->stopping_for = d->for_job_id;
		}
		else if (d->kind == FS_DECISION_NOMINATE)
		{
			FsRunnableJob *j = &b->jobs[d->job_id - 1];

			j->nomination.kind = d->nomination_kind;
			j->nomination.environment = d->environment;
			j->nomination.instance_type = d->instance_type;
			j->nomination.since = d->nominated_since;
		}
	}
	for (int s = 0; s < n_shares; s++)
	{
		FsRunnableJob *jobs = &b->jobs[(size_t) s * head];
		int			n = 0;

		for (int i = 0; i < b->shares[s].n_runnable; i++)
			if (jobs[i].instance_count > 0)
				jobs[n++] = jobs[i];
		b->shares[s].n_runnable = n;
	}
	b->in.running = b->running;
	b->in.now += FS_SECONDS(60);
}

static void
scale_section(void)
{
	static const struct
	{
		int			shares;
		int			capacity;
		const char *backlog;
	}			sizes[] = {
		{1000, 100000, "1M"},
		{10000, 100000, "10M"},
	};
	static const int heads[] = {8, 64, 512};
	static const struct
	{
		FsPolicyKind policy;
		const char *name;
	}			policies[] = {
		{FS_POLICY_FAIR_SHARE, "FAIR_SHARE"},
		{FS_POLICY_QUOTA_SHARE, "QUOTA_SHARE"},
	};

	printf("\nscale: one queue of N shares on 100,000 instances, wait reasons off; the core's time\n"
		   "depends on the heads loaded (shares x head), not on the backlog behind them.\n"
		   "fill: nothing runs; burst: 95%% held, the first pass; steady: the pass after it\n");
	printf("%-12s %7s %8s %5s %9s %-7s %10s %8s %7s %9s\n", "policy", "shares", "backlog", "head", "loaded",
		   "state", "pass ms", "cpu ms", "placed", "preempted");
	for (int z = 0; z < 2; z++)
		for (int p = 0; p < 2; p++)
			for (int h = 0; h < 3; h++)
				for (int held = 1; held >= 0; held--)
				{
					Scale		b;

					/* SCALE_ONLY=POLICY:SHARES:HEAD picks one size */
					char		key[64];

					snprintf(key, sizeof(key), "%s:%d:%d", policies[p].name, sizes[z].shares, heads[h]);
					if (getenv("SCALE_ONLY") && strcmp(getenv("SCALE_ONLY"), key) != 0)
						continue;
					/* 10,000 x 512 = 5M loaded jobs: only with SCALE_ALL */
					if (!getenv("SCALE_ONLY") && !getenv("SCALE_ALL") &&
						(long) sizes[z].shares * heads[h] > 1000000)
						continue;
					build_scale(&b, policies[p].policy, sizes[z].shares, sizes[z].capacity, heads[h],
								held == 1);
					for (int pass = 0; pass < (held ? 2 : 1); pass++)
					{
						FsAllocator alloc = {bench_alloc, bench_free, NULL};
						FsResult   *r;
						int			placed = 0,
									preempted = 0;
						double		cpu,
									t;

						t = time_scale(&b.in, &placed, &preempted, &cpu, &r);
						printf("%-12s %7d %8s %5d %9d %-7s %10.1f %8.1f %7d %9d\n", policies[p].name,
							   sizes[z].shares, sizes[z].backlog, heads[h], sizes[z].shares * heads[h],
							   !held ? "fill" : pass == 0 ? "burst" : "steady", t * 1000.0, cpu * 1000.0,
							   placed, preempted);
						fflush(stdout);
						if (held && pass == 0)
							apply_pass(&b, r, heads[h]);
						fs_result_free(r, &alloc);
					}
					free(b.names);
					free(b.shares);
					free(b.share_limits);
					free(b.jobs);
					free(b.running);
				}
}

int
main(int argc, char **argv)
{
	int			max_loaded = argc > 1 ? atoi(argv[1]) : 1000000;

	if (argc > 1 && strcmp(argv[1], "scale") == 0)
	{
		scale_section();
		return 0;
	}
	static const struct
	{
		FsPolicyKind policy;
		FsStrategy	strategy;	/* of quota shares */
		const char *name;
		int			max_loaded;
	}			policies[] = {
		{FS_POLICY_FAIR_SHARE, FS_STRATEGY_LEND_AND_BORROW, "FAIR_SHARE", 1000000},
		{FS_POLICY_QUOTA_SHARE, FS_STRATEGY_LEND_AND_BORROW, "QUOTA_SHARE", 1000000},
		{FS_POLICY_FIFO, FS_STRATEGY_LEND_AND_BORROW, "FIFO", 1000000},
		{FS_POLICY_QUOTA_SHARE, FS_STRATEGY_RESERVE, "QUOTA_RESRV", 10000},
	};
	static const struct
	{
		int			loaded;
		const char *label;
	}			sizes[] = {
		{N_SHARES * 64, "head64"},
		{10000, "10k"},
		{100000, "100k"},
		{1000000, "1M"},
	};
	int			p,
				s,
				steady;

	printf("fs_schedule(): %d shares, %d instances, wait reasons on; median of >= 3 runs\n",
		   N_SHARES, CAPACITY);
	printf("%-12s %-7s %9s %-7s %10s %7s %12s %12s\n", "policy", "size", "loaded", "state",
		   "pass ms", "placed", "outcomes/s", "decisions/s");
	for (p = 0; p < 4; p++)
		for (s = 0; s < 4; s++)
			for (steady = 0; steady < 2; steady++)
				if (sizes[s].loaded <= max_loaded && sizes[s].loaded <= policies[p].max_loaded)
				{
					Bench		b;

					build(&b, policies[p].policy, policies[p].strategy, sizes[s].loaded,
						  steady == 1);
					measure(&b, policies[p].name, sizes[s].label, sizes[s].loaded,
							steady ? "steady" : "fill");
					release(&b);
				}

	printf("\nthe server's quota-share pass: 100 shares of 10 on 1,000, 1-instance jobs, "
		   "wait reasons off\n");
	for (p = 0; p < 2; p++)
	{
		Bench		b;

		build_quota_strategy(&b, p == 0 ? FS_STRATEGY_RESERVE : FS_STRATEGY_LEND);
		measure(&b, p == 0 ? "Q_RESERVE" : "Q_LEND", "head64", N_SHARES * 64, "fill");
		release(&b);
	}
	return 0;
}
