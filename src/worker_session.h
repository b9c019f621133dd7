/*-------------------------------------------------------------------------
 *
 * worker_session.h
 *		Connect one of fairshare's background workers to its database with
 *		the server's settings, whatever the database's owner set.
 *
 * A bottom layer: it includes nothing of fairshare's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_WORKER_SESSION_H
#define FAIRSHARE_WORKER_SESSION_H

extern void fairshare_worker_connect(const char *database, const char *search_path,
									 const char *worker_name);

#endif							/* FAIRSHARE_WORKER_SESSION_H */
