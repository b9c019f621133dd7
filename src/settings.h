/*-------------------------------------------------------------------------
 *
 * settings.h
 *		The fairshare.* settings (GUCs), read by every layer.
 *
 * A bottom layer: it includes nothing of fairshare's, so any file may
 * include it.  The settings are defined in settings.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SETTINGS_H
#define FAIRSHARE_SETTINGS_H

/* The settings; see README for their meaning. */
extern char *fairshare_database;
extern int	fairshare_poll_interval_ms;
extern int	fairshare_max_concurrent_requests;
extern int	fairshare_api_rate_limit;
extern char *fairshare_job_name_prefix;
extern char *fairshare_region;
extern char *fairshare_endpoint_url;
extern char *fairshare_endpoint_allowlist;
extern int	fairshare_preemption_min_runtime_s;
extern int	fairshare_capacity_backoff_s;
extern int	fairshare_starvation_seconds;
extern int	fairshare_backfill_allowance_s;
extern int	fairshare_checkpoint_interval_s;
extern bool fairshare_checkpoint_on_stop;
extern bool fairshare_drop_with_placed_jobs;
extern bool fairshare_require_role_arn_grant;
extern bool fairshare_require_share_grant;
extern int	fairshare_reclaim_wait_s;
extern int	fairshare_retention_s;
extern int	fairshare_create_retry_limit;
extern int	fairshare_create_retry_timeout_s;
extern int	fairshare_orphan_sweep_interval_s;
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
extern int	fairshare_api_workers;

/* 63 (SageMaker) - 8 (installation) - 19 (job id) - 2 (attempt) - 2 hyphens */
#define FAIRSHARE_JOB_NAME_PREFIX_MAX 32

/* fairshare.job_name_prefix when nothing sets it. */
#define FAIRSHARE_JOB_NAME_PREFIX_DEFAULT "fairshare-"

/* Define every fairshare.* setting; called once, from _PG_init. */
extern void fairshare_define_settings(void);

#endif							/* FAIRSHARE_SETTINGS_H */
