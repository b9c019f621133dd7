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
#include "utils/syscache.h"

#include "tables/lookup.h"

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

FairshareSavedUser
fairshare_become_catalog_owner(void)
{
	FairshareSavedUser saved;

	GetUserIdAndSecContext(&saved.user, &saved.sec_context);
	SetUserIdAndSecContext(fairshare_catalog_owner(), saved.sec_context | SECURITY_LOCAL_USERID_CHANGE);
	return saved;
}

void
fairshare_restore_user(FairshareSavedUser saved)
{
	SetUserIdAndSecContext(saved.user, saved.sec_context);
}

void
fairshare_require_visible_job(int64 job_id)
{
	Oid			t[1] = {INT8OID};
	Datum		v[1] = {Int64GetDatum(job_id)};

	if (SPI_execute_with_args("SELECT 1 FROM fairshare.jobs WHERE job_id = $1",
							  1, t, v, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read fairshare.jobs");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("job " INT64_FORMAT " does not exist", job_id),
				 errhint("A submitter sees only the jobs it submitted.")));
}
