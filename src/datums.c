/*-------------------------------------------------------------------------
 *
 * datums.c
 *		Builders of arrays and jsonb members (see datums.h).
 *
 *-------------------------------------------------------------------------
 */
#include "pg_prelude.h"

#include "utils/array.h"

#include "datums.h"

Datum
fairshare_int4_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}

Datum
fairshare_int8_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

Datum
fairshare_text_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

Datum
fairshare_jsonb_array(Datum *elems, int n)
{
	return PointerGetDatum(construct_array(elems, n, JSONBOID, -1, false, TYPALIGN_INT));
}

void
fairshare_jsonb_push_string(JsonbParseState **state, const char *key, const char *value)
{
	JsonbValue	k,
				v;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	pushJsonbValue(state, WJB_KEY, &k);
	if (value == NULL)
		v.type = jbvNull;
	else
	{
		v.type = jbvString;
		v.val.string.val = (char *) value;
		v.val.string.len = strlen(value);
	}
	pushJsonbValue(state, WJB_VALUE, &v);
}
