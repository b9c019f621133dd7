/*-------------------------------------------------------------------------
 *
 * preemption.c
 *		Choosing victims: cross-share reclaim and in-share priority
 *		preemption in quota-share queues (docs/scheduling.md, 'Quota-share queues').
 *
 * A victim search starts from what the waiting job is short of on one
 * (environment, instance type) pair -- per environment limit, and for
 * in-share preemption per limit of its own share -- and takes running
 * jobs in victim order until nothing is short, then walks the chosen ones
 * in reverse and drops any that are not needed.  If the candidates cannot
 * cover the need, nothing is preempted: never preempt for a job that would
 * still not fit.  The victims keep occupying capacity until they have
 * stopped; the job is nominated, so the room they free, and the room that
 * is already free, are held for it.
 *
 * Who may be a victim:
 *	 reclaim	running jobs in the same queue and environment of other
 *				shares that are above their own limit -- checked again after
 *				each choice, so a share is not cut below its limit by more
 *				than its last job;
 *	 in-share	running jobs of the job's own share with a lower priority.
 * Never a job that is already stopping, nor one placed in this pass (those
 * are not in the running set) or by an earlier pass at the same moment
 * (started_at not before now: the wrapper's more_jobs_needed loop is one
 * pass to the user), nor a nominated job (it is not running).
 *
 * Among the victims the rules of docs/scheduling.md 2.6 leave equal (same share, same
 * priority), the one whose stop loses the least work goes first: a job that
 * keeps checkpoints loses only what it trained since its last one, a job
 * that keeps none everything since it started (fs_lost_work()).
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

enum
{
	NEED_ENV_NUM,				/* the environment's NUM_INSTANCES limit */
	NEED_ENV_TYPE,				/* the environment's limit of the job's type */
	NEED_SHARE_NUM,				/* in-share: the share's NUM_INSTANCES cap */
	NEED_SHARE_TYPE,			/* in-share: the share's cap of the job's type */
	N_NEEDS
};

typedef struct FsVictimSearch
{
	FsPass	   *pass;
	FsPreemptReason reason;
	int			job;			/* the job the room is for */
	int			share;
	int			queue;
	int			env;
	int			type;
	int			count;
	int			priority;
	int64_t		need[N_NEEDS];	/* instances short; <= 0 means enough */
	int64_t		earlier_num;	/* still stopping for this job from an earlier */
	int64_t		earlier_type;	/* nomination (dropped in this pass), in env */
	int		   *chosen;			/* indexes into FsInput.running, in order */
	int			n_chosen;
} FsVictimSearch;

/*
 * The candidates of one share in a search's pool, pool[start..end), and
 * the highest over-limit ratio among them (find_victims).
 */
typedef struct FsPoolRun
{
	int			share;
	int			start;			/* start = end = -1: not read yet */
	int			end;
	double		top;
} FsPoolRun;

static bool reduces(const FsVictimSearch *s, int r, int need);

static const FsRunningJob *
run_of(const FsVictimSearch *s, int r)
{
	return &s->pass->in->running[r];
}

/*
 * How far above its limit a share is for its running jobs of a type,
 * relative to the limit: what it holds (its running jobs not being
 * stopped), over the limit.  Its nominated jobs do not count here: a share
 * with a big job waiting for room is not above its limit until that job
 * runs, and counting it made two shares reclaim from each other in turn.
 */
static double
share_over_limit(const FsPass *pass, int share, int type)
{
	const FsShareState *ss = &pass->shares[share];
	double		over = 0.0;
	bool		any = false;
	int			u;

	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
		int64_t		holds;
		double		ratio;

		if (u == 1 && (type < 0 || type >= pass->in->n_instance_types))
			continue;
		if (ss->limit[ui] == FS_NO_LIMIT)
			continue;
		any = true;
		holds = ss->held[ui];
		if (ss->limit[ui] == 0)
			ratio = holds > 0 ? 1e18 : 0.0;
		else
			ratio = (double) holds / (double) ss->limit[ui];
		if (ratio > over)
			over = ratio;
	}
	if (!any)
		return ss->held[0] > 0 ? 1e18 : 0.0;	/* no limit covers it: all borrowed */
	return over;
}

/* The unit of the victim's share that is most over its limit (for the reason text). */
static int
over_limit_unit(const FsVictimSearch *s, int r)
{
	const FsRunningJob *run = run_of(s, r);
	FsShareState *ss = &s->pass->shares[run->share];
	int			ti = FS_UNIT_INDEX(run->instance_type);

	if (run->instance_type < 0 || run->instance_type >= s->pass->in->n_instance_types ||
		ss->limit[ti] == FS_NO_LIMIT)
		return 0;
	if (ss->limit[0] == FS_NO_LIMIT)
		return ti;
	/* the larger of held / limit, compared without division */
	if (ss->held[ti] * (ss->limit[0] > 0 ? ss->limit[0] : 1) >
		ss->held[0] * (ss->limit[ti] > 0 ? ss->limit[ti] : 1))
		return ti;
	return 0;
}

static bool
young(const FsVictimSearch *s, int r)
{
	return s->pass->in->now - run_of(s, r)->started_at < s->pass->in->preemption_min_runtime;
}

FsTime
fs_lost_work(const FsInput *input, const FsRunningJob *run)
{
	FsTime		lost = input->now - run->started_at;

	if (lost <= 0)
		return 0;
	if (run->checkpoint_interval > 0 && run->checkpoint_from > 0 && run->checkpoint_from < input->now)
	{
		FsTime		trained = input->now - run->checkpoint_from;

		lost -= input->checkpoint_on_stop ? trained :
			trained / run->checkpoint_interval * run->checkpoint_interval;
		if (lost < 0)
			lost = 0;			/* training said to begin before started_at */
	}
	return lost;
}

/*
 * The instances of the room still short that stopping this candidate would
 * free: of the needs it reduces, the largest, at most its own count.  A
 * victim bigger than the need frees instances the job does not need.
 */
static int64_t
covers(const FsVictimSearch *s, int r)
{
	int64_t		count = run_of(s, r)->instance_count;
	int64_t		most = 0;
	int			i;

	for (i = 0; i < N_NEEDS; i++)
		if (s->need[i] > most && reduces(s, r, i))
			most = s->need[i];
	return most < 1 || most > count ? count : most;
}

/*
 * The instance-time a stop of this candidate loses per instance of the need
 * it frees.  Per instance, so that several small jobs that lose little each
 * are not passed over for one big job that loses more in all, nor one big
 * job for many small ones when it covers the need alone; a job bigger than
 * the need pays for the instances it frees that are not needed.
 */
static double
lost_per_instance(const FsVictimSearch *s, int r)
{
	const FsRunningJob *run = run_of(s, r);

	return (double) fs_lost_work(s->pass->in, run) * (double) run->instance_count / (double) covers(s, r);
}

/*
 * The victim order: which of two candidates to stop first.  The reasons,
 * in order:
 *	 1. one that has run at least preemption_min_runtime before one that has
 *		not (a young job is a victim only when nothing else frees the room);
 *	 2. reclaim: the one whose share is most over its limit, relative to it
 *		(over_a, over_b: share_over_limit() of their shares now);
 *	 3. the lower scheduling_priority;
 *	 4. the one whose stop loses the least work per instance of the need it
 *		frees (lost_per_instance(): since its last checkpoint if it keeps
 *		them, else since it started) -- not with FS_VICTIMS_LATEST_STARTED;
 *	 5. the more recently started;
 *	 6. the higher job_id (so the order is total and stable).
 * 1-3 are the rules of docs/scheduling.md 2.6; 4 chooses among the jobs those rules leave
 * equal.  Reasons 2 and 4 depend on what is already chosen (the share
 * shrinks, the need too), so the search asks again after every choice.
 */
static int
victim_order(const FsVictimSearch *s, int a, int b, double over_a, double over_b)
{
	const FsRunningJob *ra = run_of(s, a);
	const FsRunningJob *rb = run_of(s, b);

	if (young(s, a) != young(s, b))
		return young(s, a) ? 1 : -1;
	if (s->reason == FS_PREEMPT_RECLAIM && over_a != over_b)
		return over_a > over_b ? -1 : 1;
	if (ra->priority != rb->priority)
		return ra->priority < rb->priority ? -1 : 1;
	if (s->pass->in->victim_order == FS_VICTIMS_LEAST_LOST)
	{
		double		la = lost_per_instance(s, a);
		double		lb = lost_per_instance(s, b);

		if (la != lb)
			return la < lb ? -1 : 1;
	}
	if (ra->started_at != rb->started_at)
		return ra->started_at > rb->started_at ? -1 : 1;
	if (ra->job_id != rb->job_id)
		return ra->job_id > rb->job_id ? -1 : 1;
	return 0;
}

/* Which needs does stopping this running job reduce?  Bit i: need i. */
static inline unsigned
reduces_mask(const FsVictimSearch *s, int r)
{
	const FsRunningJob *run = run_of(s, r);
	unsigned	env = run->environment == s->env;
	unsigned	share = run->share == s->share;
	unsigned	type = run->instance_type == s->type;

	return env << NEED_ENV_NUM | (env & type) << NEED_ENV_TYPE |
		share << NEED_SHARE_NUM | (share & type) << NEED_SHARE_TYPE;
}

static bool
reduces(const FsVictimSearch *s, int r, int need)
{
	return (reduces_mask(s, r) >> need) & 1;
}

/* The needs still short, as a mask of reduces_mask()'s bits. */
static unsigned
short_mask(const FsVictimSearch *s)
{
	unsigned	mask = 0;

	for (int i = 0; i < N_NEEDS; i++)
		if (s->need[i] > 0)
			mask |= 1u << i;
	return mask;
}

static bool
short_of_room(const FsVictimSearch *s)
{
	int			i;

	for (i = 0; i < N_NEEDS; i++)
		if (s->need[i] > 0)
			return true;
	return false;
}

/* The position of an environment among its queue's, or -1. */
static int
environment_position(const FsPass *pass, int queue, int env)
{
	const FsQueue *q = &pass->in->queues[queue];

	for (int e = 0; e < q->n_environments; e++)
		if (q->environments[e] == env)
			return e;
	return -1;
}

/*
 * The slot of the share's failed-search memo for (env, type), or NULL.  The
 * memo is cleared by fs_forget_failed_searches() when a step begins.
 */
static int *
failed_search_slot(FsPass *pass, int share, int env, int type)
{
	FsShareState *ss = &pass->shares[share];
	const FsQueue *q = &pass->in->queues[pass->in->shares[share].queue];
	int			e = environment_position(pass, pass->in->shares[share].queue, env);

	if (type < 0 || type >= pass->in->n_instance_types || e < 0)
		return NULL;
	if (ss->search_failed == NULL)
		ss->search_failed = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) q->n_environments *
										   (size_t) pass->in->n_instance_types);
	return &ss->search_failed[e * pass->in->n_instance_types + type];
}

void
fs_forget_failed_searches(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	const FsQueue *q = &pass->in->queues[queue];
	int			i;

	for (i = 0; i < qs->n_shares; i++)
	{
		FsShareState *ss = &pass->shares[qs->shares[i]];

		if (ss->search_failed != NULL)
			memset(ss->search_failed, 0, sizeof(int) * (size_t) q->n_environments *
				   (size_t) pass->in->n_instance_types);
	}
}

/* May this running job be a victim for this search at all? */
static bool
candidate(const FsVictimSearch *s, int r)
{
	const FsRunningJob *run = run_of(s, r);

	if (s->pass->run_stopping[r] || run->share < 0 || run->started_at >= s->pass->in->now)
		return false;
	if (s->reason == FS_PREEMPT_RECLAIM)
		return run->share != s->share && run->environment == s->env;
	return run->share == s->share && run->priority < s->priority;
}

/* The slot of share's candidate_instances for a running job, or NULL. */
static int64_t *
candidate_slot(const FsPass *pass, int share, const FsRunningJob *run)
{
	const FsShareState *ss = &pass->shares[share];
	int			n_types = pass->in->n_instance_types;
	int			e;
	int			t;

	if (ss->candidate_instances == NULL)
		return NULL;
	e = environment_position(pass, pass->in->shares[share].queue, run->environment);
	if (e < 0)
		return NULL;
	t = run->instance_type >= 0 && run->instance_type < n_types ? run->instance_type : n_types;
	return &ss->candidate_instances[e * (n_types + 1) + t];
}

/*
 * The share's candidate_instances, counted at the first reclaim search of
 * the pass that looks at the share and kept by take() after that.
 */
static const int64_t *
candidate_instances(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];
	const FsQueue *q = &pass->in->queues[pass->in->shares[share].queue];

	if (ss->candidate_instances == NULL)
	{
		ss->candidate_instances = fs_arena_alloc(&pass->arena, sizeof(int64_t) * (size_t) q->n_environments *
												 ((size_t) pass->in->n_instance_types + 1));
		for (int j = 0; j < ss->n_running; j++)
		{
			const FsRunningJob *run = &pass->in->running[ss->running[j]];
			int64_t    *slot;

			if (pass->run_stopping[ss->running[j]] || run->started_at >= pass->in->now)
				continue;
			slot = candidate_slot(pass, share, run);
			if (slot != NULL)
				*slot += run->instance_count;
		}
	}
	return ss->candidate_instances;
}

/* Stop (or un-stop, while searching) a candidate: it leaves its share's holdings. */
static void
take(FsVictimSearch *s, int r, bool undo)
{
	const FsRunningJob *run = run_of(s, r);
	int64_t		c = undo ? -run->instance_count : run->instance_count;
	int64_t		reserve_shrunk = s->pass->reserve_shrunk;
	int64_t    *slot = candidate_slot(s->pass, run->share, run);
	int			i;

	for (i = 0; i < N_NEEDS; i++)
		if (reduces(s, r, i))
			s->need[i] -= c;
	s->pass->run_stopping[r] = !undo;
	if (slot != NULL)
		*slot -= c;				/* a candidate no more (or again) */
	fs_quota_add(s->pass, run->share, run->instance_type, -c, c, 0);

	/*
	 * Putting a candidate back undoes what taking it did, within the same
	 * search.  If taking it grew its RESERVE share's unused room, the room
	 * kept for the round never counted that, so putting it back shrinks
	 * nothing a new round of steps 2-3 could take up (quota_share.c).
	 * Counted, every failed or trimmed search asked for another round, which
	 * ran the same search again: the rounds ran to their bound, each over
	 * every loaded job.
	 */
	if (undo)
		s->pass->reserve_shrunk = reserve_shrunk;
}

/*
 * The scratch arrays of victim searches: one search at a time, so one set
 * per pass, sized for every running job.  Allocated per search (and zeroed
 * by the arena), they made a pass with thousands of reclaims spend most of
 * its time clearing and faulting in memory it kept to the end.
 */
static void
search_scratch(FsPass *pass)
{
	size_t		n = (size_t) pass->in->n_running + 1;

	if (pass->search_pool != NULL)
		return;
	pass->search_pool = fs_arena_alloc(&pass->arena, sizeof(int) * n);
	pass->search_ratio = fs_arena_alloc(&pass->arena, sizeof(double) * n);
	pass->search_chosen = fs_arena_alloc(&pass->arena, sizeof(int) * n);
	pass->search_runs = fs_arena_alloc(&pass->arena, sizeof(FsPoolRun) * ((size_t) pass->in->n_shares + 1));
}

/* A candidate of the pool counts towards the needs it reduces. */
static void
count_coverable(const FsVictimSearch *s, int r, int64_t coverable[N_NEEDS])
{
	unsigned	mask = reduces_mask(s, r);

	for (int i = 0; i < N_NEEDS; i++)
		if (mask & (1u << i))
			coverable[i] += run_of(s, r)->instance_count;
}

/*
 * The shares a reclaim may take from: the queue's other shares above their
 * limit (fs_quota_shares_over), one run of pass->search_runs each, with
 * the highest over-limit ratio (share_over_limit()) of a type it has
 * candidates of, and what its candidates could cover of each need into
 * coverable -- all from the shares' candidate_instances, so a search costs
 * the shares above their limit, not their running jobs.  A run's jobs are
 * read into the pool only when the search comes to it (read_run).
 */
static void
reclaim_runs(FsVictimSearch *s, int64_t coverable[N_NEEDS], int *n_runs)
{
	FsPass	   *pass = s->pass;
	int			n_types = pass->in->n_instance_types;
	int			e = environment_position(pass, s->queue, s->env);
	const int  *over;
	int			n_over;

	*n_runs = 0;
	if (e < 0)
		return;
	over = fs_quota_shares_over(pass, s->queue, &n_over);
	for (int k = 0; k < n_over; k++)
	{
		const int64_t *counts;
		double		top = 0.0;

		if (over[k] == s->share)
			continue;
		counts = candidate_instances(pass, over[k]) + e * (n_types + 1);
		for (int t = 0; t <= n_types; t++)
		{
			double		r;

			if (counts[t] <= 0)
				continue;
			r = share_over_limit(pass, over[k], t < n_types ? t : -1);
			if (r <= 1.0)
				continue;
			coverable[NEED_ENV_NUM] += counts[t];
			if (t == s->type)
				coverable[NEED_ENV_TYPE] += counts[t];
			if (r > top)
				top = r;
		}
		if (top > 1.0)
			pass->search_runs[(*n_runs)++] = (FsPoolRun) {.share = over[k], .start = -1, .end = -1, .top = top};
	}
}

/*
 * Read a run's share's candidates into the pool, after *n_pool, with their
 * share's over-limit ratio (only those above 1: the search never takes
 * another, and a share only comes down as it gives jobs up).
 */
static void
read_run(FsVictimSearch *s, FsPoolRun *run, int *n_pool)
{
	FsPass	   *pass = s->pass;
	const FsShareState *vs = &pass->shares[run->share];
	bool		rated = false;
	int			type = 0;
	double		r = 0.0;

	run->start = *n_pool;
	for (int j = 0; j < vs->n_running; j++)
	{
		int			job = vs->running[j];

		if (!candidate(s, job))
			continue;
		/* a share's ratio differs only by instance type */
		if (!rated || run_of(s, job)->instance_type != type)
		{
			rated = true;
			type = run_of(s, job)->instance_type;
			r = share_over_limit(pass, run->share, type);
		}
		if (r > 1.0)
		{
			pass->search_pool[*n_pool] = job;
			pass->search_ratio[(*n_pool)++] = r;
		}
	}
	run->end = *n_pool;
}

/*
 * The jobs an in-share search may take: the share's own lower-priority
 * jobs, one run of the pool (shares are not compared).
 */
static int
in_share_pool(FsVictimSearch *s, int64_t coverable[N_NEEDS], int *n_runs)
{
	const FsShareState *ss = &s->pass->shares[s->share];
	int			n = 0;

	for (int j = 0; j < ss->n_running; j++)
		if (candidate(s, ss->running[j]))
		{
			s->pass->search_pool[n] = ss->running[j];
			s->pass->search_ratio[n++] = 0.0;
			count_coverable(s, ss->running[j], coverable);
		}
	s->pass->search_runs[0] = (FsPoolRun) {.share = s->share, .start = 0, .end = n, .top = 0.0};
	*n_runs = n > 0 ? 1 : 0;
	return n;
}

/*
 * After a victim of share was taken: the over-limit ratio of the pool's
 * jobs of that share (its run), and the run's highest.
 */
static void
rerate_share(FsVictimSearch *s, const int *pool, double *ratio, FsPoolRun *run)
{
	int			share = run_of(s, pool[run->start])->share;

	run->top = 0.0;
	for (int k = run->start; k < run->end; k++)
	{
		ratio[k] = share_over_limit(s->pass, share, run_of(s, pool[k])->instance_type);
		if (ratio[k] > run->top)
			run->top = ratio[k];
	}
}

/* The first in victim order of best and the eligible candidates of run. */
static int
best_of_run(const FsVictimSearch *s, const int *pool, const double *ratio,
			const FsPoolRun *run, unsigned short_of, int best)
{
	for (int k = run->start; k < run->end; k++)
	{
		int			r = pool[k];

		if (s->pass->run_stopping[r] || !(reduces_mask(s, r) & short_of))
			continue;
		if (s->reason == FS_PREEMPT_RECLAIM && ratio[k] <= 1.0)
			continue;			/* its share is (now) at or under its limit */
		if (best < 0 || victim_order(s, r, pool[best], ratio[k], ratio[best]) < 0)
			best = k;
	}
	return best;
}

#ifdef FS_VICTIM_SEARCH_CHECK
/*
 * test/core's checked build: the first eligible candidate in victim order
 * among every candidate of the search, found by a walk of them all.
 */
static int
walk_all_candidates(const FsVictimSearch *s, unsigned short_of)
{
	const FsPass *pass = s->pass;
	int			best = -1;
	double		best_ratio = 0.0;

	for (int r = 0; r < pass->in->n_running; r++)
	{
		const FsRunningJob *run = run_of(s, r);
		double		ratio = 0.0;

		if (!candidate(s, r) || pass->run_stopping[r] || !(reduces_mask(s, r) & short_of))
			continue;
		if (s->reason == FS_PREEMPT_RECLAIM)
		{
			if (pass->in->shares[run->share].queue != s->queue || !pass->shares[run->share].listed_over)
				continue;
			ratio = share_over_limit(pass, run->share, run->instance_type);
			if (ratio <= 1.0)
				continue;
		}
		if (best < 0 || victim_order(s, r, best, ratio, best_ratio) < 0)
		{
			best = r;
			best_ratio = ratio;
		}
	}
	return best;
}
#endif

/*
 * The next victim: the first eligible candidate in victim_order(), as an
 * index into the pool, or -1.  Rule 2 of the order (the share most over its
 * limit first) lets most runs go unread: the run with the highest ratio is
 * read first, and then a run whose highest ratio is below the best so far
 * cannot hold a job before it, unless the best is young (rule 1 comes
 * first).  Every other run is read (into the pool, at its first reading),
 * so the choice is the one a walk of all the candidates makes: the order
 * is total.  *in_run: the best's run.
 */
static int
next_victim(FsVictimSearch *s, FsPoolRun *runs, int n_runs, int *n_pool, int *in_run)
{
	const int  *pool = s->pass->search_pool;
	const double *ratio = s->pass->search_ratio;
	unsigned	short_of = short_mask(s);
	int			first = 0;
	int			best = -1;

	if (n_runs == 0)
		return -1;
	for (int b = 1; b < n_runs; b++)
		if (runs[b].top > runs[first].top)
			first = b;
	for (int i = -1; i < n_runs; i++)
	{
		int			b = i < 0 ? first : i;
		int			was = best;

		if (i == first)
			continue;
		if (best >= 0 && runs[b].top < ratio[best] && !young(s, pool[best]))
			continue;
		if (runs[b].start < 0)
			read_run(s, &runs[b], n_pool);
		best = best_of_run(s, pool, ratio, &runs[b], short_of, best);
		if (best != was)
			*in_run = b;
	}
#ifdef FS_VICTIM_SEARCH_CHECK
	if ((best < 0 ? -1 : pool[best]) != walk_all_candidates(s, short_of))
		__builtin_trap();
#endif
	return best;
}

/*
 * Find the victims for a search set up by start_search(), into s->chosen.
 * The pool holds the candidates (candidate()), and for a reclaim only those
 * of shares above their limit: the search never takes another, and a share
 * only comes down as it gives jobs up.  Of the candidates only those
 * chosen here become stopping while it runs, and only their share's ratio
 * changes (rerate_share).
 */
static bool
find_victims(FsVictimSearch *s)
{
	FsPass	   *pass = s->pass;
	const int  *pool;
	double	   *ratio;
	FsPoolRun  *runs;
	int64_t		coverable[N_NEEDS] = {0, 0, 0, 0};
	int			n_pool;
	int			n_runs;
	int			i,
				k;

	search_scratch(pass);
	pool = pass->search_pool;
	ratio = pass->search_ratio;
	runs = pass->search_runs;
	if (s->reason == FS_PREEMPT_RECLAIM)
	{
		n_pool = 0;
		reclaim_runs(s, coverable, &n_runs);
#ifdef FS_VICTIM_SEARCH_CHECK
		/* test/core's checked build: the counts are what the candidates hold */
		{
			int64_t		walked[N_NEEDS] = {0, 0, 0, 0};

			for (int r = 0; r < pass->in->n_running; r++)
			{
				const FsRunningJob *run = run_of(s, r);

				if (candidate(s, r) && pass->shares[run->share].listed_over &&
					pass->in->shares[run->share].queue == s->queue &&
					share_over_limit(pass, run->share, run->instance_type) > 1.0)
					count_coverable(s, r, walked);
			}
			if (memcmp(walked, coverable, sizeof(walked)) != 0)
				__builtin_trap();
		}
#endif
	}
	else
		n_pool = in_share_pool(s, coverable, &n_runs);

	/* can the candidates cover the need at all? */
	for (i = 0; i < N_NEEDS; i++)
		if (s->need[i] > coverable[i])
			return false;

	s->chosen = pass->search_chosen;
	s->n_chosen = 0;
	while (short_of_room(s))
	{
		int			in_run = -1;
		int			best = next_victim(s, runs, n_runs, &n_pool, &in_run);

		if (best < 0)
		{
			while (s->n_chosen > 0)
				take(s, s->chosen[--s->n_chosen], true);
			return false;
		}
		take(s, pool[best], false);
		s->chosen[s->n_chosen++] = pool[best];
		if (s->reason == FS_PREEMPT_RECLAIM)
			rerate_share(s, pool, ratio, &runs[in_run]);
	}

	/* take only what the job needs: drop, last chosen first, what is not needed */
	for (k = s->n_chosen - 1; k >= 0; k--)
	{
		int			r = s->chosen[k];
		bool		needed = false;

		for (i = 0; i < N_NEEDS; i++)
			if (reduces(s, r, i) && s->need[i] + run_of(s, r)->instance_count > 0)
				needed = true;
		if (needed)
			continue;
		take(s, r, true);
		for (i = k; i < s->n_chosen - 1; i++)
			s->chosen[i] = s->chosen[i + 1];
		s->n_chosen--;
	}
	return true;
}

/* The victims are chosen: preempt them and nominate the job on the pair. */
static void
commit(FsVictimSearch *s)
{
	FsPass	   *pass = s->pass;
	FsJobState *js = &pass->jobs[s->job];
	FsNominee  *n;
	FsDecision *d;
	int			nominee;
	int			k;

	for (k = 0; k < s->n_chosen; k++)
	{
		const FsRunningJob *run = run_of(s, s->chosen[k]);
		FsShareState *vs = &pass->shares[run->share];
		int			ui = over_limit_unit(s, s->chosen[k]);

		vs->stopped_now[0] += run->instance_count;
		if (run->instance_type >= 0 && run->instance_type < pass->in->n_instance_types)
			vs->stopped_now[FS_UNIT_INDEX(run->instance_type)] += run->instance_count;
		d = fs_add_decision(pass, FS_DECISION_PREEMPT, -1);
		d->job_id = run->job_id;
		d->share = run->share;
		d->environment = run->environment;
		d->instance_type = run->instance_type;
		d->instance_count = run->instance_count;
		d->preempt_reason = s->reason;
		d->for_job_id = js->job->job_id;
		d->for_share = js->share;
		d->for_priority = js->job->priority;
		/* what its share holds, counting the jobs being stopped, in that unit */
		d->victim_share_held = vs->held[ui] + vs->stopping[ui];
		d->victim_share_nominated = vs->nominated[ui];
		d->victim_share_limit = vs->limit[ui];
		d->victim_priority = run->priority;
		d->victim_young = young(s, s->chosen[k]);
		d->victim_lost = fs_lost_work(pass->in, run);
		d->victim_checkpoint_interval = run->checkpoint_interval;
		pass->result->stats.preempted++;
	}

	/* a starvation nomination gives way to this one (a waiting reclaim's is dropped before) */
	if (js->nominee >= 0 && pass->nominees[js->nominee].active)
	{
		fs_unhold(pass, js->nominee);
		fs_quota_add(pass, js->share, pass->nominees[js->nominee].instance_type, 0, 0,
					 -pass->nominees[js->nominee].count);
		pass->nominees[js->nominee].active = false;
		if (pass->queues[s->queue].starver == js->nominee)
			pass->queues[s->queue].starver = -1;
	}
	nominee = fs_add_nominee(pass, s->job, FS_NOMINATION_PREEMPTION, s->env, s->type, pass->in->now);
	n = &pass->nominees[nominee];
	n->stopping_num = s->earlier_num;
	n->stopping_type = s->earlier_type;
	for (k = 0; k < s->n_chosen; k++)
	{
		const FsRunningJob *run = run_of(s, s->chosen[k]);

		if (run->environment != s->env)
			continue;
		n->stopping_num += run->instance_count;
		if (run->instance_type == s->type)
			n->stopping_type += run->instance_count;
	}
	fs_hold_uncovered(pass, nominee);
	fs_quota_add(pass, js->share, s->type, 0, 0, n->count);
	js->status = FS_JOB_NOMINATED;

	d = fs_add_decision(pass, FS_DECISION_NOMINATE, s->job);
	d->environment = s->env;
	d->instance_type = s->type;
	d->nomination_kind = FS_NOMINATION_PREEMPTION;
	d->nominated_since = pass->in->now;
	d->reclaim_waits = s->n_chosen == 0 && n->stopping_num == 0 && n->stopping_type == 0 &&
		pass->in->reclaim_wait > 0;
	pass->result->stats.nominated++;
	fs_note_nominated(pass, s->job);
}

/*
 * Set up a search for one pair: what the job is short of there.  Victims of
 * an earlier nomination of the job that are still stopping count as chosen
 * already (the next pass counts them for it anyway).  False if it is short
 * of nothing and nothing is stopping for it (it would fit: no preemption).
 */
static bool
start_search(FsVictimSearch *s, FsPass *pass, int job, FsPreemptReason reason,
			 int env, int type, const FsRules *rules)
{
	FsJobState *js = &pass->jobs[job];
	int			i;

	s->pass = pass;
	s->reason = reason;
	s->job = job;
	s->share = js->share;
	s->queue = pass->in->shares[js->share].queue;
	s->env = env;
	s->type = type;
	s->count = js->job->instance_count;
	s->priority = js->job->priority;
	s->chosen = NULL;
	s->n_chosen = 0;
	s->earlier_num = s->earlier_type = 0;
	for (i = 0; i < N_NEEDS; i++)
		s->need[i] = 0;
	if (js->job->nomination.kind != FS_NOMINATION_NONE)
	{
		for (i = 0; i < pass->in->n_running; i++)
		{
			const FsRunningJob *run = &pass->in->running[i];

			if (run->stopping && run->stopping_for == js->job->job_id && run->environment == env)
			{
				s->earlier_num += run->instance_count;
				if (run->instance_type == type)
					s->earlier_type += run->instance_count;
			}
		}
	}

	if (*fs_env_unit(pass, pass->env_max, env, 0) != FS_NO_LIMIT)
		s->need[NEED_ENV_NUM] = s->count - fs_env_room(pass, env, 0, js->share, rules);
	if (*fs_env_unit(pass, pass->env_max, env, FS_UNIT_INDEX(type)) != FS_NO_LIMIT)
		s->need[NEED_ENV_TYPE] = s->count - fs_env_room(pass, env, FS_UNIT_INDEX(type), js->share, rules);
	if (reason == FS_PREEMPT_IN_SHARE)
	{
		/*
		 * The share may end up holding, per unit, its limit -- or what it holds
		 * already if that is more (within the most it may hold), but never
		 * more than before: preempting its own jobs to borrow more would be
		 * undone by the next reclaim, and that thrashes.
		 */
		FsShareState *ss = &pass->shares[js->share];
		int			own = (js->nominee >= 0 && pass->nominees[js->nominee].active) ?
			pass->nominees[js->nominee].count : 0;

		for (i = 0; i < 2; i++)
		{
			int			ui = (i == 0) ? 0 : FS_UNIT_INDEX(type);
			int64_t		cap = fs_quota_cap(pass, js->share, ui, FS_RIGHT_MOST);
			int64_t		holds = ss->held[ui] + ss->nominated[ui] - own;
			int64_t		keep;

			if (cap == FS_NO_LIMIT)
				continue;
			keep = holds > ss->limit[ui] ? holds : ss->limit[ui];
			if (cap != FS_UNLIMITED && keep > cap)
				keep = cap;
			s->need[i == 0 ? NEED_SHARE_NUM : NEED_SHARE_TYPE] = holds + s->count - keep;
		}
	}
	s->need[NEED_ENV_NUM] -= s->earlier_num;
	s->need[NEED_ENV_TYPE] -= s->earlier_type;
	return short_of_room(s) || s->earlier_num > 0;
}

/*
 * Try each pair the job may use, in fallback order, for one that victims
 * can make room on.
 */
static bool
preempt_for(FsPass *pass, int job, FsPreemptReason reason)
{
	FsJobState *js = &pass->jobs[job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	FsRules		rules;
	int			e,
				t;

	fs_init_rules(&rules);
	rules.right = reason == FS_PREEMPT_RECLAIM ? FS_RIGHT_GUARANTEE : FS_RIGHT_MOST;
	rules.respect_reserve = true;
	rules.own_nominee = js->nominee;
	rules.before_starvation_holds = true;

	for (e = 0; e < queue->n_environments; e++)
	{
		for (t = 0; t < js->job->n_instance_types; t++)
		{
			int			env;
			int			type;
			FsVictimSearch search;
			int			unit;
			int		   *failed;

			if (!fs_pair_open(pass, job, e, t, &env, &type))
				continue;
			if (reason == FS_PREEMPT_RECLAIM &&
				fs_quota_room(pass, js->share, type, FS_RIGHT_GUARANTEE, js->nominee, &unit) <
				js->job->instance_count)
				continue;		/* not within its guarantee on this type */
			failed = failed_search_slot(pass, js->share, env, type);
			if (failed != NULL && *failed > 0 && js->job->instance_count >= *failed)
				continue;		/* a job no bigger found no victims here */
			if (!start_search(&search, pass, job, reason, env, type, &rules))
				continue;
			if (!find_victims(&search))
			{
				if (failed != NULL && (*failed == 0 || js->job->instance_count < *failed))
					*failed = js->job->instance_count;
				continue;
			}
			if (reason == FS_PREEMPT_RECLAIM && pass->in->reclaim_wait > 0 && !js->reclaim_now)
			{
				/*
				 * Victims could make the room: first wait, holding the room
				 * that frees by itself (fs_place_nominated_jobs preempts
				 * for what is still short once the job has waited).
				 */
				while (search.n_chosen > 0)
					take(&search, search.chosen[--search.n_chosen], true);
			}
			commit(&search);
			return true;
		}
	}
	return false;
}

/* 2.6 step 2: a guaranteed job without room reclaims it from shares above their limit. */
bool
fs_reclaim(FsPass *pass, int job)
{
	return preempt_for(pass, job, FS_PREEMPT_RECLAIM);
}

/* 2.6 step 4: a waiting job preempts lower-priority jobs of its own share. */
bool
fs_preempt_in_share(FsPass *pass, int job)
{
	return preempt_for(pass, job, FS_PREEMPT_IN_SHARE);
}
