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
extern int	fairshare_checkpoint_interval_s;
extern int	fairshare_retention_s;
extern int	fairshare_create_retry_limit;
extern int	fairshare_create_retry_timeout_s;
extern int	fairshare_api_port;
extern char *fairshare_api_listen_addresses;
extern char *fairshare_api_tls_cert_file;
extern char *fairshare_api_tls_key_file;
extern char *fairshare_api_account_id;
extern int	fairshare_api_max_body_size;
extern int	fairshare_api_max_header_size;
extern int	fairshare_api_max_connections;
extern int	fairshare_api_idle_timeout_s;
extern int	fairshare_api_key_requests_per_second;

/* 63 (SageMaker) - 8 (installation) - 19 (job id) - 2 (attempt) - 2 hyphens */
#define FAIRSHARE_JOB_NAME_PREFIX_MAX 32

/*
 * A scheduling pass that places thousands of jobs takes a while, and the
 * dispatcher runs passes in the same process as its SageMaker calls.  It
 * sets fairshare_pass_progress_hook so that those calls keep moving
 * meanwhile: the pass and the job transition trigger call
 * fairshare_pass_progress() for every job row they handle, and that calls
 * the hook at most every FAIRSHARE_PASS_PROGRESS_US.  The hook must not
 * touch the database.  In any other backend it is NULL and costs a test.
 */
typedef void (*fairshare_pass_progress_hook_type) (void);
extern fairshare_pass_progress_hook_type fairshare_pass_progress_hook;

#define FAIRSHARE_PASS_PROGRESS_US	2000

extern void fairshare_pass_progress_call_hook(void);

static inline void
fairshare_pass_progress(void)
{
	if (fairshare_pass_progress_hook != NULL)
		fairshare_pass_progress_call_hook();
}

/*
 * Set by the dispatcher: the most jobs one schedule() call places, and the
 * most new jobs it takes into their queues (0: no limit, as for a person
 * calling schedule()).  Small passes let the first creates of a burst go
 * out after milliseconds, not after one pass over all of it.  After each
 * call, fairshare_pass_left_work tells whether it stopped at the limit with
 * work left (jobs it could have placed, or new jobs not taken in).
 */
extern int	fairshare_pass_placement_target;
extern bool fairshare_pass_left_work;

/*
 * Set by the dispatcher: schedule() does not wait for the pass lock.  When
 * another session holds it (a person's schedule() in a transaction left
 * open), the call does nothing and sets fairshare_pass_lock_missed; the
 * dispatcher goes on with its calls, and that session's commit wakes it
 * for the next pass.
 */
extern bool fairshare_pass_lock_nowait;
extern bool fairshare_pass_lock_missed;

#endif							/* FAIRSHARE_H */
