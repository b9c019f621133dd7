/*-------------------------------------------------------------------------
 *
 * capacity.c
 *		Capacity accounting: does a job fit on an (environment, instance
 *		type) pair, and what changes when it is placed or room is held.
 *
 * docs/scheduling.md, 'Capacity accounting': a placement must fit every limit of the environment that
 * applies to it -- NUM_INSTANCES if there is one, and its instance type's if
 * there is one; a type with neither cannot be placed there.  Running,
 * starting, scheduled and stopping jobs all occupy capacity.  On top of
 * that come the holds of nominated jobs (2.2a, 2.6), the quota share's own
 * limits and the room kept for RESERVE shares (2.6), and the compute
 * reservation of fair-share queues (2.5).  Every placement of the pass goes
 * through fs_pair_fits() and fs_place(), so these rules live in one place.
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

/*
 * When a job fits nowhere, the reason shown is the failure with the lowest
 * rank, and among those the first pair in fallback order: a pair that
 * could take the job now if capacity freed up says more than a pair in
 * back-off, which says more than a disabled environment.
 */
#define FS_RANK_DYNAMIC		0
#define FS_RANK_BACKOFF		1
#define FS_RANK_DISABLED	2
#define FS_RANK_STATIC		3
#define FS_RANK_NONE		4

void
fs_init_rules(FsRules *rules)
{
	memset(rules, 0, sizeof(*rules));
	rules->right = FS_RIGHT_NONE;
	rules->own_nominee = -1;
}

static bool
type_in_range(FsPass *pass, int type)
{
	return type >= 0 && type < pass->in->n_instance_types;
}

static bool
share_is_quota(FsPass *pass, int share)
{
	return share >= 0 && pass->shares[share].limit != NULL;
}

/* ---------- quota shares ---------- */

/*
 * The most share may hold of a unit under a right: its limit L for the
 * guarantee; for "the most it may hold" L too, except that a
 * LEND_AND_BORROW share may grow to L * (1 + borrow_limit/100), or without
 * bound when borrow_limit is -1.  FS_NO_LIMIT when the share has no limit
 * of that unit.
 */
int64_t
fs_quota_cap(FsPass *pass, int share, int unit_index, FsQuotaRight right)
{
	const FsShare *s = &pass->in->shares[share];
	int64_t		limit = pass->shares[share].limit[unit_index];

	if (limit == FS_NO_LIMIT)
		return FS_NO_LIMIT;
	if (right == FS_RIGHT_MOST && s->strategy == FS_STRATEGY_LEND_AND_BORROW)
	{
		if (s->borrow_limit < 0)
			return FS_UNLIMITED;
		return limit + (limit * (int64_t) s->borrow_limit) / 100;
	}
	return limit;
}

/*
 * How many more instances of `type' the share may take under `right':
 * the smallest (cap - held - nominated) over its limits that apply (its
 * NUM_INSTANCES limit and its limit of that type).  own_nominee's instances
 * are not counted: that is the job asking.  Victims chosen in this pass
 * still count until the next pass, so a reclaim cannot turn a share's
 * lower-priority job into a guaranteed one after its higher-priority jobs
 * were found to be borrowers (victim searches use held alone).  A share
 * with no limit that applies has no guarantee for the type; it may take it
 * only by borrowing without bound.  *unit gets the binding unit.
 */
int64_t
fs_quota_room(FsPass *pass, int share, int type, FsQuotaRight right,
			  int own_nominee, int *unit)
{
	FsShareState *ss = &pass->shares[share];
	const FsShare *s = &pass->in->shares[share];
	int64_t		room = FS_UNLIMITED;
	bool		any = false;
	int			u;
	int			own_count = 0;

	if (own_nominee >= 0 && pass->nominees[own_nominee].active &&
		pass->jobs[pass->nominees[own_nominee].job].share == share)
		own_count = pass->nominees[own_nominee].count;

	*unit = FS_UNIT_NUM_INSTANCES;
	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
		int64_t		cap;
		int64_t		r;
		int64_t		own_here = own_count;

		if (u == 1 && !type_in_range(pass, type))
			continue;
		cap = fs_quota_cap(pass, share, ui, right);
		if (cap == FS_NO_LIMIT)
			continue;
		any = true;
		if (cap == FS_UNLIMITED)
			continue;
		/* own nominee counted in the type unit only if it is of this type */
		if (u == 1 && own_nominee >= 0 && pass->nominees[own_nominee].instance_type != type)
			own_here = 0;
		r = cap - ss->held[ui] - ss->stopped_now[ui] - ss->nominated[ui] + own_here;
		if (r < room)
		{
			room = r;
			*unit = (u == 0) ? FS_UNIT_NUM_INSTANCES : type;
		}
	}
	if (!any)
	{
		if (right == FS_RIGHT_MOST && s->strategy == FS_STRATEGY_LEND_AND_BORROW &&
			s->borrow_limit < 0)
			return FS_UNLIMITED;
		return 0;
	}
	return room;
}

bool
fs_quota_guaranteed(FsPass *pass, int share, int type, int count)
{
	int			unit;

	return fs_quota_room(pass, share, type, FS_RIGHT_GUARANTEE, -1, &unit) >= count;
}

/* Instances the share holds beyond its own limits (for FAIR idle assignment). */
int64_t
fs_quota_borrowed(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];
	int64_t		borrowed = 0;
	int			u;

	if (ss->limit[0] != FS_NO_LIMIT)
	{
		borrowed = ss->held[0] + ss->nominated[0] - ss->limit[0];
		return borrowed > 0 ? borrowed : 0;
	}
	for (u = 1; u < pass->n_units; u++)
	{
		int64_t		over = ss->held[u] + ss->nominated[u];

		if (ss->limit[u] != FS_NO_LIMIT)
			over -= ss->limit[u];
		if (over > 0)
			borrowed += over;
	}
	return borrowed;
}

/*
 * Could some running job of this quota share be above the share's limit
 * (preemption.c: a reclaim victim)?  Per share, without looking at its
 * jobs: true when it holds more than a limit in some unit, or holds
 * anything while it has no NUM_INSTANCES limit (a job on a type without a
 * limit is all borrowed).  Never false for a share that has such a job;
 * it turns true only when the share comes to hold more.
 */
bool
fs_quota_over_limit(const FsPass *pass, int share)
{
	const FsShareState *ss = &pass->shares[share];

	if (ss->limit == NULL)
		return false;
	if (ss->limit[0] == FS_NO_LIMIT)
		return ss->held[0] > 0;
	for (int u = 0; u < pass->n_units; u++)
	{
		if (ss->limit[u] == FS_NO_LIMIT)
			continue;
		if (ss->limit[u] == 0 ? ss->held[u] > 0 : ss->held[u] > ss->limit[u])
			return true;
	}
	return false;
}

/*
 * The shares of a quota-share queue that may be above their limit
 * (fs_quota_over_limit), for reclaim searches: built at the first search
 * of the pass, then kept by quota_change(), which lists a share again when
 * it comes to hold more; shares back within their limits leave the list
 * here.  Each of the thousands of searches of a pass at 10,000 shares
 * walked every share of the queue before; this list is the few hundred
 * that can give anything back.  The order is not the victim order (the
 * search takes the best of all).
 */
const int *
fs_quota_shares_over(FsPass *pass, int queue, int *n)
{
	FsQueueState *qs = &pass->queues[queue];
	int			kept = 0;

	if (qs->over == NULL)
	{
		qs->over = fs_arena_alloc(&pass->arena, sizeof(int) * (size_t) (qs->n_shares + 1));
		for (int k = 0; k < qs->n_shares; k++)
			if (fs_quota_over_limit(pass, qs->shares[k]))
			{
				pass->shares[qs->shares[k]].listed_over = true;
				qs->over[qs->n_over++] = qs->shares[k];
			}
	}
	for (int k = 0; k < qs->n_over; k++)
	{
		int			share = qs->over[k];

		if (fs_quota_over_limit(pass, share))
			qs->over[kept++] = share;
		else
			pass->shares[share].listed_over = false;
	}
	qs->n_over = kept;
	*n = kept;
	return qs->over;
}

/*
 * Change a quota share's held, stopping and nominated instances of `type'
 * (in the NUM_INSTANCES unit and the type's own), keeping its queue's count
 * of unused RESERVE room up to date.  shrunk[0] and shrunk[1] get by how much
 * the share's unused RESERVE room of the two units shrank (0: it did not, or
 * the share keeps no room there).
 */
static void
quota_change(FsPass *pass, int share, int type, int64_t held, int64_t stopping,
			 int64_t nominated, int64_t shrunk[2])
{
	FsShareState *ss;
	const FsShare *s;
	int			u;

	shrunk[0] = shrunk[1] = 0;
	if (!share_is_quota(pass, share))
		return;
	ss = &pass->shares[share];
	s = &pass->in->shares[share];
	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
		int64_t		before;
		int64_t		after;

		if (u == 1 && !type_in_range(pass, type))
			continue;
		before = ss->limit[ui] - ss->held[ui] - ss->nominated[ui];
		ss->held[ui] += held;
		ss->stopping[ui] += stopping;
		ss->nominated[ui] += nominated;
		after = ss->limit[ui] - ss->held[ui] - ss->nominated[ui];
		if (s->strategy == FS_STRATEGY_RESERVE && ss->limit[ui] != FS_NO_LIMIT)
		{
			int64_t		change = (after > 0 ? after : 0) - (before > 0 ? before : 0);

			pass->queues[s->queue].reserve_unused[ui] += change;
			if (change < 0)
				shrunk[u] = -change;
		}
	}
	if (held > 0 && !ss->listed_over && pass->queues[s->queue].over != NULL &&
		fs_quota_over_limit(pass, share))
	{
		FsQueueState *qs = &pass->queues[s->queue];

		ss->listed_over = true;
		qs->over[qs->n_over++] = share;
	}
}

/*
 * fs_quota_add: quota_change() for every change but a share placing a job
 * of its own (fs_place).  If the share's unused RESERVE room shrank, the
 * room kept for the current round of steps 2-3 still counts it, and room
 * for others may grow in the next round: reserve_shrunk asks for one.
 */
void
fs_quota_add(FsPass *pass, int share, int type, int64_t held,
			 int64_t stopping, int64_t nominated)
{
	int64_t		shrunk[2];

	quota_change(pass, share, type, held, stopping, nominated, shrunk);
	if (shrunk[0] > 0 || shrunk[1] > 0)
		pass->reserve_shrunk++;
}

/*
 * A share places a job of its own (not a nominee's) on env: as a quota share
 * it holds `count' more instances of `type'.
 *
 * If it is a RESERVE share, the job uses room kept for it, and that is taken
 * up in the room kept for this round at once.  Room then still only shrinks
 * within the round (fs_keep_reserve): the room kept for the share shrinks by
 * what the job takes of it, and the room the job leaves in env -- in total
 * across the queue's environments too -- shrinks by all of the job, so room
 * for other shares stays as it was or shrinks, and the share's own shrinks.
 * Left for the next round instead, that room counted twice for every other
 * share until the round ended, kept for the share and used by it: with 100
 * RESERVE shares of 10 on 1,000 instances each round placed about 10 jobs
 * and walked every loaded job again, and the rounds ran out at 818.
 *
 * On an environment with no limit of a unit the job leaves the total room
 * of that unit as it is; taking up the shrink there would grow room for
 * others within the round, so it waits for the next round like any other.
 */
static void
quota_place(FsPass *pass, int share, int env, int type, int count)
{
	FsShareState *ss = &pass->shares[share];
	int64_t		shrunk[2];
	bool		next_round = false;
	int			u;

	quota_change(pass, share, type, count, 0, 0, shrunk);
	if (shrunk[0] == 0 && shrunk[1] == 0)
		return;					/* no kept room used: not RESERVE, or no limit */
	for (u = 0; u < 2; u++)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
		int64_t		taken;

		if (shrunk[u] == 0)
			continue;
		if (*fs_env_unit(pass, pass->env_max, env, ui) == FS_NO_LIMIT)
		{
			next_round = true;
			continue;
		}
		/*
		 * At most what is kept for it: if its unused room grew within the
		 * round (a victim of its own was chosen), the kept room is the
		 * smaller, and it stays no more than what the share leaves unused.
		 */
		taken = shrunk[u] < ss->unused_kept[ui] ? shrunk[u] : ss->unused_kept[ui];
		ss->unused_kept[ui] -= taken;
		pass->queues[pass->in->shares[share].queue].reserve_kept[ui] -= taken;
	}
	if (next_round)
		pass->reserve_shrunk++;
}

/*
 * Take the room kept for the queue's RESERVE shares as it is now, for a
 * round of steps 2 and 3.  Within a round room must only shrink, or a job
 * could find room that an earlier job of its share was refused.  So the
 * kept room is frozen for the round, except that a RESERVE share placing
 * its own jobs uses its kept room up at once (quota_place); every other
 * change that shrinks it (a nomination, a placement where the environment
 * has no limit of the unit) is taken up by the next round (quota_share.c).
 */
void
fs_keep_reserve(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	int			i,
				u;

	memcpy(qs->reserve_kept, qs->reserve_unused, sizeof(int64_t) * (size_t) pass->n_units);
	for (i = 0; i < qs->n_shares; i++)
	{
		FsShareState *ss = &pass->shares[qs->shares[i]];

		if (pass->in->shares[qs->shares[i]].strategy != FS_STRATEGY_RESERVE)
			continue;
		for (u = 0; u < pass->n_units; u++)
		{
			int64_t		unused = ss->limit[u] - ss->held[u] - ss->nominated[u];

			ss->unused_kept[u] = (ss->limit[u] != FS_NO_LIMIT && unused > 0) ? unused : 0;
		}
	}
}

/* ---------- environments ---------- */

/*
 * How much of a starvation nominee's hold on (env, unit) a placement may
 * use without the nominee's room being complete any later than its
 * complete_by, whatever happens until then:
 *
 * - all of it, by a job certain to be gone by then (gone_by, 0: not known):
 *   every job counted for the room has ended by complete_by, and so has
 *   this one;
 * - else, by a job of any length, as much of it as the jobs known to be
 *   gone by then free (released): at complete_by the nominee finds the
 *   room free now plus released, less what this job keeps, and needs
 *   count of it, so the job may keep up to free + released - count of
 *   the room free now -- which, the hold being count, is the room not
 *   held plus min(hold, released).  That is Slurm's back-fill onto nodes
 *   the reservation does not need, counted in instances.  With a second
 *   starvation nominee on the unit both would count the same releases,
 *   so then none of this.
 */
static int64_t
backfillable_hold(FsPass *pass, int nominee, int env, int unit_index, FsTime gone_by,
				  int own_nominee)
{
	const FsNominee *n = &pass->nominees[nominee];
	int64_t		hold,
				released;

	if (!n->active || !n->hold_applied || n->kind != FS_NOMINATION_STARVATION ||
		n->environment != env || nominee == own_nominee || n->complete_by <= 0)
		return 0;
	if (unit_index == 0)
		hold = n->hold_num, released = n->released_num;
	else if (unit_index == FS_UNIT_INDEX(n->instance_type))
		hold = n->hold_type, released = n->released_type;
	else
		return 0;
	if (gone_by > 0 && gone_by <= n->complete_by)
		return hold;
	if (*fs_env_unit(pass, pass->env_held_starving, env, unit_index) != hold)
		return 0;
	return released < hold ? released : hold;
}

static int64_t
backfill_room(FsPass *pass, int env, int unit_index, const FsRules *rules)
{
	int64_t		room = 0;

	for (int i = 0; i < pass->n_nominees; i++)
		room += backfillable_hold(pass, i, env, unit_index, rules->gone_by, rules->own_nominee);
	return room;
}

/*
 * limit - occupied - held of one environment unit, not counting the hold of
 * rules->own_nominee.
 *
 * For a victim search (before_starvation_holds), room held for starvation
 * nominees counts only as far as it is free now.  Their holds claim room
 * as it frees up, and may claim more than is free; but the room victims
 * free is held for the job they were stopped for (docs/scheduling.md,
 * 'Quota-share queues'), and that
 * job, a preemption nominee, is placed in step 1 of every pass, before any
 * starvation hold applies.  Counting the claim as well would stop one
 * victim more than the job needs, its room going to the starving job.
 */
static int64_t
raw_room(FsPass *pass, int env, int unit_index, const FsRules *rules)
{
	int64_t		max = *fs_env_unit(pass, pass->env_max, env, unit_index);
	int64_t		room;
	int64_t		starving;
	int			own_nominee = rules->own_nominee;

	if (max == FS_NO_LIMIT)
		return FS_UNLIMITED;
	room = max - *fs_env_unit(pass, pass->env_occupied, env, unit_index)
		- *fs_env_unit(pass, pass->env_held, env, unit_index);
	starving = *fs_env_unit(pass, pass->env_held_starving, env, unit_index);
	if (own_nominee >= 0)
	{
		FsNominee  *n = &pass->nominees[own_nominee];
		int64_t		own = 0;

		if (n->hold_applied && n->environment == env)
		{
			if (unit_index == 0)
				own = n->hold_num;
			else if (unit_index == FS_UNIT_INDEX(n->instance_type))
				own = n->hold_type;
		}
		room += own;
		if (n->kind == FS_NOMINATION_STARVATION)
			starving -= own;
	}
	if (rules->backfill && starving > 0)
		room += backfill_room(pass, env, unit_index, rules);
	if (rules->before_starvation_holds && starving > 0)
	{
		/* the room left after preemption nominees' holds, and what of it is free */
		int64_t		before = room + starving;

		room = before <= 0 ? before : (room > 0 ? room : 0);
	}
	return room;
}

/* Instances of env's total not occupied nor held for others than own_nominee. */
static int64_t
raw_room_of_total(FsPass *pass, int env, int own_nominee)
{
	int64_t		room = pass->env_total[env] - *fs_env_unit(pass, pass->env_occupied, env, 0)
		- *fs_env_unit(pass, pass->env_held, env, 0);

	if (own_nominee >= 0 && pass->nominees[own_nominee].hold_applied &&
		pass->nominees[own_nominee].environment == env)
		room += pass->nominees[own_nominee].hold_num;
	return room;
}

/*
 * Unused room of one environment unit for a job of `share' under `rules':
 * limit - occupied - held for nominees (but not the asking nominee's own
 * hold).  In a quota-share queue the unused limits of its RESERVE shares
 * (other than the job's own) are kept too: whatever the job takes must
 * leave that much unused across the queue's environments together.
 * Negative when over-committed (a lowered limit); FS_UNLIMITED when the
 * environment has no limit of that unit.
 */
int64_t
fs_env_room(FsPass *pass, int env, int unit_index, int share, const FsRules *rules)
{
	int64_t		room = raw_room(pass, env, unit_index, rules);

	if (room == FS_UNLIMITED)
		return room;
	if (rules->respect_reserve && share_is_quota(pass, share))
	{
		FsShareState *ss = &pass->shares[share];
		const FsShare *s = &pass->in->shares[share];
		const FsQueue *q = &pass->in->queues[s->queue];
		int64_t		reserved = pass->queues[s->queue].reserve_kept[unit_index];

		if (s->strategy == FS_STRATEGY_RESERVE)
			reserved -= ss->unused_kept[unit_index];
		if (reserved > 0)
		{
			int64_t		total = 0;
			int			i;

			for (i = 0; i < q->n_environments; i++)
			{
				int64_t		r = raw_room(pass, q->environments[i], unit_index, rules);

				if (r == FS_UNLIMITED)
					continue;	/* no limit of the unit: nothing kept there */
				if (r > 0)
					total += r;
			}
			if (total - reserved < room)
				room = total - reserved;
		}
	}
	return room;
}

/* Add (sign 1) or take away (-1) a nominee's hold in one of the held arrays. */
static void
held_change(FsPass *pass, int64_t *held, const FsNominee *n, int sign)
{
	*fs_env_unit(pass, held, n->environment, 0) += sign * n->hold_num;
	if (type_in_range(pass, n->instance_type))
		*fs_env_unit(pass, held, n->environment,
					 FS_UNIT_INDEX(n->instance_type)) += sign * n->hold_type;
}

/* Hold a nominee's room: from now on nobody else can use it. */
void
fs_hold(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];

	if (n->hold_applied)
		return;
	held_change(pass, pass->env_held, n, 1);
	if (n->kind == FS_NOMINATION_STARVATION)
		held_change(pass, pass->env_held_starving, n, 1);
	n->hold_applied = true;
}

/*
 * A preemption nominee holds, per unit, what its victims still stopping do
 * not cover (never less than 0): room already free is held as far as the
 * victims do not make up the need (src/scheduler/README.md, Preemption).
 */
void
fs_hold_uncovered(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];

	n->hold_num = n->count > n->stopping_num ? n->count - n->stopping_num : 0;
	n->hold_type = n->count > n->stopping_type ? n->count - n->stopping_type : 0;
	fs_hold(pass, nominee);
}

void
fs_unhold(FsPass *pass, int nominee)
{
	FsNominee  *n = &pass->nominees[nominee];

	if (!n->hold_applied)
		return;
	held_change(pass, pass->env_held, n, -1);
	if (n->kind == FS_NOMINATION_STARVATION)
		held_change(pass, pass->env_held_starving, n, -1);
	n->hold_applied = false;
}

/* ---------- pairs ---------- */

static void
set_fit(FsFit *fit, FsWaitKind kind, int rank, int env, int type)
{
	memset(fit, 0, sizeof(*fit));
	fit->kind = kind;
	fit->rank = rank;
	fit->environment = env;
	fit->instance_type = type;
	fit->unit = FS_UNIT_NUM_INSTANCES;
}

/* May the job use this pair at all right now: environment enabled, no back-off? */
bool
fs_pair_usable(FsPass *pass, int job, int env, int type, FsFit *fit)
{
	const FsRunnableJob *j = pass->jobs[job].job;
	int			i;

	if (!pass->in->environments[env].enabled)
	{
		set_fit(fit, FS_WAIT_ENVIRONMENT_DISABLED, FS_RANK_DISABLED, env, type);
		return false;
	}
	for (i = 0; i < j->n_backoffs; i++)
	{
		const FsBackoff *b = &j->backoffs[i];

		if (b->environment == env && b->instance_type == type && b->until > pass->in->now)
		{
			set_fit(fit, FS_WAIT_BACKOFF, FS_RANK_BACKOFF, env, type);
			fit->backoff_until = b->until;
			return false;
		}
	}
	return true;
}

/*
 * Could `count' instances of `type' ever be placed on env for a job of
 * `share', whatever else runs?  Environment: some limit must apply and each
 * one that applies must be big enough.  Quota share: the most it may hold
 * must be big enough.  *why says which failed; *largest is raised to what
 * this pair allows at most (for the MISCONFIGURATION message).
 */
bool
fs_pair_static_fit(FsPass *pass, int share, int env, int type, int count,
				   FsMisconfiguration *why, int64_t *largest)
{
	int64_t		max_num = *fs_env_unit(pass, pass->env_max, env, 0);
	int64_t		max_type = type_in_range(pass, type) ?
		*fs_env_unit(pass, pass->env_max, env, FS_UNIT_INDEX(type)) : FS_NO_LIMIT;
	int64_t		allows = FS_UNLIMITED;

	if (max_num == FS_NO_LIMIT && max_type == FS_NO_LIMIT)
	{
		*why = FS_MISCONFIG_ENVIRONMENT_MAX;
		return false;
	}
	if (max_num != FS_NO_LIMIT && max_num < allows)
		allows = max_num;
	if (max_type != FS_NO_LIMIT && max_type < allows)
		allows = max_type;
	if (allows < count)
	{
		if (allows > *largest)
			*largest = allows;
		*why = FS_MISCONFIG_ENVIRONMENT_MAX;
		return false;
	}
	if (share_is_quota(pass, share))
	{
		const FsShare *s = &pass->in->shares[share];
		int64_t		cap = FS_UNLIMITED;
		bool		any = false;
		int			u;

		for (u = 0; u < 2; u++)
		{
			int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
			int64_t		c;

			if (u == 1 && !type_in_range(pass, type))
				continue;
			c = fs_quota_cap(pass, share, ui, FS_RIGHT_MOST);
			if (c == FS_NO_LIMIT)
				continue;
			any = true;
			if (c < cap)
				cap = c;
		}
		if (!any && !(s->strategy == FS_STRATEGY_LEND_AND_BORROW && s->borrow_limit < 0))
			cap = 0;
		if (cap < allows)
			allows = cap;
		if (cap < count)
		{
			if (allows > *largest)
				*largest = allows;
			if (*why != FS_MISCONFIG_QUOTA_SHARE_MAX)
				*why = FS_MISCONFIG_QUOTA_SHARE_MAX;
			return false;
		}
	}
	if (allows > *largest)
		*largest = allows;
	return true;
}

/*
 * Could the job ever fit on its queue's e-th environment with its t-th
 * instance type?  The answer does not change within a pass, and every
 * attempt to place asks it for every pair, so it is worked out once per
 * job (as a bit mask when there are at most 64 pairs).
 */
bool
fs_job_could_fit(FsPass *pass, int job, int e, int t)
{
	FsJobState *js = &pass->jobs[job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	int			n_types = js->job->n_instance_types;
	FsMisconfiguration why = FS_MISCONFIG_NONE;
	int64_t		largest = 0;

	if (queue->n_environments * n_types > 64)
		return fs_pair_static_fit(pass, js->share, queue->environments[e],
								  js->job->instance_types[t], js->job->instance_count,
								  &why, &largest);
	if (!js->could_fit_known)
	{
		int			i,
					k;

		js->could_fit = 0;
		for (i = 0; i < queue->n_environments; i++)
			for (k = 0; k < n_types; k++)
				if (fs_pair_static_fit(pass, js->share, queue->environments[i],
									   js->job->instance_types[k], js->job->instance_count,
									   &why, &largest))
					js->could_fit |= UINT64_C(1) << (i * n_types + k);
		js->could_fit_known = true;
	}
	return (js->could_fit >> (e * n_types + t)) & 1;
}

/*
 * The job's e-th environment and t-th instance type as a pair, and whether
 * a nomination or a victim search may consider it: the job could ever fit
 * there and the pair may be used now (enabled, not backing off).
 */
bool
fs_pair_open(FsPass *pass, int job, int e, int t, int *env, int *type)
{
	FsJobState *js = &pass->jobs[job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	FsFit		fit;

	*env = queue->environments[e];
	*type = js->job->instance_types[t];
	return fs_job_could_fit(pass, job, e, t) && fs_pair_usable(pass, job, *env, *type, &fit);
}

/*
 * A job that can never fit -- bigger than every (environment, type) it may
 * use allows -- is MISCONFIGURED (docs/scheduling.md, 'Capacity
 * accounting') and does not block the jobs behind it.  Decided once per
 * pass, when the job is first looked at; result.c records the decision.
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
			for (t = 0; t < js->job->n_instance_types; t++)
				if (fs_job_could_fit(pass, job, e, t))
					return false;
		/* it fits nowhere: which limit says so, and the most any pair allows */
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
	fs_note_misconfigured(pass, job, why, largest);
	return true;
}

/* The nominee holding the most of (env, unit), for "held for job N". */
static int64_t
holder_of(FsPass *pass, int env, int unit_index, int own_nominee)
{
	int64_t		best_job = 0;
	int64_t		best = 0;
	int			i;

	for (i = 0; i < pass->n_nominees; i++)
	{
		FsNominee  *n = &pass->nominees[i];
		int64_t		h;

		if (!n->active || !n->hold_applied || n->environment != env || i == own_nominee)
			continue;
		if (unit_index == 0)
			h = n->hold_num;
		else if (unit_index == FS_UNIT_INDEX(n->instance_type))
			h = n->hold_type;
		else
			continue;
		if (h > best)
		{
			best = h;
			best_job = pass->jobs[n->job].job->job_id;
		}
	}
	return best_job;
}

/*
 * Does the job fit on (env, type) now, under `rules'?  The pair must be
 * usable and could-ever-fit (callers check that first).  On failure `fit'
 * says which limit blocks it and by how much.
 */
bool
fs_pair_fits(FsPass *pass, int job, int env, int type, const FsRules *rules, FsFit *fit)
{
	FsJobState *js = &pass->jobs[job];
	int			count = js->job->instance_count;
	int			share = js->share;
	FsRules		backfill = *rules;
	int			u;

	/* a placement may back-fill what starving jobs' holds will not need */
	if (!rules->before_starvation_holds)
	{
		backfill.backfill = true;
		backfill.gone_by = js->job->max_occupancy > 0 ? pass->in->now + js->job->max_occupancy : 0;
	}
	rules = &backfill;

	/* the quota share's own limits first: they say most about why it waits */
	if (rules->right != FS_RIGHT_NONE && share_is_quota(pass, share))
	{
		int			unit;
		int64_t		room = fs_quota_room(pass, share, type, rules->right,
										 rules->own_nominee, &unit);

		if (room < count)
		{
			FsShareState *ss = &pass->shares[share];
			int			ui = FS_UNIT_INDEX(unit);
			int64_t		cap = ss->limit[ui] == FS_NO_LIMIT ? 0 :
				fs_quota_cap(pass, share, ui, rules->right);

			set_fit(fit, FS_WAIT_SHARE_LIMIT, FS_RANK_DYNAMIC, env, type);
			fit->share_level = true;
			fit->unit = unit;
			fit->limit = cap;
			fit->in_use = ss->held[ui];
			fit->held = ss->nominated[ui];
			return false;
		}
	}

	/* the environment's limits: the type's own first, it is the more specific */
	for (u = 1; u >= 0; u--)
	{
		int			ui = (u == 0) ? 0 : FS_UNIT_INDEX(type);
		int64_t		max;
		int64_t		occupied;
		int64_t		held;
		int64_t		room;
		int64_t		unreserved;

		if (u == 1 && !type_in_range(pass, type))
			continue;
		max = *fs_env_unit(pass, pass->env_max, env, ui);
		if (max == FS_NO_LIMIT)
			continue;
		occupied = *fs_env_unit(pass, pass->env_occupied, env, ui);
		{
			FsRules		plain = *rules;

			plain.respect_reserve = false;
			unreserved = fs_env_room(pass, env, ui, share, &plain);
			room = fs_env_room(pass, env, ui, share, rules);
		}
		held = max - occupied - unreserved;
		if (room >= count)
			continue;
		set_fit(fit, occupied + count > max ? FS_WAIT_CAPACITY :
				unreserved < count ? FS_WAIT_HELD : FS_WAIT_RESERVED,
				FS_RANK_DYNAMIC, env, type);
		fit->unit = (u == 0) ? FS_UNIT_NUM_INSTANCES : type;
		fit->limit = max;
		fit->in_use = occupied;
		fit->held = held;
		fit->reserved = unreserved - room;
		/* who holds it only says why in a wait reason: a search of the nominees */
		if (held > 0 && pass->in->collect_wait_reasons)
			fit->held_for_job_id = holder_of(pass, env, ui, rules->own_nominee);
		return false;
	}

	/* fair share: the compute reservation, kept for shares not yet active */
	if (rules->respect_compute_reservation)
	{
		int64_t		reserved = pass->queues[pass->in->shares[share].queue].fair_reserved[env];

		if (reserved > 0)
		{
			int64_t		occupied = *fs_env_unit(pass, pass->env_occupied, env, 0);
			int64_t		free_instances = raw_room_of_total(pass, env, rules->own_nominee);
			int64_t		held = pass->env_total[env] - occupied - free_instances;

			if (free_instances - count < reserved)
			{
				set_fit(fit, FS_WAIT_RESERVED, FS_RANK_DYNAMIC, env, type);
				fit->limit = pass->env_total[env];
				fit->in_use = occupied;
				fit->held = held;
				fit->reserved = reserved;
				return false;
			}
		}
	}
	return true;
}

/*
 * Place the job on the first pair, in the queue's environment order then
 * the job's instance type order, where it fits (docs/scheduling.md,
 * 'Instance-type fallback').  Returns false
 * with the most telling failure in `fit' when it fits nowhere.
 */
bool
fs_try_place(FsPass *pass, int job, const FsRules *rules, FsFit *fit)
{
	FsJobState *js = &pass->jobs[job];
	const FsQueue *queue = &pass->in->queues[pass->in->shares[js->share].queue];
	FsFit		attempt;
	int			e,
				t;

	set_fit(fit, FS_WAIT_MISCONFIGURED, FS_RANK_NONE, -1, -1);
	for (e = 0; e < queue->n_environments; e++)
	{
		int			env = queue->environments[e];

		for (t = 0; t < js->job->n_instance_types; t++)
		{
			int			type = js->job->instance_types[t];

			if (!fs_job_could_fit(pass, job, e, t))
			{
				if (fit->rank > FS_RANK_STATIC)
					set_fit(fit, FS_WAIT_MISCONFIGURED, FS_RANK_STATIC, env, type);
				continue;
			}
			if (!fs_pair_usable(pass, job, env, type, &attempt))
			{
				if (attempt.rank < fit->rank)
					*fit = attempt;
				continue;
			}
			if (fs_pair_fits(pass, job, env, type, rules, &attempt))
			{
				fs_place(pass, job, env, type);
				return true;
			}
			if (attempt.rank < fit->rank)
				*fit = attempt;
		}
	}
	return false;
}

/*
 * The starvation nominee whose held room placing the job on (env, type)
 * takes, or -1 when the job fits in room no one holds.  A job takes held
 * room only through the back-fill of fs_pair_fits; this names the nominee
 * for the placement's reason.
 */
static int
backfilled_nominee(FsPass *pass, int job, int env, int type)
{
	FsJobState *js = &pass->jobs[job];
	FsTime		gone_by = js->job->max_occupancy > 0 ? pass->in->now + js->job->max_occupancy : 0;
	FsRules		unheld = {.own_nominee = -1};	/* room no one holds */

	if (js->nominee >= 0)
		return -1;
	for (int u = 0; u < 2; u++)
	{
		int			unit_index = u == 0 ? 0 : FS_UNIT_INDEX(type);

		if ((u == 1 && !type_in_range(pass, type)) ||
			js->job->instance_count <= raw_room(pass, env, unit_index, &unheld))
			continue;
		for (int i = 0; i < pass->n_nominees; i++)
			if (backfillable_hold(pass, i, env, unit_index, gone_by, -1) > 0)
				return i;
	}
	return -1;
}

/*
 * A quota share's job about to be placed on type: the numbers of its PLACE
 * reason (explain.c).  The limit is the one that binds its guarantee, as
 * fs_quota_room() finds it -- the smaller room of the share's NUM_INSTANCES
 * and type limits -- so the reason names the limit that decided, and
 * "holds" counts what that room counts (running jobs not stopping, victims
 * chosen in this pass, nominated jobs other than this one), plus the job.
 */
static void
quota_placement(FsPass *pass, int job, int type, int64_t *limit, int64_t *holds,
				int64_t *borrowed)
{
	FsJobState *js = &pass->jobs[job];
	FsShareState *ss = &pass->shares[js->share];
	int			count = js->job->instance_count;
	int			unit;
	int64_t		room = fs_quota_room(pass, js->share, type, FS_RIGHT_GUARANTEE,
									 js->nominee, &unit);
	int			ui = FS_UNIT_INDEX(unit);

	if (ss->limit[ui] != FS_NO_LIMIT)
	{
		*limit = ss->limit[ui];
		*holds = *limit - room + count;
	}
	else
	{
		/* no limit applies: no guarantee, all of it is borrowed */
		*limit = 0;
		*holds = ss->held[0] + ss->stopped_now[0] + ss->nominated[0] + count;
		if (js->nominee >= 0 && pass->nominees[js->nominee].active)
			*holds -= pass->nominees[js->nominee].count;
		room = 0;
	}
	*borrowed = room >= count ? 0 : count - (room > 0 ? room : 0);
}

/*
 * Place the job: it occupies the pair from now on, counts towards its
 * share at once (fair-share usage, quota holdings), and gives up the room
 * held for it, if any.
 */
void
fs_place(FsPass *pass, int job, int env, int type)
{
	FsJobState *js = &pass->jobs[job];
	FsShareState *ss = &pass->shares[js->share];
	int			count = js->job->instance_count;
	int			backfilled = backfilled_nominee(pass, job, env, type);
	int64_t		share_limit = 0;
	int64_t		share_holds = 0;
	int64_t		share_borrowed = 0;
	FsDecision *d;

	if (share_is_quota(pass, js->share))
		quota_placement(pass, job, type, &share_limit, &share_holds, &share_borrowed);
	if (js->nominee >= 0)
	{
		FsNominee  *n = &pass->nominees[js->nominee];

		fs_unhold(pass, js->nominee);
		fs_quota_add(pass, js->share, n->instance_type, 0, 0, -n->count);
		n->active = false;
	}
	*fs_env_unit(pass, pass->env_occupied, env, 0) += count;
	if (type_in_range(pass, type))
		*fs_env_unit(pass, pass->env_occupied, env, FS_UNIT_INDEX(type)) += count;
	pass->env_placements[env]++;
	ss->held_instances += count;
	ss->usage += count;
	ss->placed++;
	if (js->nominee >= 0)
		fs_quota_add(pass, js->share, type, count, 0, 0);	/* its nomination counted */
	else
		quota_place(pass, js->share, env, type, count);

	js->status = FS_JOB_PLACED;
	js->placed_env = env;
	js->placed_type = type;
	while (ss->head < ss->first_job + ss->n_jobs &&
		   (pass->jobs[ss->head].status == FS_JOB_PLACED ||
			pass->jobs[ss->head].status == FS_JOB_MISCONFIGURED))
		ss->head++;

	d = fs_add_decision(pass, FS_DECISION_PLACE, job);
	d->environment = env;
	d->instance_type = type;
	d->share_limit = share_limit;
	d->share_holds = share_holds;
	d->share_borrowed = share_borrowed;
	if (backfilled >= 0)
	{
		const FsNominee *n = &pass->nominees[backfilled];
		FsTime		gone_by = pass->in->now + js->job->max_occupancy;

		d->backfill_for_job_id = pass->jobs[n->job].job->job_id;
		d->backfill_complete_by = n->complete_by;
		if (js->job->max_occupancy > 0 && gone_by <= n->complete_by)
			d->backfill_gone_by = gone_by;
	}
	pass->result->stats.placed++;
}

/*
 * Is every environment of the queue switched off or full to its
 * NUM_INSTANCES limit with the jobs that hold capacity (env_occupied), and
 * at least one full?  Then nothing is placed for the queue in a pass: room
 * frees only between passes, since a stopped job keeps its instances until
 * it has stopped, and held room only takes more.  Nor does the queue begin
 * a starvation hold, which takes a placement past the starving job in its
 * environments (2.2a).  (A queue with no environment in use is left to the
 * pass, which says its jobs are misconfigured.)
 */
static bool
queue_environments_full(const FsInput *in, int queue, const int64_t *env_occupied)
{
	const FsQueue *q = &in->queues[queue];
	bool		full = false;

	for (int i = 0; i < q->n_environments; i++)
	{
		int			e = q->environments[i];
		const FsEnvironment *env;
		int64_t		max = -1;

		if (e < 0 || e >= in->n_environments)
			continue;
		env = &in->environments[e];
		if (!env->enabled)
			continue;
		for (int l = 0; l < env->n_limits; l++)
			if (env->limits[l].unit == FS_UNIT_NUM_INSTANCES)
				max = env->limits[l].max_capacity > 0 ? env->limits[l].max_capacity : 0;
		/* no NUM_INSTANCES limit: room is a matter of types, left to the pass */
		if (max < 0 || env_occupied[e] < max)
			return false;
		full = true;
	}
	return full;
}

static void
count_occupied(const FsInput *in, int64_t *env_occupied)
{
	for (int e = 0; e < in->n_environments; e++)
		env_occupied[e] = 0;
	for (int r = 0; r < in->n_running; r++)
	{
		const FsRunningJob *run = &in->running[r];

		if (run->environment >= 0 && run->environment < in->n_environments &&
			run->instance_count > 0)
			env_occupied[run->environment] += run->instance_count;
	}
}

void
fs_input_held(const FsInput *in, bool count_stopping, int64_t *held)
{
	for (int s = 0; s < in->n_shares; s++)
		held[s] = 0;
	for (int r = 0; r < in->n_running; r++)
	{
		const FsRunningJob *run = &in->running[r];

		if (run->share >= 0 && run->share < in->n_shares && (count_stopping || !run->stopping) &&
			run->environment >= 0 && run->environment < in->n_environments &&
			run->instance_count > 0)
			held[run->share] += run->instance_count;
	}
}

/* (scheduler.h) A queue that cannot preempt -- FIFO, fair share -- and is full. */
int
fs_queues_without_room(const FsInput *in, int64_t *env_occupied, bool *without_room)
{
	int			n = 0;

	count_occupied(in, env_occupied);
	for (int q = 0; q < in->n_queues; q++)
	{
		without_room[q] = in->queues[q].policy != FS_POLICY_QUOTA_SHARE &&
			queue_environments_full(in, q, env_occupied);
		if (without_room[q])
			n++;
	}
	return n;
}

/*
 * (scheduler.h) The shares of the queues above, and in a full quota-share
 * queue the shares that cannot reclaim either: a reclaim is for a job
 * within its share's guarantee (2.6), and a share that holds its
 * NUM_INSTANCES limit with jobs that are not stopping has none for any job
 * (fs_quota_room() counts held, stopped and nominated instances against
 * it).  A share that preempts within itself is always loaded.
 */
int
fs_shares_without_room(const FsInput *in, int64_t *scratch, bool *without_room)
{
	int64_t    *env_occupied = scratch;
	int64_t    *held = scratch + in->n_environments;
	int			n = 0;
	int			last_queue = -1;
	bool		last_full = false;

	count_occupied(in, env_occupied);
	fs_input_held(in, false, held);
	for (int s = 0; s < in->n_shares; s++)
	{
		const FsShare *share = &in->shares[s];
		int			q = share->queue;

		without_room[s] = false;
		if (q < 0 || q >= in->n_queues)
			continue;
		/* a queue's shares are usually adjacent: look at its environments once */
		if (q != last_queue)
		{
			last_full = queue_environments_full(in, q, env_occupied);
			last_queue = q;
		}
		if (!last_full)
			continue;
		if (in->queues[q].policy == FS_POLICY_QUOTA_SHARE)
		{
			int64_t		limit = -1;

			if (share->in_share_preemption)
				continue;
			for (int l = 0; l < share->n_limits; l++)
				if (share->limits[l].unit == FS_UNIT_NUM_INSTANCES)
					limit = share->limits[l].max_capacity > 0 ? share->limits[l].max_capacity : 0;
			if (limit < 0 || held[s] < limit)
				continue;
		}
		without_room[s] = true;
		n++;
	}
	return n;
}
