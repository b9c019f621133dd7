/*-------------------------------------------------------------------------
 *
 * create_gate.h
 *		A gate that every CreateTrainingJob try passes just before it is
 *		sent, so that the process owning a request engine can stop creates
 *		the engine would otherwise send on its own.
 *
 * The request engine (aws/sagemaker_client.c) sends a create some time
 * after its caller asked -- once pacing lets it start, and again after a
 * throttle or a 5xx, a backoff later.  The dispatcher may by then have a
 * reason to send nothing more: its fence (worker/fence.c) may find that
 * this node no longer leads its cluster.  It registers a gate; the engine
 * asks it before every try of a create and, when the gate says no, makes
 * the call final without sending it (FS_SM_RETRYABLE_EXHAUSTED, error type
 * "Fenced"), which the dispatcher handles as a create that got no usable
 * answer: looked up, and created again through the fence.  With no gate
 * registered -- every process but the dispatcher -- every create may go.
 *
 * The gate may wait (for a synchronous standby, say), and may raise an
 * ERROR or exit on an interrupt as fs_sm_wait() may; it must not touch
 * table data.
 *
 * This is the bottom of the layering: it includes nothing of fairshare's,
 * so that aws/ can ask without knowing who answers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_CREATE_GATE_H
#define FAIRSHARE_CREATE_GATE_H

typedef bool (*FairshareCreateGate) (void);

/* Register gate, replacing any; NULL unregisters. */
extern void fairshare_create_gate_register(FairshareCreateGate gate);

extern FairshareCreateGate fairshare_create_gate;

/* May a CreateTrainingJob try be sent now? */
static inline bool
fairshare_create_may_go(void)
{
	return fairshare_create_gate == NULL || fairshare_create_gate();
}

#endif							/* FAIRSHARE_CREATE_GATE_H */
