/*-------------------------------------------------------------------------
 *
 * sql_api.h
 *		Helpers shared by the SQL-callable functions in src/sql_api/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_SQL_API_H
#define FAIRSHARE_SQL_API_H

/* The role that owns the fairshare catalog (fairshare.jobs). */
extern Oid	fairshare_catalog_owner(void);

#endif							/* FAIRSHARE_SQL_API_H */
