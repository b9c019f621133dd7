/*-------------------------------------------------------------------------
 *
 * pass_input.h
 *		Loading what a scheduling pass needs from the catalog (SPI) into the
 *		pure core's plain structs, and the names to turn its answer back
 *		into rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_PASS_INPUT_H
#define FAIRSHARE_PASS_INPUT_H

#include "scheduler/scheduler.h"

/* What each FsShare of the input is in the catalog. */
typedef struct PassShareInfo
{
	const char *queue;			/* job queue name */
	const char *name;			/* share identifier, quota share, or NULL (FIFO) */
	FsPolicyKind policy;
} PassShareInfo;

/* A loaded job's name and share, for messages (indexed like the input). */
typedef struct PassJobInfo
{
	int64		job_id;
	const char *job_name;
	const char *submitted_by;	/* "<role name>:<role oid>"; NULL for jobs holding capacity */
	int			share;
	int			index;			/* in its share's runnable[], or -1 if running */
} PassJobInfo;

typedef struct PassWorld
{
	MemoryContext cxt;			/* everything below lives here */
	FsAllocator allocator;		/* palloc in cxt, no free: cxt is reset */
	FsInput		input;
	PassShareInfo *shares;		/* [input.n_shares] */
	int			n_jobs;
	PassJobInfo *jobs;			/* runnable then running, sorted by job_id */
	HTAB	   *type_ids;		/* instance type name -> id */
	HTAB	   *share_ids;		/* "queue\x1fshare" -> share index */
} PassWorld;

/*
 * A pass's first round loads about PASS_LOAD_MAX RUNNABLE jobs at most,
 * however many shares there are: each share's prefix is cut to
 * PASS_LOAD_MAX / shares, but never below PASS_PREFIX_MIN.  Up to 256
 * shares schedule()'s head of 64 is not cut; the dispatcher's passes, which
 * ask for 256, load 163 a share at 100 shares; at 1,000 shares every pass
 * loads 16 a share (16,000 rows, not 64,000 or 256,000: loading them was
 * most of a steady pass, bench/scale); at 10,000 shares 8 a share (fair
 * shares in a bounded pass fewer, below).  A share that places all it was
 * given is loaded again, deeper and uncut, by the pass's next round
 * (schedule.c: `deeper' below), so a burst into few shares still fills.
 */
#define PASS_LOAD_MAX	16384
#define PASS_PREFIX_MIN	8

/*
 * In a bounded pass (the dispatcher's) fair shares are cut shorter, to
 * PASS_FAIR_LOAD_MAX / shares but never below PASS_FAIR_PREFIX_MIN (4 a
 * share at 1,000 shares): each pass gives the next job to the share with
 * the least usage, so with many shares each takes one or two a pass, and
 * loading 16 was a third of a burst's pass.  A share far below the others
 * uses its head up and is loaded deeper in the next round, as above; a
 * bounded pass that spent half its budget ends instead and the next pass
 * follows.  A pass without a limit keeps the longer head: it must go on,
 * and each deeper round reads the world again (a churn pass at 1,000
 * shares took 190 ms with 4, 95-115 with 16).  Quota shares are not cut
 * so: a share below its guarantee takes job after job up to it.
 */
#define PASS_FAIR_LOAD_MAX		4096
#define PASS_FAIR_PREFIX_MIN	4

/*
 * And of a fair-share queue's shares a bounded pass reads a head only for
 * those its turn serves first: the `budget' (at least PASS_FAIR_DEEP_SHARES)
 * whose first jobs have the lowest keys (fs_fair_first_keys).  The others
 * keep the first job the skip scan that finds the shares already read, and
 * count as having more: the turn stops where one of them would be served a
 * second time, and the next round loads it deeper.  Placements go to the
 * shares with the least usage, a job or two each, so a pass that reaches
 * the shares beyond has spent most of its budget; and a head read is an
 * index probe per share (at 1,000 shares heads of 4 for all took 16 ms, for
 * 300 of them 6.6).
 */
#define PASS_FAIR_DEEP_SHARES	64

/*
 * Load the world as of now.  Every share gets a prefix of `prefix' RUNNABLE
 * jobs (cut as above, but to no fewer than `least_prefix', at least
 * PASS_PREFIX_MIN; not cut for the shares in `deeper'; plus any nominated
 * ones); the shares of `focus_queue'
 * (if not NULL; only its share `focus_share' if that is not NULL) get
 * `focus_prefix' if that is larger, uncut.  The shares of a FIFO queue are named after the queue.
 * `budget': what is left of a pass's decision limit (fair shares are cut
 * shorter, above), -1 for a pass without one.
 * Must be called inside SPI_connect().
 */
extern PassWorld *fairshare_load_world(int prefix, const char *focus_queue, const char *focus_share,
								int focus_prefix, bool collect_wait_reasons, HTAB *deeper,
								int least_prefix, int budget);

/*
 * Record how many jobs that can never fit (MISCONFIGURED decisions) each
 * share of `w' had in the head read for it, misconfigured[] by share index:
 * the backend reads that many more jobs of the share in its next passes
 * (pass_input.c, misconfigured_heads).  grew[s] is set when share s had
 * more of them than it was read past; returns whether any share did.  At
 * most PASS_MISCONFIGURED_MAX a share.
 */
#define PASS_MISCONFIGURED_MAX	65536
extern bool fairshare_note_misconfigured(const PassWorld *w, const int *misconfigured, bool *grew);

/*
 * Record the fair shares of `w' that were read to their first job only and
 * whose first job got no decision (decided[] by share index): the backend
 * reads them a head in its next passes while that job stands first, so
 * that a job behind it may back-fill.  True when one is new.
 */
extern bool fairshare_note_waiting_first_jobs(const PassWorld *w, const int *decided);

/*
 * Add the shares of `w' marked in marked[] (by share index) to `set', a set
 * that a later fairshare_load_world() takes as `deeper': those shares get
 * `prefix' jobs, uncut by PASS_LOAD_MAX.  A NULL set is made, in the
 * current memory context, when a share is marked.
 */
extern HTAB *fairshare_deeper_shares(HTAB *set, const PassWorld *w, const bool *marked);

/* Decide around jobs other transactions have locked (ids sorted); see the .c. */
extern void fairshare_world_treat_as_busy(PassWorld *world, const int64 *ids, int n_ids);

/* Check the world's input and run one pass of the core over it. */
extern FsResult *fairshare_run_core(PassWorld *world);

extern int	fairshare_world_queue(const PassWorld *world, const char *name);
extern const PassJobInfo *fairshare_world_job(const PassWorld *world, int64 job_id);
extern const FsRunningJob *fairshare_world_running(const PassWorld *world, int64 job_id);
extern const char *fairshare_world_share_label(const PassWorld *world, int share);
extern void fairshare_world_free(PassWorld *world);

/* The core's decision or wait reason as a sentence, palloc'd. */
extern char *fairshare_decision_text(const PassWorld *world, const FsDecision *decision);
extern char *fairshare_wait_text(const PassWorld *world, const FsWaitReason *reason);

#endif							/* FAIRSHARE_PASS_INPUT_H */
