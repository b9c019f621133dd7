/*-------------------------------------------------------------------------
 *
 * statement.h
 *		The one way fairshare's C code runs SQL: a statement prepared once
 *		per backend, kept (SPI_keepplan), and executed with parameters.
 *
 * Declare each statement where it is used, as a static FairshareStatement
 * with designated initializers, and run it with fairshare_run_statement()
 * inside SPI_connect()/SPI_finish():
 *
 *		static FairshareStatement drop_nomination = {
 *			.what = "drop a job's nomination",
 *			.sql = "UPDATE fairshare.jobs SET ... WHERE job_id = $1",
 *			.argtypes = {INT8OID},
 *		};
 *		...
 *		fairshare_run_statement(&drop_nomination, values, NULL);
 *
 * Values only ever travel as parameters: the SQL is a constant, never
 * built from data.  The plan is prepared at the first run in a backend and
 * kept for its life; PostgreSQL's plan cache re-plans it when what it
 * depends on changes (a table, a function, search_path).  Argument types
 * are listed until the first InvalidOid, so nothing counts them by hand.
 * An SPI failure is an error naming what the statement was for (the
 * "what") and the statement; errors raised by the SQL itself (a
 * constraint, a trigger) reach the caller as they are.
 *
 * fairshare_run_statement_as() runs a statement as another role, the way
 * the AWS Batch API runs an operation as its key's role: grants and
 * row-level security apply as to that role in SQL.
 *
 * A bottom layer: it includes nothing of fairshare's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_STATEMENT_H
#define FAIRSHARE_STATEMENT_H

#define FAIRSHARE_STATEMENT_MAX_ARGS	12

typedef struct FairshareStatement
{
	const char *what;			/* what it is for, as "could not <what>" */
	const char *sql;			/* a constant: parameters $1.. carry values */
	Oid			argtypes[FAIRSHARE_STATEMENT_MAX_ARGS]; /* until InvalidOid */
	bool		read_only;		/* SPI's read_only: no new snapshot */
	long		max_rows;		/* SPI's count: 0 for all rows */
	SPIPlanPtr	plan;			/* prepared at the first run, then kept */
} FairshareStatement;

/*
 * Run the statement with values (and nulls, SPI style: 'n' for a NULL, or
 * NULL when none is); returns SPI_processed.  The rows are in SPI_tuptable.
 */
extern uint64 fairshare_run_statement(FairshareStatement *st, Datum *values, const char *nulls);

/*
 * Run a SELECT whose rows are read once, in order: each row goes to fn as
 * the executor makes it and is never formed into SPI_tuptable.  Its values
 * and nulls (indexed from 0) are valid only during the call, as is what fn
 * allocates in the current memory context, which is reset after each row:
 * copy what is kept into a context of its own.  For the tens of thousands
 * of rows a scheduling pass reads, forming and deforming them again was a
 * tenth of the pass.  Returns the number of rows.
 */
typedef void (*FairshareRowFn) (void *arg, TupleDesc desc, Datum *values, bool *nulls);
extern uint64 fairshare_each_row(FairshareStatement *st, Datum *values, const char *nulls,
								 FairshareRowFn fn, void *arg);

/*
 * fairshare_run_statement() as role: the user id is switched to it for the run, as a
 * security-restricted operation (the SQL can neither SET ROLE back nor
 * leave session state such as a temporary table behind), and restored
 * afterwards, on an error too.  The plan is prepared as the caller, before
 * the switch.
 */
extern uint64 fairshare_run_statement_as(FairshareStatement *st, Oid role, Datum *values, const char *nulls);

#endif							/* FAIRSHARE_STATEMENT_H */
