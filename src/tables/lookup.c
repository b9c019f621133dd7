/*-------------------------------------------------------------------------
 *
 * lookup.c
 *		Finding fairshare's own tables, and its jobs as the caller sees them, from C.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "statement.h"
#include "tables/lookup.h"

PG_FUNCTION_INFO_V1(fairshare_current_role_oid);

/* fairshare._current_role_oid() RETURNS oid: the role current_user names. */
Datum
fairshare_current_role_oid(PG_FUNCTION_ARGS)
{
	PG_RETURN_OID(GetUserId());
}

Oid
fairshare_catalog_relid(const char *relname)
{
	return RangeVarGetRelid(makeRangeVar("fairshare", (char *) relname, -1), NoLock, false);
}

Oid
fairshare_catalog_owner(void)
{
	Oid			relid = fairshare_catalog_relid("jobs");
	HeapTuple	tuple;
	Oid			owner;

	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

int
fairshare_pin_search_path(void)
{
	int			nest_level = NewGUCNestLevel();

	(void) set_config_option("search_path", FAIRSHARE_SAFE_SEARCH_PATH,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nest_level;
}

void
fairshare_unpin_search_path(int nest_level)
{
	AtEOXact_GUC(true, nest_level);
}

FairshareSavedUser
fairshare_become_catalog_owner(void)
{
	FairshareSavedUser saved;
	Oid			owner = fairshare_catalog_owner();

	GetUserIdAndSecContext(&saved.user, &saved.sec_context);
	SetUserIdAndSecContext(owner, saved.sec_context |
						   SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
	saved.guc_nest_level = fairshare_pin_search_path();
	return saved;
}

void
fairshare_restore_user(FairshareSavedUser saved)
{
	fairshare_unpin_search_path(saved.guc_nest_level);
	SetUserIdAndSecContext(saved.user, saved.sec_context);
}

void
fairshare_require_visible_job(int64 job_id)
{
	/* as the caller: row-level security decides what it sees */
	static FairshareStatement visible_stmt = {
		.what = "look the job up",
		.sql = "SELECT 1 FROM fairshare.jobs WHERE job_id = $1",
		.argtypes = {INT8OID},
		.read_only = true,
		.max_rows = 1,
	};
	Datum		v[1] = {Int64GetDatum(job_id)};

	if (fairshare_run_statement(&visible_stmt, v, NULL) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job " INT64_FORMAT " does not exist", job_id),
				 errhint("A submitter sees only the jobs it submitted.")));
}
