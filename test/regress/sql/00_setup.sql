-- Helpers every regression test uses; this file runs first (pg_regress
-- runs the tests in name order in one database) and they stay in public,
-- outside the extension, so DROP EXTENSION in a test leaves them.
--
-- regress_try(statement): run it; 'ok', or its SQLSTATE and message.
-- regress_try_hint(statement): the same, with the hint on a second line.
SET client_min_messages = warning;
DROP FUNCTION IF EXISTS public.regress_try(text), public.regress_try_hint(text);
RESET client_min_messages;

CREATE FUNCTION public.regress_try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	state text; msg text;
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
	RETURN state || ': ' || msg;
END
$$;

CREATE FUNCTION public.regress_try_hint(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	state text; msg text; hint text;
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
	RETURN state || ': ' || msg || CASE WHEN hint <> '' THEN E'\n    HINT: ' || hint ELSE '' END;
END
$$;
