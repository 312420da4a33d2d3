-- crawler export (package output/export): read only, in one REPEATABLE
-- READ transaction, so every file and the manifest see one snapshot.

-- name: ExportDefaultObjects
-- The analysts' views: every view of the data schemas and crawl
-- (docs/analysts.md); a view a migration adds is exported with no change.
SELECT n.nspname || '.' || c.relname
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'v' AND n.nspname IN ('shortvideo', 'photosocial', 'crawl')
ORDER BY n.nspname, c.relname;

-- name: ExportRelation
-- A table or view by its qualified name: its kind (r, p, v, m), or no row.
SELECT c.relkind::text, n.nspname, c.relname
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = pg_catalog.to_regclass(@name) AND c.relkind IN ('r', 'p', 'v', 'm');

-- name: ExportColumns
-- The relation's columns in order, each with its type as PostgreSQL
-- names it (bigint, timestamp with time zone, crawl.task_outcome, text[]).
SELECT a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod), t.typtype::text = 'e'
FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = pg_catalog.to_regclass(@name) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum;

-- name: ExportPrimaryKey
-- The relation's primary key columns, in the key's order; none for a view.
SELECT a.attname::text
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
WHERE i.indrelid = pg_catalog.to_regclass(@name) AND i.indisprimary
ORDER BY pg_catalog.array_position(i.indkey::int2[], a.attnum);

-- name: ExportViewDef
-- A view's definition, every relation schema-qualified (the export's
-- transaction sets an empty search_path), for --as-of to cut.
SELECT pg_catalog.pg_get_viewdef(pg_catalog.to_regclass(@name), true);

-- name: ExportRuns
-- The runs an export includes: all up to @as_of.
SELECT id, job_name, state, coalesce(stop_reason, ''), started_at, finished_at, credits_billed,
       coalesce(fingerprint, ''), pruned_at, snapshots_pruned_at
FROM crawl.runs WHERE id <= @as_of ORDER BY id;

-- name: ExportCredits
-- What each endpoint cost each run included.
SELECT run_id, endpoint, requests, billed, free, cached, rate_limited, errors
FROM crawl.credit_usage WHERE run_id <= @as_of ORDER BY run_id, endpoint;

-- name: ExportCompleteness
-- How each run's lists ended: tasks of the list kinds by outcome (a new
-- outcome shows with its name), unfinished ones by state.
SELECT run_id, kind, coalesce(outcome::text, state), count(*)
FROM crawl.tasks WHERE run_id <= @as_of AND kind = ANY (@kinds::text[])
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
