/*
 * policies.h — the queue set-ups bench/simulate compares, each built into a
 * test/core Sim world the way an admin would write them into the catalog.
 *
 * Every set-up has one environment of `capacity' x ml.p4d.24xlarge and
 * maps each job class to the share its jobs are submitted to.
 */
#ifndef FS_BENCH_POLICIES_H
#define FS_BENCH_POLICIES_H

#include "sim.h"
#include "workload.h"

typedef struct Policy
{
	const char *key;			/* for --policy and the summary lines */
	const char *title;			/* column heading */
	bool		strict_fifo;	/* the work-conservation check does not apply */
	void		(*build) (Sim *sim, int capacity, int class_share[N_CLASSES]);
	/* what each class is entitled to, as a fraction of capacity; < 0 = nothing */
	double		entitlement[N_CLASSES];
	const char *entitlement_kind;	/* "weights", "guarantees", or NULL */
	FsVictimOrder victim_order; /* which victims the rules allow go first */
} Policy;

extern const Policy policies[];
extern const int n_policies;

/* The default columns of the table, in order. */
extern const char *const default_policy_keys[];

extern const Policy *policy_by_key(const char *key);

/* The instance counts behind the quota-share guarantees, for `capacity'. */
extern int	quota_guarantee(int capacity, JobClass job_class);

#endif
