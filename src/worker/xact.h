/*-------------------------------------------------------------------------
 *
 * xact.h
 *		The worker's short transactions: one around each unit of work, so
 *		that no transaction is ever open while a SageMaker call is in
 *		flight or while the worker waits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_WORKER_XACT_H
#define FAIRSHARE_WORKER_XACT_H

/*
 * Start a transaction with a snapshot and an SPI connection; what is shown
 * in pg_stat_activity meanwhile.
 */
extern void fairshare_xact_begin(const char *what);

/* Close the SPI connection and commit. */
extern void fairshare_xact_commit(void);

/*
 * In a PG_CATCH: log the ERROR (the same error in the same context at most
 * once a minute), clear it and roll its transaction back.  cxt is the
 * caller's own context, which outlives the transaction: it is current again
 * on return.
 */
extern void fairshare_xact_report_and_roll_back(MemoryContext cxt);

#endif							/* FAIRSHARE_WORKER_XACT_H */
