/*-------------------------------------------------------------------------
 *
 * lookup.h
 *		Finding fairshare's own tables, and its jobs as the caller sees them, from C.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_LOOKUP_H
#define FAIRSHARE_TABLES_LOOKUP_H

/* OID of fairshare.<relname>; errors if the extension is not installed. */
extern Oid	fairshare_catalog_relid(const char *relname);

/* The role that owns the fairshare catalog (fairshare.jobs). */
extern Oid	fairshare_catalog_owner(void);

/*
 * Acting as the catalog owner for a block, the way a SECURITY DEFINER
 * function would: after the caller's own permission checks, reads (or
 * writes) of tables the caller may not touch.  An ERROR in the block needs
 * no restore: transaction abort resets the user.
 */
typedef struct FairshareSavedUser
{
	Oid			user;
	int			sec_context;
} FairshareSavedUser;

extern FairshareSavedUser fairshare_become_catalog_owner(void);
extern void fairshare_restore_user(FairshareSavedUser saved);

/*
 * As the current user: may it see the job?  Row-level security answers
 * for a submitter; a job it may not see "does not exist".  Inside SPI.
 */
extern void fairshare_require_visible_job(int64 job_id);

#endif							/* FAIRSHARE_TABLES_LOOKUP_H */
