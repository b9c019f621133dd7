/*-------------------------------------------------------------------------
 *
 * fairshare.c
 *		Module entry point: _PG_init.
 *
 * Vocabulary used throughout the code:
 *	 job		what a user submitted (a row of fairshare.jobs)
 *	 attempt	one SageMaker training job run for a job (fairshare.job_attempts)
 *	 pass		one scheduling decision round (fairshare.schedule())
 *	 placement	a decision to start a job on an (environment, instance type)
 *	 victim		a running job stopped to make room for another
 *
 * Layers, each depending only on the ones below it (test/core/core.test
 * checks the includes):
 *	 worker/		the dispatcher background worker: passes, SageMaker calls
 *	 api/			beside worker/: the AWS Batch API server, a background worker
 *					of its own; only this file and settings.c include it
 *	 aws/			SigV4, credentials, the SageMaker client and its SQL
 *	 sql_api/		the SQL functions of a pass: schedule(), snapshots
 *	 tables/		the job table's triggers, lookups, the config cache
 *	 scheduler/		the pure scheduling core: plain C, no PostgreSQL
 *	 settings.c, progress.c, create_gate.c	the fairshare.* settings; the progress
 *					callback; the gate of every CreateTrainingJob try
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "api/api.h"
#include "settings.h"
#include "tables/config_cache.h"
#include "worker/dispatcher.h"
#include "worker/shared_state.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	fairshare_define_settings();
	fairshare_config_cache_init();

	/*
	 * Shared memory and the dispatcher exist only when preloaded.  Not in
	 * pg_upgrade's servers (binary upgrade mode): the new cluster's tables
	 * are replaced by the old one's files after its schema is restored, so
	 * a submission the API took there would be lost and a create the
	 * dispatcher sent would belong to no job; the old cluster is only read.
	 * pg_cron stays out of them the same way.
	 */
	if (process_shared_preload_libraries_in_progress)
	{
		fairshare_shared_state_init();
		if (!IsBinaryUpgrade)
		{
			fairshare_register_dispatcher();
			fairshare_register_api_server();
		}
	}
}
