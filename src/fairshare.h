/*-------------------------------------------------------------------------
 *
 * fairshare.h
 *		Settings and entry points shared by the extension's server-side files.
 *
 * Vocabulary used throughout the code:
 *	 job		what a user submitted (a row of fairshare.jobs)
 *	 attempt	one SageMaker training job run for a job (fairshare.job_attempts)
 *	 pass		one scheduling decision round (fairshare.schedule())
 *	 placement	a decision to start a job on an (environment, instance type)
 *	 victim		a running job stopped to make room for another
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_H
#define FAIRSHARE_H

/* Settings (GUCs), defined in fairshare.c; see README for their meaning. */
extern char *fairshare_database;
extern int	fairshare_poll_interval_ms;
extern int	fairshare_max_concurrent_requests;
extern int	fairshare_api_rate_limit;
extern char *fairshare_job_name_prefix;
extern char *fairshare_region;
extern char *fairshare_endpoint_url;
extern int	fairshare_preemption_min_runtime_s;
extern int	fairshare_capacity_backoff_s;
extern int	fairshare_starvation_seconds;
extern int	fairshare_backfill_allowance_s;
extern int	fairshare_retention_s;
extern int	fairshare_create_retry_limit;
extern int	fairshare_create_retry_timeout_s;

/* 63 (SageMaker) - 8 (installation) - 19 (job id) - 2 (attempt) - 2 hyphens */
#define FAIRSHARE_JOB_NAME_PREFIX_MAX 32

#endif							/* FAIRSHARE_H */
