/*-------------------------------------------------------------------------
 *
 * datums.h
 *		Small builders of SQL values every layer needs: arrays of int4,
 *		int8, text and jsonb for parameters, and string members of a jsonb object.
 *
 * A bottom layer: it includes nothing of fairshare's.  One definition of
 * each, so that no file carries its own copy.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FAIRSHARE_DATUMS_H
#define FAIRSHARE_DATUMS_H

/* An int4[], int8[], text[] or jsonb[] of n elements, as a Datum for a parameter. */
extern Datum fairshare_int4_array(Datum *elems, int n);
extern Datum fairshare_int8_array(Datum *elems, int n);
extern Datum fairshare_text_array(Datum *elems, int n);
extern Datum fairshare_jsonb_array(Datum *elems, int n);

/* "key": "value" into the jsonb object being built; a NULL value is null. */
extern void fairshare_jsonb_push_string(JsonbParseState **state, const char *key, const char *value);

#endif							/* FAIRSHARE_DATUMS_H */
