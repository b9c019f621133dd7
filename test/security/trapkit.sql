-- trapkit.sql — shadowing traps, generated from the catalogs, for the test
-- that no role gains anything through fairshare's name resolution
-- (test/security/traps.test).
--
-- A trap is something a role can put where a name it does not own might be
-- resolved to it: a temporary domain named like a built-in type (its CHECK
-- runs whenever a value is cast to it), or a function, aggregate or operator
-- named like a built-in in a schema of its own that it puts first on its
-- search_path (or in public).  Every trap calls trapkit.hit(creator, what),
-- which does nothing when it runs as its creator and otherwise counts an
-- escalation in a sequence (which a rollback does not undo) and warns.
--
-- Which names to shadow comes from the catalogs, not from a list: every
-- base type of pg_catalog, and every pg_catalog function, aggregate and
-- operator whose name appears in fairshare's SQL (the bodies of its
-- functions, its views and policies) or in the SQL strings of its C code
-- (loaded into trapkit.c_sql by the test).  Run as superuser; the kit's own
-- functions pin their search_path so that they are not trapped themselves.

CREATE SCHEMA trapkit;
GRANT USAGE ON SCHEMA trapkit TO PUBLIC;

CREATE SEQUENCE trapkit.escalations;
GRANT USAGE, UPDATE, SELECT ON SEQUENCE trapkit.escalations TO PUBLIC;

CREATE FUNCTION trapkit.hit(creator text, what text)
RETURNS boolean LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
	IF current_user::text <> creator THEN
		PERFORM nextval('trapkit.escalations');
		RAISE WARNING 'TRAP % set by % ran as %', what, creator, current_user;
	END IF;
	RETURN true;
END
$$;
GRANT EXECUTE ON FUNCTION trapkit.hit(text, text) TO PUBLIC;

-- SQL text of the C code (string literals), filled by the test.
CREATE TABLE trapkit.c_sql (line text);
GRANT SELECT ON trapkit.c_sql TO PUBLIC;

-- Every identifier followed by "(" in fairshare's SQL and C strings.
CREATE FUNCTION trapkit.called_names()
RETURNS SETOF name LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
	WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'fairshare'),
	texts AS (
		SELECT p.prosrc AS t FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass
		   AND d.objid = p.oid AND d.refclassid = 'pg_extension'::regclass
		   AND d.refobjid = (SELECT oid FROM ext) AND d.deptype = 'e'
		 WHERE p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'c')
		UNION ALL
		SELECT pg_get_viewdef(c.oid) FROM pg_class c
		 WHERE c.relnamespace = 'fairshare'::regnamespace AND c.relkind IN ('v', 'm')
		UNION ALL
		SELECT coalesce(qual, '') || ' ' || coalesce(with_check, '') FROM pg_policies WHERE schemaname = 'fairshare'
		UNION ALL
		SELECT line FROM trapkit.c_sql)
	SELECT DISTINCT lower(m[1])::name
	  FROM texts, regexp_matches(t, '([A-Za-z_][A-Za-z0-9_]*)\s*\(', 'g') AS m
$$;

-- A type's name as it must be written whatever the search_path.
CREATE FUNCTION trapkit.qtype(t oid)
RETURNS text LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
	SELECT CASE WHEN ty.typcategory = 'A' AND ty.typelem <> 0
				THEN trapkit.qtype(ty.typelem) || '[]'
				ELSE quote_ident(n.nspname) || '.' || quote_ident(ty.typname) END
	  FROM pg_type ty JOIN pg_namespace n ON n.oid = ty.typnamespace WHERE ty.oid = t
$$;

-- Temporary domains, in the calling session, named like every base, range
-- and enum type of pg_catalog.  Returns how many could be made.
CREATE FUNCTION trapkit.make_type_traps(creator text)
RETURNS integer LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	t record;
	n integer := 0;
BEGIN
	FOR t IN SELECT ty.oid, ty.typname FROM pg_type ty
			  WHERE ty.typnamespace = 'pg_catalog'::regnamespace AND ty.typtype IN ('b', 'r', 'm', 'e')
				AND ty.typname !~ '^_' AND ty.typisdefined
			  ORDER BY ty.typname
	LOOP
		BEGIN
			EXECUTE format('CREATE DOMAIN pg_temp.%I AS %s CHECK (trapkit.hit(%L, %L))',
						   t.typname, trapkit.qtype(t.oid), creator, 'type ' || t.typname);
			n := n + 1;
		EXCEPTION WHEN OTHERS THEN
			NULL;	-- a type no domain can be made of (pseudo-like internals)
		END;
	END LOOP;
	RETURN n;
END
$$;
GRANT EXECUTE ON FUNCTION trapkit.make_type_traps(text) TO PUBLIC;

-- Concrete types stood in for polymorphic arguments.
CREATE FUNCTION trapkit.concrete_types()
RETURNS SETOF oid LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp AS $$
	SELECT unnest(ARRAY['text', 'int4', 'int8', 'numeric', 'bool', 'jsonb', 'timestamptz', 'interval',
						'float8', 'name']::regtype[])::oid
	UNION ALL
	-- (by name: a role without USAGE on fairshare cannot cast to regtype)
	SELECT t.oid FROM pg_type t WHERE t.typname = 'job_status' AND t.typnamespace = 'fairshare'::regnamespace
$$;

-- The argument lists a trap for function p should have: its own when all
-- are concrete, one per concrete type for polymorphic ones, and arities 0
-- to 6 of one concrete type for VARIADIC "any".
CREATE FUNCTION trapkit.trap_signatures(p oid)
RETURNS TABLE (args oid[], ret oid, retset boolean) LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	f pg_proc;
	poly boolean;
	c oid;
	carr oid;
	a oid[];
	r oid;
BEGIN
	SELECT * INTO f FROM pg_proc WHERE oid = p;
	IF f.proargmodes && ARRAY['o', 'b', 't']::"char"[] OR f.prorettype IN ('record'::regtype, 'internal'::regtype, 'trigger'::regtype,
			'event_trigger'::regtype, 'cstring'::regtype) THEN
		RETURN;
	END IF;
	IF f.provariadic = '"any"'::regtype THEN
		FOR c IN SELECT * FROM trapkit.concrete_types() LOOP
			FOR k IN 0 .. 6 LOOP
				args := (SELECT coalesce(array_agg(t.x ORDER BY t.i), '{}') FROM (
							SELECT i, CASE WHEN i <= f.pronargs - 1 THEN f.proargtypes[i - 1] ELSE c END AS x
							  FROM generate_series(1, f.pronargs - 1 + k) i) t);
				ret := f.prorettype; retset := f.proretset;
				IF ret IN ('anyelement'::regtype, 'anycompatible'::regtype) THEN ret := c; END IF;
				IF NOT EXISTS (SELECT 1 FROM unnest(args) x JOIN pg_type ty ON ty.oid = x WHERE ty.typtype = 'p') THEN
					RETURN NEXT;
				END IF;
			END LOOP;
		END LOOP;
		RETURN;
	END IF;
	poly := EXISTS (SELECT 1 FROM unnest(f.proargtypes::oid[] || f.prorettype) x JOIN pg_type ty ON ty.oid = x
					 WHERE ty.typtype = 'p' AND x NOT IN ('void'::regtype));
	IF NOT poly THEN
		args := f.proargtypes::oid[]; ret := f.prorettype; retset := f.proretset;
		RETURN NEXT;
		RETURN;
	END IF;
	FOR c IN SELECT * FROM trapkit.concrete_types() LOOP
		SELECT ty.typarray INTO carr FROM pg_type ty WHERE ty.oid = c;
		a := '{}';
		FOR i IN 1 .. f.pronargs LOOP
			a := a || CASE WHEN f.proargtypes[i - 1] IN ('anyelement'::regtype, 'anycompatible'::regtype,
														 'anynonarray'::regtype, 'anycompatiblenonarray'::regtype,
														 'anyenum'::regtype) THEN c
						   WHEN f.proargtypes[i - 1] IN ('anyarray'::regtype, 'anycompatiblearray'::regtype) THEN carr
						   ELSE f.proargtypes[i - 1] END;
		END LOOP;
		r := CASE WHEN f.prorettype IN ('anyelement'::regtype, 'anycompatible'::regtype,
										'anynonarray'::regtype, 'anyenum'::regtype) THEN c
				  WHEN f.prorettype IN ('anyarray'::regtype, 'anycompatiblearray'::regtype) THEN carr
				  ELSE f.prorettype END;
		IF ('anyenum'::regtype = ANY (f.proargtypes::oid[])
			AND c <> (SELECT t.oid FROM pg_type t WHERE t.typname = 'job_status' AND t.typnamespace = 'fairshare'::regnamespace))
		   OR EXISTS (SELECT 1 FROM unnest(a || r) x JOIN pg_type ty ON ty.oid = x
					   WHERE ty.typtype = 'p' AND x <> 'void'::regtype) THEN
			CONTINUE;
		END IF;
		args := a; ret := r; retset := f.proretset;
		RETURN NEXT;
	END LOOP;
END
$$;

-- Functions, aggregates and operators in schema target (owned by the
-- caller, who is creator) shadowing every pg_catalog one that fairshare's
-- SQL names.  Returns how many were made.
CREATE FUNCTION trapkit.make_function_traps(target text, creator text)
RETURNS integer LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	p record;
	s record;
	n integer := 0;
	arglist text;
	callargs text;
	what text;
	agg pg_aggregate;
	sfunc text;
BEGIN
	FOR p IN SELECT f.oid, f.proname, f.prokind FROM pg_proc f
			  WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind IN ('f', 'a')
				AND f.proname IN (SELECT * FROM trapkit.called_names())
			  ORDER BY f.proname, f.oid
	LOOP
		FOR s IN SELECT * FROM trapkit.trap_signatures(p.oid) LOOP
			SELECT coalesce(string_agg(trapkit.qtype(x), ', ' ORDER BY i), ''),
				   coalesce(string_agg('$' || i, ', ' ORDER BY i), '')
			  INTO arglist, callargs
			  FROM unnest(s.args) WITH ORDINALITY u(x, i);
			what := format('%s(%s)', p.proname, arglist);
			BEGIN
				IF p.prokind = 'f' THEN
					EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s%s LANGUAGE sql AS %L',
						target, p.proname, arglist, CASE WHEN s.retset THEN 'SETOF ' ELSE '' END,
						trapkit.qtype(s.ret),
						format('SELECT trapkit.hit(%L, %L); %s', creator, what,
							   CASE WHEN s.retset THEN format('SELECT * FROM pg_catalog.%I(%s)', p.proname, callargs)
									ELSE format('SELECT pg_catalog.%I(%s)', p.proname, callargs) END));
				ELSE
					SELECT * INTO agg FROM pg_aggregate WHERE aggfnoid = p.oid;
					IF agg.aggtranstype = 'internal'::regtype OR agg.aggkind <> 'n' THEN
						CONTINUE;
					END IF;
					sfunc := format('%s_trap_%s', p.proname, md5(what));
					EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql %s AS %L',
						target, sfunc, trapkit.qtype(agg.aggtranstype) || CASE WHEN arglist = '' THEN '' ELSE ', ' || arglist END,
						trapkit.qtype(agg.aggtranstype),
						CASE WHEN (SELECT proisstrict FROM pg_proc WHERE oid = agg.aggtransfn) THEN 'STRICT' ELSE '' END,
						format('SELECT trapkit.hit(%L, %L); SELECT %s(%s)', creator, what, agg.aggtransfn::regproc,
							   (SELECT string_agg('$' || i, ', ') FROM generate_series(1, pg_catalog.cardinality(s.args) + 1) i)));
					-- Over no rows only the final function runs: without one of
					-- its own, a trap there (count(*) of nothing) trips as well.
					IF agg.aggfinalfn = 0 THEN
						EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql AS %L',
							target, format('fin_%s', md5(what)), trapkit.qtype(agg.aggtranstype), trapkit.qtype(agg.aggtranstype),
							format('SELECT trapkit.hit(%L, %L); SELECT $1', creator, what));
					END IF;
					EXECUTE format('CREATE AGGREGATE %I.%I(%s) (SFUNC = %I.%I, STYPE = %s%s%s)',
						target, p.proname, CASE WHEN arglist = '' THEN '*' ELSE arglist END, target, sfunc,
						trapkit.qtype(agg.aggtranstype),
						CASE WHEN agg.aggfinalfn <> 0 THEN ', FINALFUNC = ' || agg.aggfinalfn::regproc
							 ELSE format(', FINALFUNC = %I.%I', target, format('fin_%s', md5(what))) END,
						CASE WHEN agg.agginitval IS NOT NULL THEN format(', INITCOND = %L', agg.agginitval) ELSE '' END);
				END IF;
				n := n + 1;
			EXCEPTION WHEN OTHERS THEN
				NULL;	-- a signature SQL cannot declare; the others stand
			END;
		END LOOP;
	END LOOP;
	-- Operators on the concrete types (and their arrays) in their own
	-- schema, each through a wrapper that trips the trap.
	FOR p IN SELECT o.oid, o.oprname, o.oprleft, o.oprright, o.oprresult, o.oprcode::text AS code
			   FROM pg_operator o
			  WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oprcode <> 0
				AND o.oprresult <> 'internal'::regtype
				AND (o.oprleft = 0 OR o.oprleft IN (SELECT c FROM trapkit.concrete_types() c
													UNION SELECT typarray FROM pg_type WHERE oid IN (SELECT * FROM trapkit.concrete_types())))
				AND o.oprright IN (SELECT c FROM trapkit.concrete_types() c
								   UNION SELECT typarray FROM pg_type WHERE oid IN (SELECT * FROM trapkit.concrete_types()))
	LOOP
		what := format('operator %s(%s, %s)', p.oprname, coalesce(trapkit.qtype(nullif(p.oprleft, 0)), 'none'),
					   trapkit.qtype(p.oprright));
		BEGIN
			EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql AS %L',
				target, 'op_trap_' || p.oid, concat_ws(', ', trapkit.qtype(nullif(p.oprleft, 0)), trapkit.qtype(p.oprright)),
				trapkit.qtype(p.oprresult),
				format('SELECT trapkit.hit(%L, %L); SELECT pg_catalog.%s(%s)', creator, what, p.code,
					   CASE WHEN p.oprleft = 0 THEN '$1' ELSE '$1, $2' END));
			EXECUTE format('CREATE OPERATOR %I.%s (%sRIGHTARG = %s, FUNCTION = %I.%I)',
				target, p.oprname,
				CASE WHEN p.oprleft = 0 THEN '' ELSE 'LEFTARG = ' || trapkit.qtype(p.oprleft) || ', ' END,
				trapkit.qtype(p.oprright), target, 'op_trap_' || p.oid);
			n := n + 1;
		EXCEPTION WHEN OTHERS THEN
			NULL;
		END;
	END LOOP;
	RETURN n;
END
$$;
GRANT EXECUTE ON FUNCTION trapkit.make_function_traps(text, text) TO PUBLIC;

-- Sample values of each argument type, as pg_catalog-typed literals: the
-- i-th call of a function takes the i-th value of each (cycling).
CREATE TABLE trapkit.sample_values (type regtype, ord integer, literal text);
GRANT SELECT ON trapkit.sample_values TO PUBLIC;

-- Statements that change tables, for each (table, privilege) a role may
-- hold; the test fails when a role holds one with no statement here.
CREATE TABLE trapkit.sample_writes (relation regclass, privilege text, statement text);
GRANT SELECT ON trapkit.sample_writes TO PUBLIC;

-- Every statement with which the current role can reach fairshare: each
-- function and procedure of the extension it may execute (called with
-- sample arguments, several times), each relation it may read, each
-- write it may make.  Runs as the caller (SECURITY INVOKER), with a pinned
-- path of its own; the statements it returns run in the caller's session,
-- under the caller's (trapped) search_path.
CREATE FUNCTION trapkit.calls(max_calls integer DEFAULT 6)
RETURNS SETOF text LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
	f record;
	r record;
	arity integer;
	vals text[];
	calls integer;
	missing text;
BEGIN
	FOR f IN SELECT p.oid, p.proname, p.prokind, ARRAY(SELECT unnest(p.proargtypes::oid[])) AS args, p.pronargs, p.prorettype,
					p.proretset
			   FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
				AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
				AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'fairshare')
			  WHERE p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
				AND has_function_privilege(p.oid, 'EXECUTE')
			  ORDER BY p.proname, p.oid
	LOOP
		calls := greatest(1, least(max_calls, (SELECT coalesce(max(cnt), 1) FROM (
					SELECT count(*) AS cnt FROM trapkit.sample_values v WHERE v.type = ANY (f.args) GROUP BY v.type) x)));
		FOR i IN 0 .. calls - 1 LOOP
			vals := '{}';
			FOR k IN 1 .. f.pronargs LOOP
				vals := vals || coalesce(
					(SELECT v.literal FROM trapkit.sample_values v WHERE v.type = f.args[k]
					  ORDER BY v.ord OFFSET i % greatest(1, (SELECT count(*) FROM trapkit.sample_values w
															  WHERE w.type = f.args[k])) LIMIT 1),
					'NULL::' || trapkit.qtype(f.args[k]));
			END LOOP;
			RETURN NEXT CASE WHEN f.prokind = 'p'
							 THEN format('CALL fairshare.%I(%s)', f.proname, array_to_string(vals, ', '))
							 ELSE format('SELECT * FROM fairshare.%I(%s)', f.proname, array_to_string(vals, ', ')) END;
		END LOOP;
	END LOOP;
	FOR r IN SELECT c.oid::regclass AS rel FROM pg_class c
			  WHERE c.relnamespace = 'fairshare'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p')
				AND has_table_privilege(c.oid, 'SELECT')
			  ORDER BY c.relname
	LOOP
		RETURN NEXT format('SELECT * FROM %s LIMIT 100', r.rel);
	END LOOP;
	missing := (SELECT string_agg(format('%s on %s', p.priv, c.oid::regclass), ', ')
				  FROM pg_class c CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p(priv)
				 WHERE c.relnamespace = 'fairshare'::regnamespace AND c.relkind IN ('r', 'p')
				   AND has_table_privilege(c.oid, p.priv)
				   AND NOT EXISTS (SELECT 1 FROM trapkit.sample_writes w WHERE w.relation = c.oid AND w.privilege = p.priv));
	IF missing IS NOT NULL THEN
		RAISE EXCEPTION 'trapkit has no sample statement for %', missing;
	END IF;
	FOR r IN SELECT w.statement FROM trapkit.sample_writes w
			  WHERE has_table_privilege(w.relation, w.privilege) ORDER BY w.relation::text, w.privilege
	LOOP
		RETURN NEXT r.statement;
	END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION trapkit.calls(integer) TO PUBLIC;
