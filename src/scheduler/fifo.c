/*-------------------------------------------------------------------------
 *
 * fifo.c
 *		A FIFO queue's turn in a pass (docs/scheduling.md, 'FIFO queues').
 *
 * RUNNABLE jobs are placed in the order they became RUNNABLE (runnable_at,
 * then job_id).  A job that does not fit does not block a smaller one
 * behind it (back-fill), unless the queue is strict_fifo; a job that can
 * never fit (MISCONFIGURATION) blocks nobody, strict or not.  A head job
 * that has starved past starvation_wait has its room held (nomination.c).
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include "internal.h"

void
fs_fifo_turn(FsPass *pass, int queue)
{
	const FsQueue *q = &pass->in->queues[queue];
	FsRules		rules;
	FsMerge		order;
	int64_t		blocked_by = 0;
	int			job;
	int			share;

	fs_init_rules(&rules);
	fs_serve_starver(pass, queue, &rules);

	fs_merge_init(&order, pass, queue);
	while ((job = fs_merge_next(&order, &share)) != FS_MERGE_END)
	{
		FsJobState *js;
		FsFit		fit;

		if (job == FS_MERGE_UNLOADED)
		{
			if (fs_prefix_used_up(pass, share))
				return;
			continue;
		}
		js = &pass->jobs[job];
		if (js->status == FS_JOB_NOMINATED && q->strict_fifo && blocked_by == 0)
			blocked_by = js->job->job_id;	/* a starving head holds the line */
		if (js->status != FS_JOB_WAITING || fs_job_misconfigured(pass, job))
			continue;
		if (blocked_by != 0)
		{
			fit.kind = FS_WAIT_STRICT_FIFO;
			fit.rank = 0;
			fit.environment = fit.instance_type = -1;
			fit.unit = FS_UNIT_NUM_INSTANCES;
			fit.share_level = false;
			fit.limit = fit.in_use = fit.held = fit.reserved = 0;
			fit.held_for_job_id = blocked_by;
			fit.backoff_until = 0;
			fs_note_wait(pass, job, &fit);
			continue;
		}
		if (fs_try_place(pass, job, &rules, &fit))
			continue;
		fs_note_wait(pass, job, &fit);
		fs_note_starving(pass, queue, job, &fit);
		if (q->strict_fifo)
			blocked_by = js->job->job_id;
	}
}
