/*-------------------------------------------------------------------------
 *
 * fair_share.c
 *		A fair-share queue's turn in a pass (docs/scheduling.md,
 *		'Fair-share queues'), and the pure
 *		helpers for share weights and decayed usage.
 *
 * The turn repeatedly takes the share with the lowest (U + n) x weight,
 * where n is the instance count of the share's best job -- its usage as it
 * would be after placing it -- and tries that job.  A placement adds n to
 * U at once, so one pass does not pour everything into one share.  A best
 * job that does not fit is passed over for the rest of the pass and the
 * share's next job takes its place (back-fill), which keeps the queue
 * work-conserving.  Lower weight means a larger share: at steady state
 * every saturated share's instances x weight are equal.
 *
 * The compute reservation, floor(total x (r/100)^active_shares) instances
 * of each environment, is kept from shares that already hold capacity, so
 * a share identifier that arrives later finds room at once.
 *
 * Fair share never preempts.  Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <string.h>

#include "internal.h"

typedef struct FsFairTurn
{
	FsPass	   *pass;
	int			queue;
	double	   *key;			/* per share of the queue: (U + n) x weight */
	bool	   *unloaded;		/* per share: stands for its next, unloaded job */
} FsFairTurn;

static double
share_weight(const FsShare *share)
{
	return share->weight > 0 ? share->weight : 1.0;
}

/* Lowest (U + n) x weight first; ties: the best job runnable first. */
static bool
fair_before(const void *ctx, int a, int b)
{
	const FsFairTurn *turn = ctx;

	if (turn->key[a] != turn->key[b])
		return turn->key[a] < turn->key[b];
	if (turn->unloaded[a] != turn->unloaded[b])
		return turn->unloaded[a];	/* the unloaded job may be older still */
	if (turn->unloaded[a])
		return a < b;
	return fs_share_turn_before(turn->pass, turn->queue, NULL, a, b);
}

/*
 * Move the share's cursor to its best job still waiting; jobs that can
 * never fit are passed over on the way (and reported MISCONFIGURED).
 */
static bool
advance_to_best_job(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];
	int			end = ss->first_job + ss->n_jobs;

	while (ss->cursor < end &&
		   (pass->jobs[ss->cursor].status != FS_JOB_WAITING ||
			fs_job_misconfigured(pass, ss->cursor)))
		ss->cursor++;
	return ss->cursor < end;
}

static void
offer_share(FsFairTurn *turn, FsHeap *heap, int i)
{
	FsPass	   *pass = turn->pass;
	int			share = pass->queues[turn->queue].shares[i];
	FsShareState *ss = &pass->shares[share];

	if (!advance_to_best_job(pass, share))
	{
		/*
		 * Past its prefix.  If it placed all it had, its next job -- at least
		 * one instance -- may be next in line: the pass stops when it would be.
		 */
		if (!pass->in->shares[share].more_runnable || ss->n_jobs == 0)
			return;
		turn->unloaded[i] = true;
		turn->key[i] = (ss->usage + 1) * share_weight(&pass->in->shares[share]);
		fs_heap_push(heap, i);
		return;
	}
	turn->key[i] = (ss->usage + pass->jobs[ss->cursor].job->instance_count) *
		share_weight(&pass->in->shares[share]);
	fs_heap_push(heap, i);
}

/*
 * floor(total x (percent/100)^active), exactly where it matters: in doubles
 * 100 x 0.29 is 28.999..., and floor() would keep one instance too few.
 * While total x percent^active fits in 64 bits (a few active shares, the
 * common case) the answer is integer arithmetic; beyond that, a double
 * with a nudge far above its rounding error.
 */
static int64_t
reserved_instances(int64_t total, int percent, int active)
{
	uint64_t	numerator;
	uint64_t	denominator = 1;
	double		value;
	int			k;

	if (percent > 99)
		percent = 99;
	if (percent <= 0 || total <= 0)
		return 0;
	numerator = (uint64_t) total;
	for (k = 0; k < active; k++)
	{
		if (numerator > UINT64_MAX / 100 || denominator > UINT64_MAX / 100)
			break;
		numerator *= (uint64_t) percent;
		denominator *= 100;
	}
	if (k == active)
		return (int64_t) (numerator / denominator);
	value = (double) total * pow(percent / 100.0, active);
	return (int64_t) floor(value * (1.0 + 1e-12));
}

/*
 * The compute reservation of each of the queue's environments, and which
 * shares must leave it alone: those that already hold capacity in the
 * queue.  Active shares are those that hold capacity in the queue or have
 * a RUNNABLE job the wrapper gave (it gives every such share's first job);
 * a job not yet taken in (SUBMITTED, or PENDING behind a disabled queue)
 * counts once a pass has made it RUNNABLE (docs/scheduling.md, '2.5
 * Fair-share queues').
 */
static void
compute_reservation(FsPass *pass, int queue)
{
	const FsQueue *q = &pass->in->queues[queue];
	FsQueueState *qs = &pass->queues[queue];
	int			active = 0;
	int			i;

	if (q->compute_reservation <= 0)
		return;
	for (i = 0; i < qs->n_shares; i++)
	{
		int			s = qs->shares[i];

		if (pass->shares[s].running_jobs > 0 || pass->shares[s].n_jobs > 0)
			active++;
	}
	for (i = 0; i < q->n_environments; i++)
	{
		int			env = q->environments[i];

		qs->fair_reserved[env] = reserved_instances(pass->env_total[env], q->compute_reservation, active);
	}
}

static bool
restricted_by_reservation(FsPass *pass, int share)
{
	FsShareState *ss = &pass->shares[share];

	/* a share identifier not yet using capacity may use the reserve, once */
	return ss->running_jobs > 0 || ss->placed > 0;
}

void
fs_fair_share_turn(FsPass *pass, int queue)
{
	FsQueueState *qs = &pass->queues[queue];
	FsFairTurn	turn;
	FsHeap		heap;
	FsRules		rules;
	int			i;

	compute_reservation(pass, queue);
	fs_init_rules(&rules);
	if (qs->starver >= 0 && pass->nominees[qs->starver].active)
	{
		rules.respect_compute_reservation =
			restricted_by_reservation(pass, pass->jobs[pass->nominees[qs->starver].job].share);
		fs_serve_starver(pass, queue, &rules);
	}

	turn.pass = pass;
	turn.queue = queue;
	turn.key = fs_arena_alloc(&pass->arena, sizeof(double) * (size_t) (qs->n_shares + 1));
	turn.unloaded = fs_arena_alloc(&pass->arena, sizeof(bool) * (size_t) (qs->n_shares + 1));
	fs_heap_init(&heap, qs->n_shares, fair_before, &turn, &pass->arena);
	for (i = 0; i < qs->n_shares; i++)
	{
		pass->shares[qs->shares[i]].cursor = pass->shares[qs->shares[i]].first_job;
		offer_share(&turn, &heap, i);
	}

	while (heap.n > 0 && !pass->budget_spent)
	{
		int			i_share = fs_heap_pop(&heap);
		int			share = qs->shares[i_share];

		if (turn.unloaded[i_share])
		{
			if (fs_prefix_used_up(pass, share))
				return;
			continue;
		}
		rules.respect_compute_reservation = restricted_by_reservation(pass, share);
		fs_place_or_wait(pass, queue, pass->shares[share].cursor, &rules);
		pass->shares[share].cursor++;
		offer_share(&turn, &heap, i_share);
	}
}

/* ---------- pure helpers ---------- */

static bool
is_wildcard(const char *id, size_t *prefix_len)
{
	size_t		len = strlen(id);

	if (len > 0 && id[len - 1] == '*')
	{
		*prefix_len = len - 1;
		return true;
	}
	*prefix_len = len;
	return false;
}

double
fs_share_weight(const FsWeightEntry *entries, int n_entries, const char *identifier)
{
	double		weight = 1.0;
	size_t		best = 0;
	bool		found_wildcard = false;
	int			i;

	if (identifier == NULL)
		return 1.0;
	for (i = 0; i < n_entries; i++)
	{
		const char *id = entries[i].share_identifier;
		size_t		prefix;

		if (id == NULL)
			continue;
		if (!is_wildcard(id, &prefix))
		{
			if (strcmp(id, identifier) == 0)
				return entries[i].weight_factor;
			continue;
		}
		if (strncmp(id, identifier, prefix) == 0 && (!found_wildcard || prefix > best))
		{
			found_wildcard = true;
			best = prefix;
			weight = entries[i].weight_factor;
		}
	}
	return weight;
}

bool
fs_share_entries_overlap(const FsWeightEntry *entries, int n_entries, int *a, int *b)
{
	int			i,
				j;

	for (i = 0; i < n_entries; i++)
	{
		for (j = i + 1; j < n_entries; j++)
		{
			const char *x = entries[i].share_identifier;
			const char *y = entries[j].share_identifier;
			size_t		px,
						py;
			bool		wx,
						wy;

			if (x == NULL || y == NULL)
				continue;
			wx = is_wildcard(x, &px);
			wy = is_wildcard(y, &py);
			if ((!wx && !wy && strcmp(x, y) == 0) ||
				(wx && strncmp(x, y, px) == 0) ||	/* y starts with x's prefix */
				(wy && strncmp(y, x, py) == 0))
			{
				*a = i;
				*b = j;
				return true;
			}
		}
	}
	return false;
}

double
fs_decayed_usage(double usage, FsTime usage_at, FsTime now, FsTime half_life, int64_t held_now)
{
	double		factor;

	if (half_life <= 0 || usage_at <= 0)
		return (double) held_now;
	if (now <= usage_at)
		return usage;
	factor = pow(2.0, -(double) (now - usage_at) / (double) half_life);
	return usage * factor + (double) held_now * (1.0 - factor);
}

void
fs_fair_first_keys(const FsInput *in, const int *first_instances, int64_t *held, double *key)
{
	/* what the pass counts as held (snapshot_running): stopping jobs too */
	fs_input_held(in, true, held);
	for (int s = 0; s < in->n_shares; s++)
	{
		const FsShare *share = &in->shares[s];
		const FsQueue *q;
		double		usage;

		key[s] = -1;
		if (share->queue < 0 || share->queue >= in->n_queues)
			continue;
		q = &in->queues[share->queue];
		if (q->policy != FS_POLICY_FAIR_SHARE)
			continue;
		usage = fs_decayed_usage(share->usage, share->usage_at, in->now, q->share_decay, held[s]);
		key[s] = (usage + (first_instances[s] > 0 ? first_instances[s] : 1)) * share_weight(share);
	}
}
