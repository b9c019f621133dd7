/*-------------------------------------------------------------------------
 *
 * config_cache.h
 *		Per-backend cache of the queue configuration a job submission needs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_CONFIG_CACHE_H
#define FAIRSHARE_CONFIG_CACHE_H

#include "scheduler/scheduler.h"

typedef struct QueueConfig
{
	char	   *name;
	bool		enabled;
	/* false: the queue refuses new jobs (AWS's DISABLED, accepts_jobs) */
	bool		accepts_jobs;
	FsPolicyKind kind;		/* the scheduling core's enum, one for both */
	int			n_quota_shares;
	char	  **quota_shares;
	/* The quota shares that refuse new jobs (accepts_jobs = false). */
	int			n_closed_quota_shares;
	char	  **closed_quota_shares;
	/* Capacity units of the queue's environments: a NUM_INSTANCES limit lets
	 * any type run; otherwise only the listed types can. */
	bool		any_instance_type;
	int			n_instance_types;
	char	  **instance_types;
} QueueConfig;

/* The queue's configuration, or NULL if there is no such queue. */
extern const QueueConfig *fairshare_lookup_queue(const char *name);
extern bool fairshare_queue_has_quota_share(const QueueConfig *queue, const char *share);
extern bool fairshare_quota_share_accepts_jobs(const QueueConfig *queue, const char *share);
extern bool fairshare_queue_can_run_type(const QueueConfig *queue, const char *instance_type);

/*
 * Does fairshare.role_arn_grants grant role_arn to a role whose privileges
 * user has?  Read from the same cache, dropped with it.
 */
extern bool fairshare_role_arn_granted(Oid user, const char *role_arn);
/* Does fairshare.share_grants grant that queue's share to such a role? */
extern bool fairshare_share_granted(Oid user, const char *queue, const char *share);

/*
 * Called when a submission check begins, before any lookup: takes in the
 * configuration changes committed since, and frees the caches they
 * invalidated during earlier checks.  What a lookup returns stays valid
 * until the next call.
 */
extern void fairshare_config_cache_begin_check(void);

/* Register the invalidation callback; called once from _PG_init. */
extern void fairshare_config_cache_init(void);

#endif							/* FAIRSHARE_CONFIG_CACHE_H */
