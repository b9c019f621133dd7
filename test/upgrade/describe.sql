-- test/upgrade/describe.sql — PostgreSQL's own description of everything
-- the extension fairshare owns, one "object | aspect" heading per fact and
-- the fact's text indented below it, in a stable order.  Two databases whose
-- outputs are equal have the same catalog; test/upgrade/catalog.test diffs
-- an upgraded installation's output with a fresh install's.
--
-- The set of objects is not a list kept here: it is every pg_depend member
-- of the extension (deptype 'e'), and for each relation its columns,
-- constraints, indexes, triggers, policies and rules, which belong to it
-- rather than to the extension.  Each is described by the server's own
-- functions (pg_get_functiondef, pg_get_viewdef, pg_get_constraintdef,
-- pg_get_indexdef, pg_get_triggerdef, pg_get_expr, format_type), with its
-- owner, ACL, the privileges pg_dump treats as the extension's own
-- (pg_init_privs) and its comment.  OIDs never appear: only names.
\pset format unaligned
\pset tuples_only on
\pset footer off
SET search_path = pg_catalog;
SET client_min_messages = warning;

WITH ext AS (
	SELECT oid, extname, extowner FROM pg_extension WHERE extname = 'fairshare'
), members AS (
	SELECT d.classid, d.objid, d.objsubid
	  FROM pg_depend d, ext
	 WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), ident AS (
	SELECT m.classid, m.objid, m.objsubid,
		   (pg_identify_object(m.classid, m.objid, m.objsubid)).type AS kind,
		   (pg_identify_object(m.classid, m.objid, m.objsubid)).identity AS name
	  FROM members m
), facts(obj, aspect, val) AS (
	-- the extension itself: tables whose rows pg_dump keeps
	SELECT 'extension fairshare', 'configuration tables',
		   (SELECT string_agg(c::regclass::text || coalesce(' ' || nullif(w, ''), ''), E'\n' ORDER BY c::regclass::text)
			  FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, w)
			 WHERE e.extname = 'fairshare')
	UNION ALL
	-- every member: what it is, its owner, comment and initial privileges
	SELECT i.kind || ' ' || i.name, 'member', i.kind FROM ident i
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'comment', obj_description(i.objid, i.classid::regclass::name)
	  FROM ident i WHERE obj_description(i.objid, i.classid::regclass::name) IS NOT NULL
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'extension privileges (pg_init_privs)',
		   p.privtype::text || ' ' || coalesce(p.initprivs::text, '')
	  FROM ident i JOIN pg_init_privs p ON p.classoid = i.classid AND p.objoid = i.objid AND p.objsubid = 0
	UNION ALL
	-- schemas
	SELECT i.kind || ' ' || i.name, 'owner and ACL', n.nspowner::regrole::text || ' ' || coalesce(n.nspacl::text, '')
	  FROM ident i JOIN pg_namespace n ON i.classid = 'pg_namespace'::regclass AND n.oid = i.objid
	UNION ALL
	-- functions and procedures: the whole CREATE statement (language,
	-- volatility, strictness, security, SET clauses, body), owner, ACL
	SELECT i.kind || ' ' || i.name, 'definition', pg_get_functiondef(p.oid)
	  FROM ident i JOIN pg_proc p ON i.classid = 'pg_proc'::regclass AND p.oid = i.objid
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'owner, ACL, cost, rows, parallel, leakproof',
		   p.proowner::regrole::text || ' ' || coalesce(p.proacl::text, '(default)') || ' cost=' || p.procost
		   || ' rows=' || p.prorows || ' parallel=' || p.proparallel::text || ' leakproof=' || p.proleakproof
	  FROM ident i JOIN pg_proc p ON i.classid = 'pg_proc'::regclass AND p.oid = i.objid
	UNION ALL
	-- types: enum labels in order, composite attributes, domains
	SELECT i.kind || ' ' || i.name, 'type',
		   t.typtype::text || ' owner=' || t.typowner::regrole::text || ' acl=' || coalesce(t.typacl::text, '(default)')
		   || coalesce(' labels=' || (SELECT string_agg(quote_literal(e.enumlabel), ',' ORDER BY e.enumsortorder)
										FROM pg_enum e WHERE e.enumtypid = t.oid), '')
		   || coalesce(' base=' || format_type(nullif(t.typbasetype, 0), t.typtypmod), '')
		   || coalesce(' attributes=' || (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
											FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '')
	  FROM ident i JOIN pg_type t ON i.classid = 'pg_type'::regclass AND t.oid = i.objid
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'domain constraint ' || c.conname, pg_get_constraintdef(c.oid)
	  FROM ident i JOIN pg_constraint c ON i.classid = 'pg_type'::regclass AND c.contypid = i.objid
	UNION ALL
	-- relations: kind, options, row security, owner, ACL
	SELECT i.kind || ' ' || i.name, 'relation',
		   'relkind=' || c.relkind::text || ' persistence=' || c.relpersistence::text || ' owner=' || c.relowner::regrole::text
		   || ' acl=' || coalesce(c.relacl::text, '(default)') || ' rowsecurity=' || c.relrowsecurity
		   || ' forcerowsecurity=' || c.relforcerowsecurity || ' replident=' || c.relreplident::text
		   || ' options=' || coalesce(c.reloptions::text, '') || ' am=' || coalesce((SELECT amname FROM pg_am WHERE oid = c.relam), '')
	  FROM ident i JOIN pg_class c ON i.classid = 'pg_class'::regclass AND c.oid = i.objid
	UNION ALL
	-- columns, in order: a column added by an upgrade must land where a
	-- fresh install puts it
	SELECT i.kind || ' ' || i.name, format('column %s %s', lpad(a.attnum::text, 3, '0'), a.attname),
		   format_type(a.atttypid, a.atttypmod)
		   || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
		   || coalesce(' DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid), '')
		   || CASE WHEN a.attidentity <> '' THEN ' IDENTITY ' || a.attidentity::text ELSE '' END
		   || CASE WHEN a.attgenerated <> '' THEN ' GENERATED ' || a.attgenerated::text ELSE '' END
		   || coalesce(' COLLATE ' || (SELECT collname FROM pg_collation WHERE oid = nullif(a.attcollation, 0)
										  AND a.attcollation <> (SELECT typcollation FROM pg_type WHERE oid = a.atttypid)), '')
		   || coalesce(' ACL ' || a.attacl::text, '')
		   || coalesce(' STATISTICS ' || nullif(a.attstattarget, -1)::text, '')
		   || coalesce(' STORAGE ' || nullif(a.attstorage, (SELECT typstorage FROM pg_type WHERE oid = a.atttypid))::text, '')
		   || coalesce(' COMMENT ' || quote_literal(col_description(a.attrelid, a.attnum)), '')
	  FROM ident i JOIN pg_attribute a ON i.classid = 'pg_class'::regclass AND a.attrelid = i.objid
	  LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
	 WHERE a.attnum > 0 AND NOT a.attisdropped
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'column privileges (pg_init_privs) ' || a.attname,
		   p.privtype::text || ' ' || coalesce(p.initprivs::text, '')
	  FROM ident i JOIN pg_attribute a ON i.classid = 'pg_class'::regclass AND a.attrelid = i.objid
	  JOIN pg_init_privs p ON p.classoid = 'pg_class'::regclass AND p.objoid = a.attrelid AND p.objsubid = a.attnum
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'constraint ' || c.conname,
		   pg_get_constraintdef(c.oid)
		   || CASE WHEN c.condeferrable THEN ' DEFERRABLE' ELSE '' END
		   || CASE WHEN c.condeferred THEN ' INITIALLY DEFERRED' ELSE '' END
		   || CASE WHEN NOT c.convalidated THEN ' NOT VALID' ELSE '' END
		   || coalesce(' COMMENT ' || quote_literal(obj_description(c.oid, 'pg_constraint')), '')
	  FROM ident i JOIN pg_constraint c ON i.classid = 'pg_class'::regclass AND c.conrelid = i.objid
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'index ' || x.indexrelid::regclass::text,
		   pg_get_indexdef(x.indexrelid)
		   || CASE WHEN x.indisclustered THEN ' CLUSTERED' ELSE '' END
		   || CASE WHEN NOT x.indisvalid THEN ' INVALID' ELSE '' END
		   || coalesce(' COMMENT ' || quote_literal(obj_description(x.indexrelid, 'pg_class')), '')
	  FROM ident i JOIN pg_index x ON i.classid = 'pg_class'::regclass AND x.indrelid = i.objid
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'trigger ' || t.tgname,
		   pg_get_triggerdef(t.oid) || ' enabled=' || t.tgenabled::text
		   || coalesce(' COMMENT ' || quote_literal(obj_description(t.oid, 'pg_trigger')), '')
	  FROM ident i JOIN pg_trigger t ON i.classid = 'pg_class'::regclass AND t.tgrelid = i.objid
	 WHERE NOT t.tgisinternal
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'policy ' || p.polname,
		   'cmd=' || p.polcmd::text || ' permissive=' || p.polpermissive
		   || ' roles=' || (SELECT string_agg(CASE WHEN r = 0 THEN 'public' ELSE r::regrole::text END, ',' ORDER BY 1)
							  FROM unnest(p.polroles) r)
		   || coalesce(' USING (' || pg_get_expr(p.polqual, p.polrelid) || ')', '')
		   || coalesce(' WITH CHECK (' || pg_get_expr(p.polwithcheck, p.polrelid) || ')', '')
	  FROM ident i JOIN pg_policy p ON i.classid = 'pg_class'::regclass AND p.polrelid = i.objid
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'view definition', pg_get_viewdef(c.oid)
	  FROM ident i JOIN pg_class c ON i.classid = 'pg_class'::regclass AND c.oid = i.objid
	 WHERE c.relkind IN ('v', 'm')
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'rule ' || r.rulename, pg_get_ruledef(r.oid)
	  FROM ident i JOIN pg_rewrite r ON i.classid = 'pg_class'::regclass AND r.ev_class = i.objid
	 WHERE r.rulename <> '_RETURN'
	UNION ALL
	SELECT i.kind || ' ' || i.name, 'sequence',
		   format('type=%s start=%s increment=%s min=%s max=%s cache=%s cycle=%s owned_by=%s',
				  s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle,
				  (SELECT string_agg(d.refobjid::regclass::text || '.' || a.attname, ',')
					 FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
					WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
					  AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')))
	  FROM ident i JOIN pg_sequence s ON i.classid = 'pg_class'::regclass AND s.seqrelid = i.objid
	UNION ALL
	-- event triggers
	SELECT i.kind || ' ' || i.name, 'event trigger',
		   e.evtevent || ' ' || e.evtfoid::regproc::text || ' enabled=' || e.evtenabled::text
		   || ' tags=' || coalesce(e.evttags::text, '') || ' owner=' || e.evtowner::regrole::text
	  FROM ident i JOIN pg_event_trigger e ON i.classid = 'pg_event_trigger'::regclass AND e.oid = i.objid
	UNION ALL
	-- anything else the extension may come to own (casts, operators, ...):
	-- at least its name and kind are compared (as 'member' above); say so
	SELECT i.kind || ' ' || i.name, 'not described in detail', i.classid::regclass::text
	  FROM ident i
	 WHERE i.classid NOT IN ('pg_namespace'::regclass, 'pg_proc'::regclass, 'pg_type'::regclass,
							 'pg_class'::regclass, 'pg_event_trigger'::regclass)
)
SELECT '== ' || obj || ' | ' || aspect || E'\n'
	   || regexp_replace(coalesce(val, '(null)'), '^', '    ', 'gn')
  FROM facts
 ORDER BY obj COLLATE "C", aspect COLLATE "C", val COLLATE "C";
