/*-------------------------------------------------------------------------
 *
 * explain.c
 *		Plain-English sentences, with numbers, for wait reasons and
 *		decisions: what status_reason, queue_snapshot() and explain() show.
 *
 * Modelled on Kueue's pending reasons: say which limit blocks the job, by
 * how much, and who holds the room ("insufficient unused quota in ProdExp1
 * for ml.p4d.24xlarge: needs 15, 5 free of its limit 60, 55 held; ...").
 * Pure functions of the input and one reason or decision.
 *
 * Never include a PostgreSQL header here (and no <stdarg.h>: the core's
 * headers are limited, so the text is built piece by piece).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct FsText
{
	char	   *buf;
	size_t		size;
	size_t		len;			/* what the whole text needs, as snprintf */
} FsText;

static void
text_init(FsText *t, char *buf, size_t size)
{
	t->buf = buf;
	t->size = size;
	t->len = 0;
	if (size > 0)
		buf[0] = '\0';
}

static void
add(FsText *t, const char *s)
{
	size_t		n = strlen(s);

	if (t->size > 0 && t->len < t->size - 1)
	{
		size_t		room = t->size - 1 - t->len;
		size_t		copy = n < room ? n : room;

		memcpy(t->buf + t->len, s, copy);
		t->buf[t->len + copy] = '\0';
	}
	t->len += n;
}

static void
add_int(FsText *t, int64_t v)
{
	char		num[32];

	snprintf(num, sizeof(num), "%lld", (long long) v);
	add(t, num);
}

static void
add_real(FsText *t, double v)
{
	char		num[64];

	snprintf(num, sizeof(num), "%.4g", v);
	add(t, num);
}

static void
add_usage(FsText *t, double v)
{
	char		num[64];

	snprintf(num, sizeof(num), "%.1f", v);
	add(t, num);
}

/* A duration in whole seconds below a minute, else in whole minutes. */
static void
add_minutes(FsText *t, FsTime d)
{
	int64_t		seconds = d / FS_USECS_PER_SEC;
	int64_t		minutes = (d + FS_SECONDS(30)) / FS_SECONDS(60);

	if (seconds < 60)
	{
		add_int(t, seconds < 0 ? 0 : seconds);
		add(t, seconds == 1 ? " second" : " seconds");
		return;
	}
	add_int(t, minutes);
	add(t, minutes == 1 ? " minute" : " minutes");
}

static const char *
env_name(const FsInput *in, int env)
{
	if (env < 0 || env >= in->n_environments || in->environments[env].name == NULL)
		return "?";
	return in->environments[env].name;
}

static const char *
type_name(const FsInput *in, int type)
{
	if (type < 0 || type >= in->n_instance_types || in->instance_type_names == NULL ||
		in->instance_type_names[type] == NULL)
		return "?";
	return in->instance_type_names[type];
}

static const char *
share_name(const FsInput *in, int share)
{
	if (share < 0 || share >= in->n_shares || in->shares[share].name == NULL)
		return "?";
	return in->shares[share].name;
}

/*
 * Why this victim rather than another job its share would give up: after
 * the share and the priority the rules choose, the least work lost
 * (preemption.c, victim_order()); or it was young and nothing else freed
 * the room.
 */
static void
add_victim_choice(FsText *t, const FsInput *in, const FsDecision *d)
{
	if (d->victim_young)
	{
		add(t, "; it has run less than fairshare.preemption_min_runtime, but no older job frees the room");
		return;
	}
	if (in->victim_order != FS_VICTIMS_LEAST_LOST)
		return;
	add(t, "; of ");
	add(t, share_name(in, d->share));
	add(t, "'s jobs of priority ");
	add_int(t, d->victim_priority);
	add(t, " it loses the least work: ");
	add_minutes(t, d->victim_lost);
	if (d->victim_checkpoint_interval > 0 && in->checkpoint_on_stop)
		add(t, ", its startup (CheckpointConfig: it writes a last checkpoint when stopped)");
	else if (d->victim_checkpoint_interval > 0)
	{
		add(t, " since its last checkpoint (CheckpointConfig, one every ");
		add_minutes(t, d->victim_checkpoint_interval);
		add(t, ")");
	}
	else
		add(t, ", all it ran (no CheckpointConfig)");
}

static const char *
unit_name(const FsInput *in, int unit)
{
	return unit == FS_UNIT_NUM_INSTANCES ? "NUM_INSTANCES" : type_name(in, unit);
}

static const char *
strategy_name(FsStrategy s)
{
	switch (s)
	{
		case FS_STRATEGY_RESERVE:
			return "RESERVE";
		case FS_STRATEGY_LEND:
			return "LEND";
		case FS_STRATEGY_LEND_AND_BORROW:
			return "LEND_AND_BORROW";
	}
	return "?";
}

static const char *
misconfiguration_code(FsMisconfiguration m)
{
	return m == FS_MISCONFIG_QUOTA_SHARE_MAX ?
		"MISCONFIGURATION:QUOTA_SHARE_MAX_RESOURCE" :
		"MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE";
}

static bool
is_fair_share(const FsInput *in, int share)
{
	return share >= 0 && share < in->n_shares && in->shares[share].queue >= 0 &&
		in->shares[share].queue < in->n_queues &&
		in->queues[in->shares[share].queue].policy == FS_POLICY_FAIR_SHARE;
}

static void
add_pair(FsText *t, const FsInput *in, int env, int type)
{
	add(t, env_name(in, env));
	add(t, " for ");
	add(t, type_name(in, type));
}

/* ": needs 15, 5 free (NUM_INSTANCES limit 100, 95 in use" ... ")" */
static void
add_numbers(FsText *t, const FsInput *in, const FsWaitReason *w)
{
	add(t, ": needs ");
	add_int(t, w->needed);
	add(t, ", ");
	add_int(t, w->free);
	add(t, " free (");
	add(t, unit_name(in, w->unit));
	add(t, " limit ");
	add_int(t, w->limit);
	add(t, ", ");
	add_int(t, w->in_use);
	add(t, " in use");
	if (w->held > 0)
	{
		add(t, ", ");
		add_int(t, w->held);
		add(t, " held");
		if (w->held_for_job_id != 0)
		{
			add(t, " for job ");
			add_int(t, w->held_for_job_id);
		}
	}
	if (w->reserved > 0)
	{
		add(t, ", ");
		add_int(t, w->reserved);
		add(t, " kept for RESERVE shares");
	}
	add(t, ")");
}

size_t
fs_format_wait_reason(const FsInput *in, const FsWaitReason *w, char *buf, size_t size)
{
	FsText		t;

	text_init(&t, buf, size);
	switch (w->kind)
	{
		case FS_WAIT_CAPACITY:
			add(&t, "insufficient unused capacity in ");
			add_pair(&t, in, w->environment, w->instance_type);
			add_numbers(&t, in, w);
			break;
		case FS_WAIT_HELD:
			add(&t, "capacity in ");
			add_pair(&t, in, w->environment, w->instance_type);
			add(&t, " is held for ");
			if (w->held_for_job_id != 0)
			{
				add(&t, "job ");
				add_int(&t, w->held_for_job_id);
			}
			else
				add(&t, "nominated jobs");
			add_numbers(&t, in, w);
			break;
		case FS_WAIT_RESERVED:
			if (is_fair_share(in, w->share))
			{
				add(&t, "compute reservation: ");
				add_int(&t, w->reserved);
				add(&t, " of ");
				add_int(&t, w->limit);
				add(&t, " instances in ");
				add(&t, env_name(in, w->environment));
				add(&t, " are kept for share identifiers that are not active; needs ");
				add_int(&t, w->needed);
				add(&t, ", ");
				add_int(&t, w->limit - w->in_use - w->held > 0 ? w->limit - w->in_use - w->held : 0);
				add(&t, " unused");
			}
			else
			{
				add(&t, "unused quota of RESERVE shares is kept in ");
				add_pair(&t, in, w->environment, w->instance_type);
				add_numbers(&t, in, w);
			}
			break;
		case FS_WAIT_SHARE_LIMIT:
			add(&t, "insufficient unused quota in ");
			add(&t, share_name(in, w->share));
			add(&t, " for ");
			add(&t, type_name(in, w->instance_type));
			add(&t, ": needs ");
			add_int(&t, w->needed);
			add(&t, ", ");
			add_int(&t, w->free);
			add(&t, " free of ");
			add(&t, w->limit > w->share_guarantee && w->share_guarantee >= 0 ?
				"the most it may hold, " : "its limit ");
			add_int(&t, w->limit);
			add(&t, " (");
			add(&t, unit_name(in, w->unit));
			add(&t, "), ");
			add_int(&t, w->in_use);
			add(&t, " held");
			if (w->held > 0)
			{
				add(&t, ", ");
				add_int(&t, w->held);
				add(&t, " nominated");
			}
			if (w->strategy != FS_STRATEGY_LEND_AND_BORROW)
			{
				add(&t, "; ");
				add(&t, strategy_name(w->strategy));
				add(&t, " shares do not borrow");
			}
			break;
		case FS_WAIT_NOMINATED:
			if (w->nomination_kind == FS_NOMINATION_STARVATION)
				add(&t, "waited longer than fairshare.starvation_seconds: capacity in ");
			else
				add(&t, "capacity in ");
			add_pair(&t, in, w->environment, w->instance_type);
			add(&t, " is held for this job");
			if (w->stopping > 0)
			{
				add(&t, "; waiting for ");
				add_int(&t, w->stopping);
				add(&t, " instances of preempted jobs to stop");
			}
			else
			{
				add(&t, " as it frees up: needs ");
				add_int(&t, w->needed);
				add(&t, ", ");
				add_int(&t, w->free);
				add(&t, " free");
			}
			break;
		case FS_WAIT_BACKOFF:
			add(&t, env_name(in, w->environment));
			add(&t, "/");
			add(&t, type_name(in, w->instance_type));
			add(&t, " is skipped after a capacity failure for another ");
			add_int(&t, (w->backoff_until - in->now + FS_USECS_PER_SEC - 1) / FS_USECS_PER_SEC);
			add(&t, " s");
			break;
		case FS_WAIT_ENVIRONMENT_DISABLED:
			add(&t, "service environment ");
			add(&t, env_name(in, w->environment));
			add(&t, " is DISABLED");
			break;
		case FS_WAIT_STRICT_FIFO:
			add(&t, "waiting behind job ");
			add_int(&t, w->blocked_by_job_id);
			add(&t, " (strict FIFO queue)");
			break;
		case FS_WAIT_MISCONFIGURED:
			add(&t, misconfiguration_code(w->misconfiguration));
			add(&t, " - the job needs ");
			add_int(&t, w->needed);
			add(&t, " instances; ");
			add(&t, w->misconfiguration == FS_MISCONFIG_QUOTA_SHARE_MAX ?
				"its quota share may hold at most " :
				"its queue's environments allow at most ");
			add_int(&t, w->limit);
			add(&t, " for its instance types");
			return t.len;		/* no position: it is not in line */
	}
	add(&t, "; position ");
	add_int(&t, w->position);
	add(&t, " in share ");
	add(&t, share_name(in, w->share));
	if (is_fair_share(in, w->share))
	{
		add(&t, " (usage ");
		add_real(&t, w->share_usage);
		add(&t, ", weight ");
		add_real(&t, w->share_weight);
		add(&t, ")");
	}
	return t.len;
}

/*
 * Why a job was placed, by its queue's policy: a quota share says whether
 * it runs within its guarantee or borrows, against the limit that bound
 * it (capacity.c, fs_place); a fair share its usage and weight.
 */
static void
add_placement(FsText *t, const FsInput *in, const FsDecision *d)
{
	const FsShare *s = (d->share >= 0 && d->share < in->n_shares) ? &in->shares[d->share] : NULL;
	FsPolicyKind policy = FS_POLICY_FIFO;

	if (s != NULL && s->queue >= 0 && s->queue < in->n_queues)
		policy = in->queues[s->queue].policy;
	if (policy == FS_POLICY_QUOTA_SHARE && d->share_borrowed > 0)
	{
		add(t, share_name(in, d->share));
		add(t, " borrows ");
		add_int(t, d->share_borrowed);
		add(t, " idle instances beyond its guarantee of ");
		add_int(t, d->share_limit);
		add(t, " (holds ");
		add_int(t, d->share_holds);
		add(t, " of ");
		add(t, type_name(in, d->instance_type));
		add(t, " on ");
		add(t, env_name(in, d->environment));
		add(t, ")");
	}
	else if (policy == FS_POLICY_QUOTA_SHARE)
	{
		add(t, "within ");
		add(t, share_name(in, d->share));
		add(t, "'s guarantee: holds ");
		add_int(t, d->share_holds);
		add(t, " of its ");
		add_int(t, d->share_limit);
		add(t, " on ");
		add(t, env_name(in, d->environment));
	}
	else
	{
		if (policy == FS_POLICY_FAIR_SHARE)
		{
			add(t, "fair share ");
			add(t, share_name(in, d->share));
			add(t, " (weight ");
			add_real(t, s->weight);
			add(t, ", usage ");
			add_usage(t, s->usage);
			add(t, ") is furthest below its share");
		}
		else
			add(t, "next in FIFO order");
		add(t, "; on ");
		add(t, env_name(in, d->environment));
		add(t, ", ");
		add(t, type_name(in, d->instance_type));
	}
}

size_t
fs_format_decision(const FsInput *in, const FsDecision *d, char *buf, size_t size)
{
	FsText		t;

	text_init(&t, buf, size);
	switch (d->kind)
	{
		case FS_DECISION_PLACE:
			add_placement(&t, in, d);
			break;
		case FS_DECISION_PREEMPT:
			add(&t, "preempted by job ");
			add_int(&t, d->for_job_id);
			if (d->preempt_reason == FS_PREEMPT_RECLAIM)
			{
				add(&t, " to reclaim the guaranteed capacity of quota share ");
				add(&t, share_name(in, d->for_share));
				add(&t, ": ");
				add(&t, share_name(in, d->share));
				add(&t, " holds ");
				add_int(&t, d->victim_share_held);
				add(&t, " instances");
				if (d->victim_share_nominated > 0)
				{
					add(&t, " and ");
					add_int(&t, d->victim_share_nominated);
					add(&t, " nominated");
				}
				if (d->victim_share_limit >= 0)
				{
					add(&t, ", its limit is ");
					add_int(&t, d->victim_share_limit);
				}
			}
			else
			{
				add(&t, " of the same quota share ");
				add(&t, share_name(in, d->share));
				add(&t, ", which has the higher scheduling_priority ");
				add_int(&t, d->for_priority);
			}
			add_victim_choice(&t, in, d);
			break;
		case FS_DECISION_NOMINATE:
		case FS_DECISION_KEEP_NOMINATION:
			add(&t, "capacity in ");
			add_pair(&t, in, d->environment, d->instance_type);
			if (d->nomination_kind == FS_NOMINATION_PREEMPTION && d->reclaim_waits)
				add(&t, " is held for this job as it frees up; what is still short after "
					"fairshare.reclaim_wait is reclaimed from shares above their limit");
			else
				add(&t, d->nomination_kind == FS_NOMINATION_PREEMPTION ?
					" is held for this job while preempted jobs stop" :
					" is held for this job as it frees up (waited longer than fairshare.starvation_seconds)");
			break;
		case FS_DECISION_DROP_NOMINATION:
			add(&t, "capacity in ");
			add_pair(&t, in, d->environment, d->instance_type);
			add(&t, " is no longer held for this job");
			break;
		case FS_DECISION_MISCONFIGURED:
			add(&t, misconfiguration_code(d->misconfiguration));
			add(&t, " - the job needs ");
			add_int(&t, d->instance_count);
			add(&t, " instances; ");
			add(&t, d->misconfiguration == FS_MISCONFIG_QUOTA_SHARE_MAX ?
				"its quota share may hold at most " :
				"its queue's environments allow at most ");
			add_int(&t, d->largest_limit);
			add(&t, " for its instance types");
			break;
	}
	return t.len;
}
