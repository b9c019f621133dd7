/*-------------------------------------------------------------------------
 *
 * nomination.c
 *		Nominations: capacity held for one job (docs/scheduling.md,
 *		'No starvation by back-fill' and 'Quota-share queues').
 *
 * A job is nominated on an (environment, instance type) either because
 * running jobs were preempted to make room for it (PREEMPTION, made in
 * preemption.c) or because it starved past starvation_wait while smaller
 * jobs went past it (STARVATION, made here).  The wrapper stores the
 * nomination with the job and passes it back; each pass keeps or drops it
 * (fs_take_nominations), holds its room, and places the job when the room
 * is there (fs_place_nominated_jobs, fs_serve_starver).
 *
 * A nominee holds, per unit, its instance count minus the instances of its
 * victims still stopping: those occupy the environment until they stop,
 * and then the room they leave is held instead.  Nothing else can take
 * held room, so a job that preemptions were made for fits once its victims
 * have stopped.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

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
 * A job's turn in its queue: placed, or left waiting with its reason, and
 * noted if it starves (the queue's first head past starvation_wait that
 * did not fit).  Returns whether it was placed.
 */
bool
fs_place_or_wait(FsPass *pass, int queue, int job, const FsRules *rules)
{
	FsFit		fit;

	if (fs_try_place(pass, job, rules, &fit))
		return true;
	fs_note_wait(pass, job, &fit);
	fs_note_starving(pass, queue, job, &fit);
	return false;
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

static FsDecision *
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
	return d;
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
 * A reclaim that waits (FsInput.reclaim_wait): a preemption nominee with no
 * victims stopping for it holds the room that frees by itself, and
 * preempts for what is still short once it has waited reclaim_wait
 * (fs_place_nominated_jobs).
 */
static bool
reclaim_waiting(const FsPass *pass, const FsNominee *n)
{
	return pass->in->reclaim_wait > 0 && n->kind == FS_NOMINATION_PREEMPTION &&
		n->stopping_num == 0 && n->stopping_type == 0;
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

void
fs_take_nominations(FsPass *pass)
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
		if (nom->environment < 0 || nom->environment >= in->n_environments)
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
			(n->kind == FS_NOMINATION_PREEMPTION && !reclaim_waiting(pass, n) &&
			 !nominee_feasible(pass, i)) ||
			(n->kind == FS_NOMINATION_STARVATION && qs->starver >= 0))
		{
			drop_nomination(pass, n->job);
			continue;
		}
		js->status = FS_JOB_NOMINATED;
		fs_quota_add(pass, js->share, n->instance_type, 0, 0, n->count);
		if (n->kind == FS_NOMINATION_PREEMPTION)
		{
			fs_hold_uncovered(pass, i);
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

void
fs_place_nominated_jobs(FsPass *pass)
{
	int			i;

	for (i = 0; i < pass->n_nominees; i++)
	{
		FsNominee  *n = &pass->nominees[i];
		FsJobState *js = &pass->jobs[n->job];
		FsRules		rules;
		FsFit		fit;
		FsDecision *d;

		if (pass->budget_spent)
			break;
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
		if (reclaim_waiting(pass, n) && pass->in->now - n->since >= pass->in->reclaim_wait)
		{
			/* it has waited: step 2 preempts for what is still short */
			fs_unhold(pass, i);
			fs_quota_add(pass, js->share, n->instance_type, 0, 0, -n->count);
			drop_nomination(pass, n->job)->reclaim_waits = true;
			js->reclaim_now = true;
			continue;
		}
		d = fs_add_decision(pass, FS_DECISION_KEEP_NOMINATION, n->job);
		d->environment = n->environment;
		d->instance_type = n->instance_type;
		d->nomination_kind = n->kind;
		d->nominated_since = n->since;
		d->reclaim_waits = reclaim_waiting(pass, n);
		fs_note_nominated(pass, n->job);
	}
}

/* ---------- back-fill into a starving job's room ---------- */

typedef struct FsEnd
{
	FsTime		at;				/* gone by then at the latest */
	int64_t		count;
} FsEnd;

static int
end_cmp(const void *a, const void *b, const void *ctx)
{
	const FsEnd *ea = a;
	const FsEnd *eb = b;

	(void) ctx;
	if (ea->at != eb->at)
		return ea->at < eb->at ? -1 : 1;
	return 0;
}

/* The ends of running and just-placed jobs on the nominee's unit, sorted. */
static int
collect_ends(FsPass *pass, const FsNominee *n, bool of_type, FsEnd *ends)
{
	const FsInput *in = pass->in;
	int			n_ends = 0;
	int			i;

	for (i = 0; i < in->n_running; i++)
	{
		const FsRunningJob *run = &in->running[i];

		if (run->environment != n->environment || pass->run_stopping[i] ||
			run->ends_by <= 0 || (of_type && run->instance_type != n->instance_type))
			continue;
		ends[n_ends].at = run->ends_by > in->now ? run->ends_by : in->now;
		ends[n_ends++].count = run->instance_count;
	}
	for (i = 0; i < pass->n_jobs; i++)
	{
		const FsJobState *js = &pass->jobs[i];

		if (js->status != FS_JOB_PLACED || js->placed_env != n->environment ||
			js->job->max_occupancy <= 0 || (of_type && js->placed_type != n->instance_type))
			continue;
		ends[n_ends].at = in->now + js->job->max_occupancy;
		ends[n_ends++].count = js->job->instance_count;
	}
	fs_sort(ends, n_ends, sizeof(FsEnd), end_cmp, NULL, &pass->arena);
	return n_ends;
}

/*
 * When is the room of a starvation nominee that holds it complete at the
 * latest?  Per limit of its pair, the room it has now (free, not held for
 * others) plus the instances of running jobs of that unit there, in the
 * order they will be gone by at the latest, until it has its count.  Only
 * jobs whose end is known count: the others may run for ever.  Jobs
 * stopping now are left out (their room is for the job they stop for, or
 * their end is not known).  0 when no such moment is known, or when the
 * room is there already and the job waits for something else (a quota or
 * the compute reservation): then nothing back-fills its room.
 *
 * Also, per unit, what the jobs gone by that moment free (released_*):
 * with the room free now, that is more than the nominee needs when the
 * last of them frees more than was missing, or several end together.
 */
void
fs_starver_complete_by(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];
	const FsInput *in = pass->in;
	FsRules		rules;
	FsEnd	   *ends[2];
	int			n_ends[2] = {0, 0};
	FsTime		complete = in->now;
	bool		short_of_room = false;
	int			u,
				i;

	n->complete_by = 0;
	n->released_num = n->released_type = 0;
	fs_init_rules(&rules);
	rules.own_nominee = nominee;
	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(n->instance_type);
		int64_t		need;
		int64_t		gathered = 0;

		if (u == 1 && (n->instance_type < 0 || n->instance_type >= in->n_instance_types))
			continue;
		if (*fs_env_unit(pass, pass->env_max, n->environment, ui) == FS_NO_LIMIT)
			continue;
		ends[u] = fs_arena_alloc(&pass->arena, sizeof(FsEnd) * (size_t) (in->n_running + pass->n_jobs + 1));
		n_ends[u] = collect_ends(pass, n, u == 1, ends[u]);
		need = n->count - fs_env_room(pass, n->environment, ui, pass->jobs[n->job].share, &rules);
		if (need <= 0)
			continue;
		short_of_room = true;
		for (i = 0; i < n_ends[u] && gathered < need; i++)
		{
			gathered += ends[u][i].count;
			if (ends[u][i].at > complete)
				complete = ends[u][i].at;
		}
		if (gathered < need)
			return;				/* not known to be complete, ever */
	}
	if (!short_of_room)
		return;
	n->complete_by = complete;
	for (u = 0; u < 2; u++)
	{
		int64_t		released = 0;

		for (i = 0; i < n_ends[u] && ends[u][i].at <= complete; i++)
			released += ends[u][i].count;
		if (u == 0)
			n->released_num = released;
		else
			n->released_type = released;
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
	fs_starver_complete_by(pass, qs->starver);
	d = fs_add_decision(pass, FS_DECISION_KEEP_NOMINATION, n->job);
	d->environment = n->environment;
	d->instance_type = n->instance_type;
	d->nomination_kind = n->kind;
	d->nominated_since = n->since;
	d->room_complete_by = n->complete_by;
	fs_note_nominated(pass, n->job);
}

/* ---------- 5. starvation ---------- */

void
fs_nominate_starving_job(FsPass *pass, int queue)
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
			int			env;
			int			type;
			int			n;
			FsDecision *d;

			if (!fs_pair_open(pass, job, e, t, &env, &type))
				continue;
			n = fs_add_nominee(pass, job, FS_NOMINATION_STARVATION, env, type, pass->in->now);
			pass->nominees[n].hold_num = pass->nominees[n].hold_type = pass->nominees[n].count;
			fs_hold(pass, n);
			fs_starver_complete_by(pass, n);
			fs_quota_add(pass, js->share, type, 0, 0, pass->nominees[n].count);
			qs->starver = n;
			js->status = FS_JOB_NOMINATED;
			d = fs_add_decision(pass, FS_DECISION_NOMINATE, job);
			d->environment = env;
			d->instance_type = type;
			d->nomination_kind = FS_NOMINATION_STARVATION;
			d->nominated_since = pass->in->now;
			d->room_complete_by = pass->nominees[n].complete_by;
			pass->result->stats.nominated++;
			fs_note_nominated(pass, job);
			return;
		}
	}
}

