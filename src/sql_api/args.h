/*-------------------------------------------------------------------------
 *
 * args.h
 *		Argument checks shared by the SQL-callable job functions.
 *
 * The job functions are not STRICT: a STRICT function called with a NULL
 * returns NULL without running, so fairshare.terminate_job(42, NULL)
 * would quietly do nothing.  They call this instead, and say which
 * argument was missing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SQL_API_ARGS_H
#define FAIRSHARE_SQL_API_ARGS_H

#include "fmgr.h"

static inline void
fairshare_require_arg(FunctionCallInfo fcinfo, int argno, const char *function, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s of fairshare.%s() must not be NULL", argname, function)));
}

#endif							/* FAIRSHARE_SQL_API_ARGS_H */
