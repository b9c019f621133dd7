/*-------------------------------------------------------------------------
 *
 * create_gate.c
 *		The gate every CreateTrainingJob try passes (see create_gate.h): at
 *		most one registered per process.
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "create_gate.h"

FairshareCreateGate fairshare_create_gate = NULL;

void
fairshare_create_gate_register(FairshareCreateGate gate)
{
	fairshare_create_gate = gate;
}
