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

#endif							/* FAIRSHARE_DISPATCHER_H */
