/*-------------------------------------------------------------------------
 *
 * cron_jobs.c
 *		Keep fairshare's pg_cron jobs in step with the extension.
 *
 * pg_cron keeps its jobs in cron.job of one database (cron.database_name),
 * and its functions exist only there, while fairshare may be created in any
 * database.  So the jobs are written by a short-lived dynamic background
 * worker connected to the cron database: the backend that created or
 * dropped the extension starts it, waits for it (at most
 * FS_CRON_TIMEOUT_MS) and reports what happened.  Request and answer travel
 * in a small dynamic shared memory segment.
 *
 * When: at the commit of the transaction that created or dropped
 * fairshare, from a pre-commit callback, so that a CREATE or DROP that is
 * rolled back leaves cron.job as it was.  The callback looks at what the
 * transaction did, not at what it asked for: if fairshare exists at commit
 * and the install script ran, the jobs must exist; if fairshare is gone and
 * a DROP that could have removed it ran, they must not.  The install script
 * asks for the first (fairshare._housekeeping_sync()); an event trigger on
 * DROP EXTENSION, DROP SCHEMA and DROP OWNED asks for the second.  An
 * update script asks only that the jobs that exist be brought up to date
 * (fairshare._housekeeping_update()).  A
 * savepoint rolled back, or a drop and a create in one transaction, thus end
 * right.  The worker's own transaction commits just before ours; nothing
 * makes the two atomic, but only a failure of our commit itself (after
 * every check has passed) can separate them.
 *
 * Job names are "fairshare:<database oid>:<task>" (cron.job.jobname is a
 * name, 63 bytes, too short for "<database name>" in general), so the jobs
 * of a database are found whatever it is called now.  Each run of the
 * worker also repairs what no event trigger sees: it renames the database
 * in the jobs of a database that was renamed, and removes the jobs of
 * databases that no longer exist (DROP DATABASE).  A job that exists is
 * otherwise left alone, so a schedule changed with cron.alter_job() stays.
 *
 * What this file must never do: fail a CREATE or DROP EXTENSION because
 * pg_cron is missing, not preloaded or unreachable (a NOTICE or WARNING
 * says what to do instead); leave a worker running after the backend gave
 * up waiting for it; or build SQL from names (every query has parameters).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_extension.h"
#include "commands/dbcommands.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"

#include "statement.h"
#include "tables/drop_guard.h"
#include "worker_session.h"

PG_FUNCTION_INFO_V1(fairshare_housekeeping_sync);
PG_FUNCTION_INFO_V1(fairshare_housekeeping_update);
PG_FUNCTION_INFO_V1(fairshare_housekeeping_on_drop);
PG_FUNCTION_INFO_V1(fairshare_schedule_housekeeping);
PG_FUNCTION_INFO_V1(fairshare_unschedule_housekeeping);

PGDLLEXPORT void fs_housekeeping_cron_worker(Datum main_arg);

/* How long a backend waits for the registration worker. */
#define FS_CRON_TIMEOUT_MS	30000

/*
 * The jobs every database with fairshare gets.
 *
 * pg_cron runs a command as the extension's owner, a superuser, in the
 * database it names by name, in a session that takes the database's
 * settings.  Two things follow:
 *
 * - The database's owner, who need not be a superuser, may set its
 *   search_path with ALTER DATABASE and put a schema of its own before
 *   pg_catalog.  So every name in a command is schema-qualified, pg_catalog's
 *   too: an unqualified count() would be the owner's aggregate, run as the
 *   superuser.  The functions called pin their own search_path.
 * - A database's name outlives it: a role with CREATEDB that owns the
 *   database may drop it (or rename it) and create another of the same
 *   name, with a "fairshare" schema of its own whose record_utilization()
 *   pg_cron would then run as the superuser.  So each command first checks
 *   that it runs in the database whose OID its job is named for, with
 *   nothing but pg_catalog, and raises an error otherwise; the body runs
 *   only then (a DO block, so that nothing of the body is even planned
 *   before the check).
 *
 * body: the statement the job runs; the command wraps it in the check
 * (fs_cron_command()).  replaces: earlier texts of the command, rewritten
 * where a job still has one (a job whose command someone changed is left
 * alone).
 */
typedef struct FsCronTask
{
	const char *task;
	const char *schedule;
	const char *body;
	const char *replaces[2];
} FsCronTask;

static const FsCronTask fs_cron_tasks[] = {
	{"record_utilization", "* * * * *", "PERFORM fairshare.record_utilization()",
	{"SELECT fairshare.record_utilization()", NULL}},
	{"evaluate_alerts", "* * * * *", "PERFORM pg_catalog.count(*) FROM fairshare.evaluate_alerts()",
	{"SELECT count(*) FROM fairshare.evaluate_alerts()", "SELECT pg_catalog.count(*) FROM fairshare.evaluate_alerts()"}},
	{"apply_retention", "17 3 * * *", "CALL fairshare.apply_retention()",
	{"CALL fairshare.apply_retention()", NULL}},
};

#define FS_CRON_NTASKS	lengthof(fs_cron_tasks)

/*
 * The command of task t for the database with OID database_id: t's body,
 * run only in that database, and only while extension fairshare is
 * installed there.  Both, since neither alone tells the database apart:
 * PostgreSQL 15 lets any role with CREATEDB give a new database a free OID
 * of its choosing (CREATE DATABASE ... OID), so the owner of a dropped
 * database can make another with its name and OID; and a job may outlive
 * its extension (an unschedule that failed at DROP EXTENSION).  Only a
 * superuser can create fairshare (it is not trusted), and CREATE EXTENSION
 * refuses a schema fairshare that anyone else made.  The apply_retention
 * procedure commits batch by batch, which a CALL in a DO block run as a
 * statement of its own may do.
 */
static char *
fs_cron_command(const FsCronTask *t, Oid database_id)
{
	return psprintf("DO $fairshare$ BEGIN "
					"IF (SELECT d.oid FROM pg_catalog.pg_database d "
					"WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()) "
					"OPERATOR(pg_catalog.<>) %u::pg_catalog.oid THEN "
					"RAISE EXCEPTION 'fairshare: this pg_cron job is for the database with OID %u, not for "
					"database %%, which has another', pg_catalog.current_database() "
					"USING ERRCODE = '55000', HINT = 'Remove it: SELECT cron.unschedule(jobid) FROM cron.job "
					"WHERE jobname LIKE ''fairshare:%u:%%''; then run SELECT fairshare.schedule_housekeeping() "
					"in the database that has fairshare.'; "
					"END IF; "
					"IF NOT EXISTS (SELECT FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
					"ON n.oid OPERATOR(pg_catalog.=) e.extnamespace "
					"WHERE e.extname OPERATOR(pg_catalog.=) 'fairshare' AND n.nspname OPERATOR(pg_catalog.=) 'fairshare') THEN "
					"RAISE EXCEPTION 'fairshare: this pg_cron job is for extension fairshare, which database %% "
					"does not have', pg_catalog.current_database() "
					"USING ERRCODE = '55000', HINT = 'Remove it: SELECT cron.unschedule(jobid) FROM cron.job "
					"WHERE jobname LIKE ''fairshare:%u:%%''.'; "
					"END IF; %s; END $fairshare$",
					database_id, database_id, database_id, database_id, t->body);
}

/*
 * The commands fairshare has written for task t: command (today's) and the
 * earlier texts it replaces, as a text[] for find_job_stmt.
 */
static Datum
fs_cron_commands_array(const FsCronTask *t, const char *command)
{
	Datum		texts[1 + lengthof(t->replaces)];
	int			n = 0;

	texts[n++] = CStringGetTextDatum(command);
	for (int i = 0; i < lengthof(t->replaces); i++)
		if (t->replaces[i] != NULL)
			texts[n++] = CStringGetTextDatum(t->replaces[i]);
	return PointerGetDatum(construct_array(texts, n, TEXTOID, -1, false, TYPALIGN_INT));
}

typedef enum FsCronAction
{
	FS_CRON_SCHEDULE,			/* make the jobs of a database exist */
	FS_CRON_UPDATE,				/* bring only those that exist up to date */
	FS_CRON_UNSCHEDULE			/* remove them */
} FsCronAction;

typedef enum FsCronOutcome
{
	FS_CRON_NOT_RUN = 0,		/* the worker did not get to the end */
	FS_CRON_DONE,
	FS_CRON_NO_PRELOAD,			/* pg_cron is not in shared_preload_libraries */
	FS_CRON_NO_CRON_DATABASE,	/* cron.database_name names no database */
	FS_CRON_NO_EXTENSION,		/* pg_cron is not created in that database */
	FS_CRON_NO_WORKER,			/* no background worker slot */
	FS_CRON_TIMEOUT,
	FS_CRON_FAILED				/* the worker raised an error: message */
} FsCronOutcome;

/* The request, in dynamic shared memory. */
typedef struct FsCronRequest
{
	/* written by the requesting backend */
	FsCronAction action;
	Oid			database_id;	/* whose jobs */
	Oid			owner_id;		/* role the jobs run as (not for FS_CRON_UNSCHEDULE) */
	char		cron_database[NAMEDATALEN];

	/* written by the worker; read once it has exited */
	FsCronOutcome outcome;
	int			created;		/* jobs scheduled now */
	int			kept;			/* jobs that were there already */
	int			removed;		/* jobs of this database unscheduled */
	int			stale_removed;	/* jobs of dropped databases unscheduled */
	int			foreign;		/* other roles' jobs of fairshare's names, left alone */
	char		message[1024];
} FsCronRequest;

/* What this transaction asked for, acted on at commit. */
static bool fs_xact_callback_registered = false;
static bool fs_pending_schedule = false;
static bool fs_pending_update = false;
static bool fs_pending_unschedule = false;


/* ---------------------------------------------------------------------
 * The worker, connected to the cron database
 * ---------------------------------------------------------------------
 */

/* The worker's statements (cron.* exists only once pg_cron_exists_stmt says so). */
static FairshareStatement pg_cron_exists_stmt = {
	.what = "look for pg_cron",
	.sql = "SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_cron'",
	.read_only = true,
};
static FairshareStatement stale_jobs_stmt = {
	.what = "find the cron jobs of dropped databases",
	.sql = "SELECT jobid FROM cron.job j "
		"WHERE j.jobname OPERATOR(pg_catalog.~) '^fairshare:[0-9]+:' "
		"AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_database d "
		"WHERE d.oid::pg_catalog.text OPERATOR(pg_catalog.=) "
		"pg_catalog.split_part(j.jobname::pg_catalog.text, ':', 2))",
	.read_only = true,
};
static FairshareStatement database_jobs_stmt = {
	.what = "find the database's cron jobs",
	.sql = "SELECT jobid FROM cron.job "
		"WHERE pg_catalog.starts_with(jobname::pg_catalog.text, $1)",
	.argtypes = {TEXTOID},
	.read_only = true,
};
/*
 * Find fairshare's job of a name.  pg_cron keeps job names unique per
 * username only, and any role allowed to use pg_cron may schedule a job of
 * that name under its own: such a job is not fairshare's, and this worker
 * (a superuser) must never move it to fairshare's database or make it run
 * as the extension's owner -- its command would then run as a superuser.
 * So a job is fairshare's when it runs as the owner ($2; only the owner or
 * a superuser can have scheduled or changed it), or when its command is one
 * fairshare wrote ($3: after the owner was renamed, the job keeps the old
 * name, which another role may have taken since -- and with it the right
 * to change the job's command).  The owner's own job comes first.  The row
 * is locked until the worker commits: a cron.alter_job() of its command by
 * the role it runs as waits, and afterwards no longer finds it that role's.
 */
static FairshareStatement find_job_stmt = {
	.what = "find fairshare's cron job",
	.sql = "SELECT jobid, database, command, username FROM cron.job "
		"WHERE jobname::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
		"AND (username OPERATOR(pg_catalog.=) $2 OR command OPERATOR(pg_catalog.=) ANY ($3)) "
		"ORDER BY username OPERATOR(pg_catalog.=) $2 DESC, jobid LIMIT 1 FOR UPDATE",
	.argtypes = {TEXTOID, TEXTOID, TEXTARRAYOID},
};
/*
 * Jobs of that name that are not fairshare's, by the same rule, and other
 * roles' copies of fairshare's command beside the owner's own job: left
 * alone.
 */
static FairshareStatement foreign_jobs_stmt = {
	.what = "find other roles' cron jobs of fairshare's job name",
	.sql = "SELECT jobid, username FROM cron.job j "
		"WHERE jobname::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
		"AND username OPERATOR(pg_catalog.<>) $2 "
		"AND (command OPERATOR(pg_catalog.<>) ALL ($3) OR EXISTS (SELECT FROM cron.job o "
		"WHERE o.jobname OPERATOR(pg_catalog.=) j.jobname AND o.username OPERATOR(pg_catalog.=) $2))",
	.argtypes = {TEXTOID, TEXTOID, TEXTARRAYOID},
	.read_only = true,
};
static FairshareStatement schedule_stmt = {
	.what = "schedule a cron job",
	.sql = "SELECT cron.schedule_in_database($1, $2, $3, $4, $5, true)",
	.argtypes = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID},
};
static FairshareStatement move_job_stmt = {
	.what = "move a cron job to the renamed database",
	.sql = "SELECT cron.alter_job(job_id => $1, database => $2)",
	.argtypes = {INT8OID, TEXTOID},
};
static FairshareStatement change_user_stmt = {
	.what = "run a cron job as the extension owner's new name",
	.sql = "SELECT cron.alter_job(job_id => $1, username => $2, "
		"schedule => CASE WHEN r.taken THEN $3 END, active => CASE WHEN r.taken THEN true END) "
		"FROM (SELECT EXISTS (SELECT FROM pg_catalog.pg_roles "
		"WHERE rolname OPERATOR(pg_catalog.=) $4) AS taken) r",
	.argtypes = {INT8OID, TEXTOID, TEXTOID, TEXTOID},
};
static FairshareStatement rewrite_command_stmt = {
	.what = "rewrite a cron job's command",
	.sql = "SELECT cron.alter_job(job_id => $1, command => $2)",
	.argtypes = {INT8OID, TEXTOID},
};
static FairshareStatement unschedule_stmt = {
	.what = "unschedule a cron job",
	.sql = "SELECT cron.unschedule($1)",
	.argtypes = {INT8OID},
};

/* Unschedule every job whose id the last query returned in column 1. */
static int
fs_unschedule_selected(void)
{
	uint64		n = SPI_processed;
	int64	   *ids;
	bool		isnull;

	if (n == 0)
		return 0;
	ids = palloc(sizeof(int64) * n);
	for (uint64 i = 0; i < n; i++)
		ids[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
											 SPI_tuptable->tupdesc, 1, &isnull));
	for (uint64 i = 0; i < n; i++)
	{
		Datum		values[1] = {Int64GetDatum(ids[i])};

		fairshare_run_statement(&unschedule_stmt, values, NULL);
	}
	return (int) n;
}

/*
 * Make cron.job match the request.  Runs inside the worker's transaction;
 * errors propagate to the caller.
 */
static FsCronOutcome
fs_cron_apply(FsCronRequest *req)
{
	char	   *database;
	char	   *owner;
	char		prefix[NAMEDATALEN];

	if (fairshare_run_statement(&pg_cron_exists_stmt, NULL, NULL) == 0)
		return FS_CRON_NO_EXTENSION;

	/* Jobs of databases that were dropped: DROP DATABASE fires no trigger. */
	fairshare_run_statement(&stale_jobs_stmt, NULL, NULL);
	req->stale_removed = fs_unschedule_selected();

	snprintf(prefix, sizeof(prefix), "fairshare:%u:", req->database_id);

	if (req->action == FS_CRON_UNSCHEDULE)
	{
		Datum		values[1] = {CStringGetTextDatum(prefix)};

		fairshare_run_statement(&database_jobs_stmt, values, NULL);
		req->removed = fs_unschedule_selected();
		return FS_CRON_DONE;
	}

	database = get_database_name(req->database_id);
	if (database == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_DATABASE),
				 errmsg("database with OID %u does not exist", req->database_id)));
	owner = GetUserNameFromId(req->owner_id, false);

	for (int i = 0; i < FS_CRON_NTASKS; i++)
	{
		const FsCronTask *t = &fs_cron_tasks[i];
		char	   *jobname = psprintf("%s%s", prefix, t->task);
		char	   *command = fs_cron_command(t, req->database_id);
		Datum		findvalues[3] = {
			CStringGetTextDatum(jobname),
			CStringGetTextDatum(owner),
			fs_cron_commands_array(t, command),
		};
		bool		found;

		fairshare_run_statement(&foreign_jobs_stmt, findvalues, NULL);
		for (uint64 f = 0; f < SPI_processed; f++)
		{
			bool		isnull;
			long long	foreign_id = (long long) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[f],
																			   SPI_tuptable->tupdesc, 1, &isnull));

			ereport(WARNING,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("pg_cron job %lld \"%s\" of role \"%s\" is not fairshare's, and is left alone",
							foreign_id, jobname, SPI_getvalue(SPI_tuptable->vals[f], SPI_tuptable->tupdesc, 2)),
					 errdetail("Its name is one fairshare gives its own jobs, but it neither runs as "
							   "the extension's owner nor runs a command fairshare wrote; "
							   "DROP EXTENSION fairshare removes it with fairshare's own."),
					 errhint("Remove it if nobody needs it: SELECT cron.unschedule(%lld);", foreign_id)));
			req->foreign++;
		}
		found = fairshare_run_statement(&find_job_stmt, findvalues, NULL) > 0;

		/* ALTER EXTENSION UPDATE: a job the operator removed stays removed. */
		if (!found && req->action == FS_CRON_UPDATE)
			continue;
		if (!found)
		{
			Datum		values[5] = {
				CStringGetTextDatum(jobname),
				CStringGetTextDatum(t->schedule),
				CStringGetTextDatum(command),
				CStringGetTextDatum(database),
				CStringGetTextDatum(owner),
			};

			fairshare_run_statement(&schedule_stmt, values, NULL);
			req->created++;
		}
		else
		{
			bool		isnull;
			Datum		jobid = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
			char	   *jobdb = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
			char	   *jobcommand = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
			char	   *username = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);

			/* The database was renamed since the job was scheduled. */
			if (jobdb == NULL || strcmp(jobdb, database) != 0)
			{
				Datum		values[2] = {jobid, CStringGetTextDatum(database)};

				fairshare_run_statement(&move_job_stmt, values, NULL);
			}

			/*
			 * The owner was renamed since: pg_cron runs a job as the role of
			 * its username, so under the old name the job would fail, or run
			 * as whichever role took that name since.  A role that has that
			 * name now (or scheduled a job of this name with fairshare's
			 * command) may have paused the job or changed its schedule: it
			 * then gets fairshare's again.  Where no role has the name, the
			 * schedule the operator gave it stays.
			 */
			if (username == NULL || strcmp(username, owner) != 0)
			{
				Datum		values[4] = {jobid, CStringGetTextDatum(owner), CStringGetTextDatum(t->schedule),
										 CStringGetTextDatum(username ? username : "")};

				fairshare_run_statement(&change_user_stmt, values, NULL);
			}
			/* Scheduled by an earlier version, with a command since made safe. */
			if (jobcommand != NULL &&
				((t->replaces[0] != NULL && strcmp(jobcommand, t->replaces[0]) == 0) ||
				 (t->replaces[1] != NULL && strcmp(jobcommand, t->replaces[1]) == 0)))
			{
				Datum		values[2] = {jobid, CStringGetTextDatum(command)};

				fairshare_run_statement(&rewrite_command_stmt, values, NULL);
			}
			req->kept++;
		}
	}
	return FS_CRON_DONE;
}

/*
 * Entry point of the registration worker.  main_arg is the handle of the
 * request's shared memory segment.  The worker connects to the cron
 * database as the bootstrap superuser (cron.schedule_in_database needs a
 * superuser to schedule jobs for another role); the jobs themselves run as
 * the role in the request.
 */
void
fs_housekeeping_cron_worker(Datum main_arg)
{
	dsm_segment *seg;
	FsCronRequest *req;
	FsCronOutcome outcome;
	MemoryContext worker_context = CurrentMemoryContext;

	BackgroundWorkerUnblockSignals();

	CurrentResourceOwner = ResourceOwnerCreate(NULL, "fairshare pg_cron registration");
	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not map the request for fairshare's pg_cron registration"),
				 errdetail("The backend that asked for it no longer waits for it.")));
	req = dsm_segment_address(seg);

	/*
	 * A superuser session in the cron database, where fairshare need not
	 * exist (so no "fairshare" schema on the path: anyone allowed to create
	 * one there would own it): built-ins first, temporary objects last.
	 */
	fairshare_worker_connect(req->cron_database, "pg_catalog, pg_temp", "fairshare pg_cron registration");
	pgstat_report_appname("fairshare pg_cron registration");

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "fairshare: updating pg_cron jobs");

	PG_TRY();
	{
		outcome = fs_cron_apply(req);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(worker_context);
		edata = CopyErrorData();
		strlcpy(req->message, edata->message, sizeof(req->message));
		pg_write_barrier();
		req->outcome = FS_CRON_FAILED;
		PG_RE_THROW();
	}
	PG_END_TRY();

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);

	/* Only a committed change is reported as done. */
	pg_write_barrier();
	req->outcome = outcome;
	dsm_detach(seg);
	proc_exit(0);
}


/* ---------------------------------------------------------------------
 * The requesting backend
 * ---------------------------------------------------------------------
 */

/* Is pg_cron in shared_preload_libraries?  It works nowhere else. */
static bool
fs_cron_preloaded(void)
{
	const char *setting = GetConfigOption("shared_preload_libraries", true, false);
	char	   *raw;
	List	   *libs;
	ListCell   *lc;
	bool		found = false;

	if (setting == NULL)
		return false;
	raw = pstrdup(setting);
	if (!SplitDirectoriesString(raw, ',', &libs))
		return false;
	foreach(lc, libs)
	{
		const char *lib = lfirst(lc);
		const char *base = last_dir_separator(lib);

		base = base ? base + 1 : lib;
		if (strcmp(base, "pg_cron") == 0 || strcmp(base, "pg_cron" DLSUFFIX) == 0)
			found = true;
	}
	return found;
}

static const char *
fs_cron_database(void)
{
	const char *db = GetConfigOption("cron.database_name", true, false);

	return (db != NULL && db[0] != '\0') ? db : "postgres";
}

/* The owner of extension fairshare, or InvalidOid. */
static Oid
fs_extension_owner(Oid extension_id)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			owner = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(extension_id));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		owner = ((Form_pg_extension) GETSTRUCT(tuple))->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return owner;
}

/*
 * Run one request through a registration worker and wait for it.  *result
 * gets the worker's answer (or the reason it did not run).
 */
static void
fs_cron_run(FsCronAction action, Oid owner_id, FsCronRequest *result)
{
	dsm_segment *seg;
	FsCronRequest *req;
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	TimestampTz deadline;
	bool		timed_out = false;

	memset(result, 0, sizeof(*result));
	result->action = action;
	result->database_id = MyDatabaseId;
	result->owner_id = owner_id;
	strlcpy(result->cron_database, fs_cron_database(), NAMEDATALEN);

	if (!fs_cron_preloaded())
	{
		result->outcome = FS_CRON_NO_PRELOAD;
		return;
	}
	if (!OidIsValid(get_database_oid(result->cron_database, true)))
	{
		result->outcome = FS_CRON_NO_CRON_DATABASE;
		return;
	}

	seg = dsm_create(sizeof(FsCronRequest), 0);
	req = dsm_segment_address(seg);
	memcpy(req, result, sizeof(*req));

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "fairshare", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "fs_housekeeping_cron_worker", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN,
			 "fairshare pg_cron registration for database %u", MyDatabaseId);
	strlcpy(worker.bgw_type, "fairshare pg_cron registration", BGW_MAXLEN);
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	worker.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		dsm_detach(seg);
		result->outcome = FS_CRON_NO_WORKER;
		return;
	}

	/*
	 * Wait on our latch (the postmaster sets it when the worker starts and
	 * stops), bounded.  No CHECK_FOR_INTERRUPTS here: at commit a cancel
	 * would abort a transaction whose cron jobs were already changed.
	 */
	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), FS_CRON_TIMEOUT_MS);
	for (;;)
	{
		pid_t		pid;

		if (GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED)
			break;
		if (GetCurrentTimestamp() >= deadline)
		{
			TerminateBackgroundWorker(handle);
			timed_out = true;
			break;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 100L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}

	pg_read_barrier();
	memcpy(result, req, sizeof(*result));
	dsm_detach(seg);
	if (timed_out && result->outcome != FS_CRON_DONE)
		result->outcome = FS_CRON_TIMEOUT;
}

/* One line saying what the worker did. */
static char *
fs_cron_summary(const FsCronRequest *r)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (r->action == FS_CRON_SCHEDULE)
		appendStringInfo(&buf, "%d pg_cron jobs scheduled (in cron database \"%s\"), %d already there",
						 r->created, r->cron_database, r->kept);
	else if (r->action == FS_CRON_UPDATE)
		appendStringInfo(&buf, "%d pg_cron jobs brought up to date (in cron database \"%s\")",
						 r->kept, r->cron_database);
	else
		appendStringInfo(&buf, "%d pg_cron jobs removed (from cron database \"%s\")",
						 r->removed, r->cron_database);
	if (r->stale_removed > 0)
		appendStringInfo(&buf, "; %d jobs of dropped databases removed", r->stale_removed);
	if (r->foreign > 0)
		appendStringInfo(&buf, "; %d jobs of another role under fairshare's names left alone (the server log names them)",
						 r->foreign);
	return buf.data;
}

/*
 * Report a request that did not get done.  elevel is NOTICE or WARNING when
 * it must not stop the transaction (CREATE / DROP EXTENSION), ERROR when
 * the user asked for it by name.
 */
static void
fs_cron_report_problem(const FsCronRequest *r, int elevel)
{
	const char *what = r->action == FS_CRON_SCHEDULE ?
		"fairshare's housekeeping is not scheduled" :
		r->action == FS_CRON_UPDATE ?
		"fairshare's pg_cron jobs were not brought up to date" :
		"fairshare's pg_cron jobs were not removed";
	char	   *manual;

	if (r->action == FS_CRON_UPDATE)
		manual = psprintf("In database \"%s\", remove this database's jobs (SELECT cron.unschedule(jobid) "
						  "FROM cron.job WHERE jobname LIKE 'fairshare:%u:%%'), then run "
						  "SELECT fairshare.schedule_housekeeping() in this database to schedule them "
						  "with the current commands.",
						  r->cron_database, r->database_id);
	else if (r->action == FS_CRON_SCHEDULE)
		manual = pstrdup("Run SELECT fairshare.schedule_housekeeping() in this database once that is fixed; "
						 "until then call fairshare.record_utilization() and fairshare.evaluate_alerts() every minute "
						 "and fairshare.apply_retention() daily from another scheduler.");
	else
		manual = psprintf("In database \"%s\", run: SELECT cron.unschedule(jobid) FROM cron.job "
						  "WHERE jobname LIKE 'fairshare:%u:%%'",
						  r->cron_database, r->database_id);

	switch (r->outcome)
	{
		case FS_CRON_NO_PRELOAD:
			ereport(Max(elevel, NOTICE),
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("pg_cron is not loaded, so %s", what),
					 errdetail("shared_preload_libraries does not include pg_cron."),
					 errhint("Add pg_cron to shared_preload_libraries and restart the server. %s", manual)));
			break;
		case FS_CRON_NO_CRON_DATABASE:
			ereport(Max(elevel, NOTICE),
					(errcode(ERRCODE_UNDEFINED_DATABASE),
					 errmsg("database \"%s\" named by cron.database_name does not exist, so %s",
							r->cron_database, what),
					 errhint("%s", manual)));
			break;
		case FS_CRON_NO_EXTENSION:
			ereport(Max(elevel, NOTICE),
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("extension pg_cron is not installed in database \"%s\", so %s",
							r->cron_database, what),
					 errhint("Run CREATE EXTENSION pg_cron in database \"%s\". %s",
							 r->cron_database, manual)));
			break;
		case FS_CRON_NO_WORKER:
			ereport(Max(elevel, WARNING),
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start a background worker, so %s", what),
					 errhint("Raise max_worker_processes. %s", manual)));
			break;
		case FS_CRON_TIMEOUT:
			ereport(Max(elevel, WARNING),
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("gave up after %d s waiting for the pg_cron registration worker, so %s",
							FS_CRON_TIMEOUT_MS / 1000, what),
					 errhint("%s", manual)));
			break;
		case FS_CRON_FAILED:
			ereport(Max(elevel, WARNING),
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("%s: %s", what, r->message),
					 errhint("%s", manual)));
			break;
		case FS_CRON_NOT_RUN:
		case FS_CRON_DONE:
			ereport(Max(elevel, WARNING),
					(errcode(ERRCODE_EXTERNAL_ROUTINE_EXCEPTION),
					 errmsg("the pg_cron registration worker exited without an answer, so %s", what),
					 errhint("See the server log. %s", manual)));
			break;
	}
}

/*
 * At commit: compare what the transaction did with what it asked for and
 * bring cron.job in line.
 */
static void
fs_cron_sync_at_commit(bool schedule, bool update, bool unschedule)
{
	Oid			extension_id = get_extension_oid("fairshare", true);
	FsCronRequest r;

	if (OidIsValid(extension_id) && (schedule || update))
		fs_cron_run(schedule ? FS_CRON_SCHEDULE : FS_CRON_UPDATE, fs_extension_owner(extension_id), &r);
	else if (!OidIsValid(extension_id) && unschedule)
		fs_cron_run(FS_CRON_UNSCHEDULE, InvalidOid, &r);
	else
		return;

	/* Nothing can have been scheduled without pg_cron, so nothing is to change. */
	if (r.action != FS_CRON_SCHEDULE &&
		(r.outcome == FS_CRON_NO_PRELOAD || r.outcome == FS_CRON_NO_CRON_DATABASE ||
		 r.outcome == FS_CRON_NO_EXTENSION))
		return;

	if (r.outcome == FS_CRON_DONE)
		ereport(DEBUG1, (errmsg_internal("fairshare: %s", fs_cron_summary(&r))));
	else
		fs_cron_report_problem(&r, NOTICE);
}

/* Would a commit now have to change cron.job? */
static bool
fs_cron_sync_needed(void)
{
	bool		exists;

	if (!fs_pending_schedule && !fs_pending_update && !fs_pending_unschedule)
		return false;
	exists = OidIsValid(get_extension_oid("fairshare", true));
	return exists ? fs_pending_schedule || fs_pending_update : fs_pending_unschedule;
}

static void
fs_cron_xact_callback(XactEvent event, void *arg)
{
	bool		schedule = fs_pending_schedule;
	bool		update = fs_pending_update;
	bool		unschedule = fs_pending_unschedule;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (!schedule && !update && !unschedule)
				return;
			fs_pending_schedule = fs_pending_update = fs_pending_unschedule = false;
			fs_cron_sync_at_commit(schedule, update, unschedule);
			break;
		case XACT_EVENT_PRE_PREPARE:
			if (fs_cron_sync_needed())
			{
				fs_pending_schedule = fs_pending_update = fs_pending_unschedule = false;
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that created or dropped extension fairshare"),
						 errdetail("Its pg_cron jobs are scheduled or removed when the transaction commits.")));
			}
			fs_pending_schedule = fs_pending_update = fs_pending_unschedule = false;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			fs_pending_schedule = fs_pending_update = fs_pending_unschedule = false;
			break;
		default:
			break;
	}
}

static void
fs_request_sync(FsCronAction action)
{
	if (!fs_xact_callback_registered)
	{
		RegisterXactCallback(fs_cron_xact_callback, NULL);
		fs_xact_callback_registered = true;
	}
	if (action == FS_CRON_SCHEDULE)
		fs_pending_schedule = true;
	else if (action == FS_CRON_UPDATE)
		fs_pending_update = true;
	else
		fs_pending_unschedule = true;
}

/*
 * fairshare._housekeeping_sync(): called by the install script; the jobs
 * are scheduled when the transaction commits.
 */
Datum
fairshare_housekeeping_sync(PG_FUNCTION_ARGS)
{
	/* pg_upgrade carries cron.job over by itself. */
	if (!IsBinaryUpgrade)
		fs_request_sync(FS_CRON_SCHEDULE);
	PG_RETURN_VOID();
}

/*
 * fairshare._housekeeping_update(): called by an update script, which
 * creates it for the call and drops it again; the jobs that exist get the
 * current commands when the transaction commits, and none is added, since
 * one that is missing was removed on purpose (unschedule_housekeeping(),
 * or housekeeping run by another scheduler).
 */
Datum
fairshare_housekeeping_update(PG_FUNCTION_ARGS)
{
	if (!IsBinaryUpgrade)
		fs_request_sync(FS_CRON_UPDATE);
	PG_RETURN_VOID();
}

/*
 * fairshare._housekeeping_on_drop(): event trigger at ddl_command_start of
 * DROP EXTENSION, DROP SCHEMA and DROP OWNED, any of which may remove
 * fairshare.  Whether it did is decided at commit.  First, a drop of
 * fairshare while jobs are placed is refused (tables/drop_guard.c).
 */
Datum
fairshare_housekeeping_on_drop(PG_FUNCTION_ARGS)
{
	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("fairshare._housekeeping_on_drop() must be called as an event trigger")));
	fairshare_refuse_drop_while_placed(((EventTriggerData *) fcinfo->context)->parsetree);
	fs_request_sync(FS_CRON_UNSCHEDULE);
	PG_RETURN_VOID();
}

/* Only a superuser or the extension's owner may change its cron jobs. */
static Oid
fs_check_housekeeping_privilege(const char *function)
{
	Oid			extension_id = get_extension_oid("fairshare", false);
	Oid			owner = fs_extension_owner(extension_id);

	if (!superuser() && !has_privs_of_role(GetUserId(), owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for function %s", function),
				 errhint("Only a superuser or the owner of extension fairshare may change its pg_cron jobs.")));
	return owner;
}

/*
 * fairshare.schedule_housekeeping(): schedule the jobs now (for instance
 * once pg_cron has been set up after fairshare).  Errors if it cannot.
 */
Datum
fairshare_schedule_housekeeping(PG_FUNCTION_ARGS)
{
	Oid			owner = fs_check_housekeeping_privilege("schedule_housekeeping");
	FsCronRequest r;

	fs_cron_run(FS_CRON_SCHEDULE, owner, &r);
	if (r.outcome != FS_CRON_DONE)
		fs_cron_report_problem(&r, ERROR);
	PG_RETURN_TEXT_P(cstring_to_text(fs_cron_summary(&r)));
}

/*
 * fairshare.unschedule_housekeeping(): remove the jobs now, leaving the
 * extension in place (for those who run the housekeeping functions from
 * another scheduler).  CREATE EXTENSION or schedule_housekeeping() brings
 * them back.
 */
Datum
fairshare_unschedule_housekeeping(PG_FUNCTION_ARGS)
{
	FsCronRequest r;

	(void) fs_check_housekeeping_privilege("unschedule_housekeeping");
	fs_cron_run(FS_CRON_UNSCHEDULE, InvalidOid, &r);
	if (r.outcome != FS_CRON_DONE)
		fs_cron_report_problem(&r, ERROR);
	PG_RETURN_TEXT_P(cstring_to_text(fs_cron_summary(&r)));
}
