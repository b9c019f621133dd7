/*-------------------------------------------------------------------------
 *
 * xact.c
 *		The worker's short transactions (see xact.h): the skeleton of
 *		PostgreSQL's worker_spi around each unit of work.
 *
 * After each, the worker reports its table statistics
 * (pgstat_report_stat), as a backend does when it goes idle: a worker that
 * never does keeps them to itself until it exits, and autovacuum never
 * sees the rows it updates in fairshare.jobs.  The call flushes at most
 * once a second; what it holds back goes with a later transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "common/hashfn.h"
#include "pgstat.h"
#include "utils/snapmgr.h"

#include "worker/log_throttle.h"
#include "worker/xact.h"

/*
 * The memory context current when the transaction began.  Committing
 * leaves TopMemoryContext current; what the caller allocates after it
 * belongs in the caller's own (per-turn) context, or it is never freed.
 */
static MemoryContext xact_caller_context = NULL;

void
fairshare_xact_begin(const char *what)
{
	xact_caller_context = CurrentMemoryContext;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, what);
}

void
fairshare_xact_commit(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (xact_caller_context != NULL)
		MemoryContextSwitchTo(xact_caller_context);
	xact_caller_context = NULL;	/* the caller may delete it afterwards */
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* A hash of text with its digits left out; 0 for NULL. */
static uint32
hash_without_digits(const char *text)
{
	char	   *kept;
	size_t		n = 0;
	uint32		h;

	if (text == NULL)
		return 0;
	kept = palloc(strlen(text) + 1);
	for (const char *p = text; *p; p++)
		if (*p < '0' || *p > '9')
			kept[n++] = *p;
	h = hash_bytes((const unsigned char *) kept, (int) n);
	pfree(kept);
	return h;
}

void
fairshare_xact_report_and_roll_back(MemoryContext cxt)
{
	ErrorData  *edata;
	char	   *kind;
	int			held;

	MemoryContextSwitchTo(cxt);

	/*
	 * The same ERROR in the same place (an outcome that cannot be written,
	 * met again at every poll) is logged once a minute; the next line says
	 * how many were held back.  Its kind is a hash of the message and the
	 * context without their digits: one kind for a trouble that every job
	 * meets, not one per job id or batch size, which would crowd the other
	 * kinds out of log_throttle.c's small table.
	 */
	edata = CopyErrorData();
	kind = psprintf("error:%08x:%08x", hash_without_digits(edata->message),
					hash_without_digits(edata->context));
	if (fs_log_due(kind, &held))
	{
		EmitErrorReport();
		if (held > 0)
			ereport(LOG,
					(errmsg("fairshare dispatcher: the error above was also met %d more times in the last minute and not logged", held)));
	}
	FreeErrorData(edata);
	pfree(kind);
	FlushErrorState();
	AbortCurrentTransaction();

	/*
	 * Rolling back leaves TopMemoryContext current: what the caller
	 * allocates next (the answers of the rest of its wait) must go to its
	 * own context again, or it is never freed.
	 */
	MemoryContextSwitchTo(cxt);
	xact_caller_context = NULL;
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
}
