-- The rules the sinks' upserts share, each written once. A sink's upsert
-- is its INSERT ... FROM unnest(...) AS r(...) and a "-- from:" line naming
-- the rule its ON CONFLICT clause follows (package db: the line stands for
-- the template's text, run with the line's values). Values: as, the
-- INSERT's alias; key, the conflict columns; set, the columns a conflict
-- writes, in order; fill, those of set a NULL never erases (COALESCE; all:
-- every one). Every rule writes only a row that changes (WHERE ... IS
-- DISTINCT FROM): a page written twice touches nothing the second time.
-- A table that follows none of them (photosocial.reels' code,
-- photosocial.transcript_checks' run columns) writes its own clause.

-- template: RunSnapshot
-- A per-run row: a snapshot's counters, a ranking's entry, a live status,
-- one row of its key each run (run_id among key). Written again in the
-- same run (a page retried, an entity on two pages), it takes the values
-- written last; a column of fill keeps its value where the new row has
-- NULL (a list that carries some counters keeps those the entity's own
-- fetch stored in the same run).
{{- $t := .as}}{{$fill := subset (index . "fill") .set}}{{$row := gt (len (list .set)) 1}}
ON CONFLICT ({{join .key}}) DO UPDATE SET
{{- range $i, $c := list .set}}{{if $i}},{{end}}
    {{$c}} = {{if has $fill $c}}COALESCE(EXCLUDED.{{$c}}, {{$t}}.{{$c}}){{else}}EXCLUDED.{{$c}}{{end}}
{{- end}}
WHERE {{if $row}}({{end}}{{range $i, $c := list .set}}{{if $i}}, {{end}}{{$t}}.{{$c}}{{end}}{{if $row}}){{end}}
  IS DISTINCT FROM
      {{if $row}}({{end}}{{range $i, $c := list .set}}{{if $i}}, {{end}}{{if has $fill $c}}COALESCE(EXCLUDED.{{$c}}, {{$t}}.{{$c}}){{else}}EXCLUDED.{{$c}}{{end}}{{end}}{{if $row}}){{end}};

-- template: NewestRunWins
-- An entity (or a list's entry with columns of its own): one row of its
-- key, spanning the runs that wrote it (first_seen_run to last_seen_run,
-- which only widen). The newest run's answer wins: a run at least as new
-- as the row's last_seen_run sets the columns of set; an older run (a
-- replay of a past run's pages, a run resumed after a later one) changes
-- only first_seen_run and the NULLs it fills, so replaying history never
-- rolls a row back. Columns of set take the newest answer's value, NULL
-- included, but those of
--   fill: a NULL never erases them (an answer may lack what the entity's
--     own fetch said: a list entry carries less), and an older run fills
--     a NULL;
--   once: the first non-NULL value stays, whatever the run (a reply's
--     parent);
--   fetched: only the profile's own fetch sets them (profile_fetched=yes),
--     its NULL included: a list entry's NULL says nothing.
-- raw_partial=yes (default no): the table's raw_partial says raw came from
-- a trimmed answer: a trimmed raw never replaces a full one, and the row
-- stays partial only while every answer was. profile_fetched=yes (default
-- no): the same the other way round, for a profile's own fetch: raw from
-- a fetch is replaced only by another fetch's, and a row once fetched
-- stays so. updated_at=no (default yes): the table has no updated_at.
{{- $t := .as}}{{$fill := subset (index . "fill") .set}}{{$once := subset (index . "once") .set}}
{{- $fetched := subset (index . "fetched") .set}}{{$profile := flag (index . "profile_fetched") false}}
{{- $partial := flag (index . "raw_partial") false}}{{$stamp := flag (index . "updated_at") true}}
{{- $newer := printf "EXCLUDED.last_seen_run >= %s.last_seen_run" $t}}
ON CONFLICT ({{join .key}}) DO UPDATE SET
{{- range $c := list .set}}
    {{$c}} = {{if has $once $c}}COALESCE({{$t}}.{{$c}}, EXCLUDED.{{$c}})
    {{- else}}CASE WHEN {{$newer}} THEN {{if has $fill $c}}COALESCE(EXCLUDED.{{$c}}, {{$t}}.{{$c}}) ELSE COALESCE({{$t}}.{{$c}}, EXCLUDED.{{$c}})
    {{- else if has $fetched $c}}CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.{{$c}} ELSE {{$t}}.{{$c}} END ELSE {{$t}}.{{$c}}
    {{- else}}EXCLUDED.{{$c}} ELSE {{$t}}.{{$c}}{{end}} END{{end}},
{{- end}}
{{- if $profile}}
    profile_fetched = CASE WHEN {{$newer}} THEN {{$t}}.profile_fetched OR EXCLUDED.profile_fetched ELSE {{$t}}.profile_fetched END,
    raw = CASE WHEN {{$newer}} THEN CASE WHEN EXCLUDED.profile_fetched OR NOT {{$t}}.profile_fetched THEN EXCLUDED.raw ELSE {{$t}}.raw END ELSE {{$t}}.raw END,
{{- end}}
{{- if $partial}}
    raw_partial = CASE WHEN {{$newer}} THEN {{$t}}.raw_partial AND EXCLUDED.raw_partial ELSE {{$t}}.raw_partial END,
    raw = CASE WHEN {{$newer}} THEN CASE WHEN {{$t}}.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE {{$t}}.raw END ELSE {{$t}}.raw END,
{{- end}}
    first_seen_run = LEAST({{$t}}.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run = GREATEST({{$t}}.last_seen_run, EXCLUDED.last_seen_run)
{{- if $stamp}},
    updated_at = now()
{{- end}}
WHERE CASE WHEN {{$newer}}
    THEN ({{range $c := list .set}}{{$t}}.{{$c}}, {{end}}
          {{- if $profile}}{{$t}}.profile_fetched, {{$t}}.raw, {{end}}
          {{- if $partial}}{{$t}}.raw_partial, {{$t}}.raw, {{end}}{{$t}}.first_seen_run, {{$t}}.last_seen_run)
         IS DISTINCT FROM
         ({{range $c := list .set}}
          {{- if has $once $c}}COALESCE({{$t}}.{{$c}}, EXCLUDED.{{$c}})
          {{- else if has $fill $c}}COALESCE(EXCLUDED.{{$c}}, {{$t}}.{{$c}})
          {{- else if has $fetched $c}}CASE WHEN EXCLUDED.profile_fetched THEN EXCLUDED.{{$c}} ELSE {{$t}}.{{$c}} END
          {{- else}}EXCLUDED.{{$c}}{{end}}, {{end}}
          {{- if $profile}}{{$t}}.profile_fetched OR EXCLUDED.profile_fetched, CASE WHEN EXCLUDED.profile_fetched OR NOT {{$t}}.profile_fetched THEN EXCLUDED.raw ELSE {{$t}}.raw END, {{end}}
          {{- if $partial}}{{$t}}.raw_partial AND EXCLUDED.raw_partial, CASE WHEN {{$t}}.raw_partial OR NOT EXCLUDED.raw_partial THEN EXCLUDED.raw ELSE {{$t}}.raw END, {{end}}
          {{- ""}}LEAST({{$t}}.first_seen_run, EXCLUDED.first_seen_run), GREATEST({{$t}}.last_seen_run, EXCLUDED.last_seen_run))
{{- if or $fill $once}}
    ELSE ({{range $c := list .set}}{{if or (has $once $c) (has $fill $c)}}{{$t}}.{{$c}}, {{end}}{{end}}{{$t}}.first_seen_run)
         IS DISTINCT FROM
         ({{range $c := list .set}}{{if or (has $once $c) (has $fill $c)}}COALESCE({{$t}}.{{$c}}, EXCLUDED.{{$c}}), {{end}}{{end}}LEAST({{$t}}.first_seen_run, EXCLUDED.first_seen_run)) END;
{{- else}}
    ELSE {{$t}}.first_seen_run IS DISTINCT FROM LEAST({{$t}}.first_seen_run, EXCLUDED.first_seen_run) END;
{{- end}}

-- template: ListEntry
-- A list's entry with no columns of its own (a creator's video, a song's
-- video, a video's hashtag): the pair (owner, entry) and the runs that
-- listed it, first_seen_run to last_seen_run, which only widen (a replay
-- of an older run moves first_seen_run back). stop_at_seen counts the
-- entries earlier runs listed (internal/db/queries/reuse.sql, SeenKeys).
INSERT INTO {{.table}} AS l ({{.owner}}, {{.entry}}, first_seen_run, last_seen_run)
SELECT r.{{.owner}}, r.{{.entry}}, @run_id, @run_id
FROM unnest(@{{.owner}}::text[], @{{.entry}}::text[]) AS r({{.owner}}, {{.entry}})
ON CONFLICT ({{.owner}}, {{.entry}}) DO UPDATE SET
    first_seen_run = LEAST(l.first_seen_run, EXCLUDED.first_seen_run),
    last_seen_run  = GREATEST(l.last_seen_run, EXCLUDED.last_seen_run)
WHERE (l.first_seen_run, l.last_seen_run)
  IS DISTINCT FROM
      (LEAST(l.first_seen_run, EXCLUDED.first_seen_run), GREATEST(l.last_seen_run, EXCLUDED.last_seen_run));
