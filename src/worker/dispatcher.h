/*-------------------------------------------------------------------------
 *
 * dispatcher.h
 *		The dispatcher background worker's entry points.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_DISPATCHER_H
#define FAIRSHARE_DISPATCHER_H

/* Register the dispatcher; from _PG_init while preloading only. */
extern void fairshare_register_dispatcher(void);

/* Run one statement in its own transaction; returns the rows it processed. */
extern uint64 fairshare_dispatcher_exec(const char *sql);

#endif							/* FAIRSHARE_DISPATCHER_H */
