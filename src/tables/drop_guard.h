/*-------------------------------------------------------------------------
 *
 * drop_guard.h
 *		Refuse to drop fairshare while jobs are placed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_TABLES_DROP_GUARD_H
#define FAIRSHARE_TABLES_DROP_GUARD_H

/*
 * At the start of a DROP (the parse tree of the statement): when it drops
 * extension or schema fairshare and jobs are placed, raise an ERROR,
 * unless fairshare.drop_with_placed_jobs is on.
 */
extern void fairshare_refuse_drop_while_placed(Node *parsetree);

#endif							/* FAIRSHARE_TABLES_DROP_GUARD_H */
