/*
 * policies.c — the queue set-ups bench/simulate compares (see policies.h).
 *
 *   fifo            one queue, no policy: what the reference user had.
 *                   Back-fill on (strict_fifo = false, the default).
 *   strict-fifo     the same with strict_fifo = true (not in the default
 *                   table; a head that does not fit blocks everything).
 *   priority        three FIFO queues on the environment, production
 *                   (priority 30) before exploration (20) before sweeps (10).
 *   fair-share      one FAIR_SHARE queue, a share identifier per class,
 *                   weights production 1, exploration 3, sweeps 5 (lower is
 *                   a larger share: 15/23, 5/23, 3/23 when all are
 *                   saturated), share_decay_seconds 3600 (usage remembers
 *                   about the last hour, so a class that just ran a lot
 *                   yields to the others for a while), compute_reservation 0
 *                   (a reservation idles capacity whenever a class has
 *                   nothing queued, which is most of the night).
 *   quota-shares    one QUOTA_SHARE queue, idle_assignment FIFO (as AWS):
 *                   production LEND_AND_BORROW with a 50% guarantee (64 of
 *                   128) and in-share preemption (urgent production jobs
 *                   may stop ordinary ones when production is at its limit),
 *                   exploration LEND_AND_BORROW 43.75% (56), sweeps
 *                   LEND_AND_BORROW 6.25% (8), all borrowing without bound.
 *                   Production is LEND_AND_BORROW rather than RESERVE:
 *                   reclaim gives it its guarantee within a stop delay, and
 *                   RESERVE would idle up to 64 instances whenever
 *                   production has nothing queued.
 *   quota-latest    quota-shares with the victim order before checkpoints
 *                   were counted (the most recently started first, among
 *                   the victims docs/scheduling.md 2.6 allows): what the least-lost
 *                   order saves is the difference of the two columns.
 *   quota-fair      the same as quota-shares with idle_assignment FAIR (beyond AWS) and
 *                   borrowing weights production 2, exploration 2, sweeps 1,
 *                   so that sweeps borrow last (not in the default table).
 */
#include <string.h>

#include "policies.h"

#define P4D "ml.p4d.24xlarge"

static int
one_environment(Sim *sim, int capacity)
{
	int			type = sim_type(sim, P4D);
	int			env = sim_env(sim, "p4d-reservation");

	sim_env_limit(sim, env, type, capacity);
	return env;
}

static void
build_fifo_queue(Sim *sim, int capacity, int class_share[N_CLASSES], bool strict)
{
	int			env = one_environment(sim, capacity);
	int			queue = sim_queue(sim, "training", 1, FS_POLICY_FIFO);
	int			share;
	int			c;

	sim->queues[queue].strict_fifo = strict;
	sim_queue_env(sim, queue, env);
	share = sim_share(sim, queue, "training");
	for (c = 0; c < N_CLASSES; c++)
		class_share[c] = share;
}

static void
build_fifo(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	build_fifo_queue(sim, capacity, class_share, false);
}

static void
build_strict_fifo(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	build_fifo_queue(sim, capacity, class_share, true);
}

static void
build_priority_queues(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	static const int queue_priority[N_CLASSES] = {30, 20, 10};
	int			env = one_environment(sim, capacity);
	int			c;

	for (c = 0; c < N_CLASSES; c++)
	{
		int			queue = sim_queue(sim, class_names[c], queue_priority[c], FS_POLICY_FIFO);

		sim_queue_env(sim, queue, env);
		class_share[c] = sim_share(sim, queue, class_names[c]);
	}
}

static void
build_fair_share(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	static const double weight[N_CLASSES] = {1, 3, 5};
	int			env = one_environment(sim, capacity);
	int			queue = sim_queue(sim, "training", 1, FS_POLICY_FAIR_SHARE);
	int			c;

	sim_queue_env(sim, queue, env);
	sim->queues[queue].share_decay = FS_SECONDS(3600);
	sim->queues[queue].compute_reservation = 0;
	for (c = 0; c < N_CLASSES; c++)
	{
		class_share[c] = sim_share(sim, queue, class_names[c]);
		sim->shares[class_share[c]].weight = weight[c];
	}
}

/* Guarantees in sixteenths of the capacity: 8/16, 7/16, 1/16. */
static const int quota_sixteenths[N_CLASSES] = {8, 7, 1};

int
quota_guarantee(int capacity, JobClass job_class)
{
	return capacity * quota_sixteenths[job_class] / 16;
}

static void
build_quota_shares_idle(Sim *sim, int capacity, int class_share[N_CLASSES], FsIdleAssignment idle)
{
	static const double idle_weight[N_CLASSES] = {2, 2, 1};
	int			env = one_environment(sim, capacity);
	int			type = sim_type(sim, P4D);
	int			queue = sim_queue(sim, "training", 1, FS_POLICY_QUOTA_SHARE);
	int			c;

	sim_queue_env(sim, queue, env);
	sim->queues[queue].idle_assignment = idle;
	for (c = 0; c < N_CLASSES; c++)
	{
		SimShare   *s;

		class_share[c] = sim_share(sim, queue, class_names[c]);
		s = &sim->shares[class_share[c]];
		sim_share_limit(sim, class_share[c], type, quota_guarantee(capacity, (JobClass) c));
		s->strategy = FS_STRATEGY_LEND_AND_BORROW;
		s->borrow_limit = -1;
		s->in_share_preemption = c == CLASS_PRODUCTION;
		s->weight = idle_weight[c];
	}
}

static void
build_quota_shares(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	build_quota_shares_idle(sim, capacity, class_share, FS_IDLE_FIFO);
}

static void
build_quota_fair(Sim *sim, int capacity, int class_share[N_CLASSES])
{
	build_quota_shares_idle(sim, capacity, class_share, FS_IDLE_FAIR);
}

const Policy policies[] = {
	{"fifo", "FIFO", false, build_fifo, {-1, -1, -1}, NULL, FS_VICTIMS_LEAST_LOST},
	{"strict-fifo", "strict FIFO", true, build_strict_fifo, {-1, -1, -1}, NULL, FS_VICTIMS_LEAST_LOST},
	{"priority", "priority queues", false, build_priority_queues, {-1, -1, -1}, NULL, FS_VICTIMS_LEAST_LOST},
	{"fair-share", "fair share", false, build_fair_share,
	{15.0 / 23, 5.0 / 23, 3.0 / 23}, "weights 1/3/5", FS_VICTIMS_LEAST_LOST},
	{"quota-shares", "quota shares", false, build_quota_shares,
	{8.0 / 16, 7.0 / 16, 1.0 / 16}, "guarantees", FS_VICTIMS_LEAST_LOST},
	{"quota-latest", "quota, old order", false, build_quota_shares,
	{8.0 / 16, 7.0 / 16, 1.0 / 16}, "guarantees", FS_VICTIMS_LATEST_STARTED},
	{"quota-fair", "quota, FAIR idle", false, build_quota_fair,
	{8.0 / 16, 7.0 / 16, 1.0 / 16}, "guarantees", FS_VICTIMS_LEAST_LOST},
};
const int	n_policies = (int) (sizeof(policies) / sizeof(policies[0]));

const char *const default_policy_keys[] = {"fifo", "priority", "fair-share", "quota-shares", "quota-latest", NULL};

const Policy *
policy_by_key(const char *key)
{
	int			i;

	for (i = 0; i < n_policies; i++)
		if (strcmp(policies[i].key, key) == 0)
			return &policies[i];
	return NULL;
}
