/*-------------------------------------------------------------------------
 *
 * statement.c
 *		Statements prepared once per backend and run with parameters (see
 *		statement.h).  fairshare's C code runs SQL only through here:
 *		test/core/core.test fails on SPI_execute or SPI_prepare elsewhere.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "statement.h"

/* Prepare and keep the statement's plan, once per backend. */
static SPIPlanPtr
statement_plan(FairshareStatement *st)
{
	SPIPlanPtr	plan;
	int			nargs = 0;

	if (st->plan != NULL)
		return st->plan;
	while (nargs < FAIRSHARE_STATEMENT_MAX_ARGS && OidIsValid(st->argtypes[nargs]))
		nargs++;
	plan = SPI_prepare(st->sql, nargs, st->argtypes);
	if (plan == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("fairshare could not prepare the statement to %s: %s",
						st->what, SPI_result_code_string(SPI_result)),
				 errdetail_internal("Statement: %s", st->sql)));
	if (SPI_keepplan(plan) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("fairshare could not keep the statement to %s", st->what),
				 errdetail_internal("Statement: %s", st->sql)));
	st->plan = plan;
	return plan;
}

/* An SPI failure (ret < 0) is an error naming what the statement was for. */
static void
check_statement_result(const FairshareStatement *st, int ret)
{
	if (ret < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("fairshare could not %s: %s", st->what, SPI_result_code_string(ret)),
				 errdetail_internal("Statement: %s", st->sql)));
}

uint64
fairshare_run_statement(FairshareStatement *st, Datum *values, const char *nulls)
{
	check_statement_result(st, SPI_execute_plan(statement_plan(st), values, nulls,
												st->read_only, st->max_rows));
	return SPI_processed;
}

/*
 * A DestReceiver that hands each row to a FairshareRowFn, in a memory
 * context reset after every row: what the callback keeps, it copies into
 * its own.
 */
typedef struct RowReceiver
{
	DestReceiver pub;
	FairshareRowFn fn;
	void	   *arg;
	MemoryContext row_cxt;
} RowReceiver;

static bool
row_receive(TupleTableSlot *slot, DestReceiver *self)
{
	RowReceiver *receiver = (RowReceiver *) self;
	MemoryContext old;

	slot_getallattrs(slot);
	old = MemoryContextSwitchTo(receiver->row_cxt);
	receiver->fn(receiver->arg, slot->tts_tupleDescriptor, slot->tts_values, slot->tts_isnull);
	MemoryContextSwitchTo(old);
	MemoryContextReset(receiver->row_cxt);
	return true;
}

static void
row_startup(DestReceiver *self, int operation, TupleDesc desc)
{
}

static void
row_nothing(DestReceiver *self)
{
}

uint64
fairshare_each_row(FairshareStatement *st, Datum *values, const char *nulls,
				   FairshareRowFn fn, void *arg)
{
	SPIPlanPtr	plan = statement_plan(st);
	int			nargs = SPI_getargcount(plan);
	ParamListInfo params = makeParamList(nargs);
	RowReceiver receiver = {
		.pub = {.receiveSlot = row_receive, .rStartup = row_startup,
			.rShutdown = row_nothing, .rDestroy = row_nothing, .mydest = DestNone},
		.fn = fn,
		.arg = arg,
		.row_cxt = AllocSetContextCreate(CurrentMemoryContext, "fairshare row", ALLOCSET_SMALL_SIZES),
	};
	SPIExecuteOptions options = {
		.params = params,
		.read_only = st->read_only,
		.tcount = st->max_rows,
		.dest = &receiver.pub,
	};
	int			ret;

	for (int i = 0; i < nargs; i++)
	{
		params->params[i].ptype = SPI_getargtypeid(plan, i);
		params->params[i].isnull = nulls != NULL && nulls[i] == 'n';
		params->params[i].value = params->params[i].isnull ? (Datum) 0 : values[i];
		params->params[i].pflags = PARAM_FLAG_CONST;
	}
	ret = SPI_execute_plan_extended(plan, &options);
	MemoryContextDelete(receiver.row_cxt);
	check_statement_result(st, ret);
	return SPI_processed;
}

uint64
fairshare_run_statement_as(FairshareStatement *st, Oid role, Datum *values, const char *nulls)
{
	Oid			saved_user;
	int			saved_context;

	(void) statement_plan(st);
	GetUserIdAndSecContext(&saved_user, &saved_context);
	SetUserIdAndSecContext(role, saved_context | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		(void) fairshare_run_statement(st, values, nulls);
	}
	PG_FINALLY();
	{
		/* Not left to the abort: a caller that catches the error must be itself again. */
		SetUserIdAndSecContext(saved_user, saved_context);
	}
	PG_END_TRY();
	return SPI_processed;
}
