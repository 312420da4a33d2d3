#!/usr/bin/env bash
# retention-growth.sh: measures how the database grows night after night
# (docs/retention.md, "Growth"). Runs JOB (default jobs.example.yaml) NIGHTS
# times against the sandbox, the sandbox's world one day older each night,
# into the database at DATABASE_URL (run it under `go run ./tools/withpg --`
# for a throwaway one). With KEEP_RUNS set, `crawler prune --keep-runs
# KEEP_RUNS` follows each run (a compressed --older-than). After each night
# it runs VACUUM (what autovacuum does between two nights: the space of
# deleted rows becomes free for the next inserts) and prints one CSV line
# per table: night,table,bytes (pg_total_relation_size: heap, indexes and
# TOAST).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?run under go run ./tools/withpg --, or set DATABASE_URL}"
job=${JOB:-jobs.example.yaml}
nights=${NIGHTS:-8}
keep=${KEEP_RUNS:-}

go build -o bin/crawler ./cmd/crawler
export CRAWLER_API_KEY=growth-key-not-secret
bin/crawler migrate >/dev/null
echo "night,table,bytes"
for night in $(seq 1 "$nights"); do
	out=$(mktemp)
	bin/crawler sandbox --addr 127.0.0.1:0 --api-key "$CRAWLER_API_KEY" --world-time "$night" --log-level warn >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 1 200); do
		grep -q 'serving http' "$out" && break
		sleep 0.05
	done
	base_url=$(grep -o 'serving http://[^ ]*' "$out" | head -1 | cut -d' ' -f2)
	bin/crawler run --base-url "$base_url" --live off --log-level error "$job" >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -f "$out"
	if [ -n "$keep" ]; then
		bin/crawler prune --keep-runs "$keep" >&2
	fi
	psql "$DATABASE_URL" -X -q -A -t -F, -v ON_ERROR_STOP=1 -c "VACUUM" -c "
SELECT $night, schemaname || '.' || relname, pg_total_relation_size(relid)
FROM pg_stat_user_tables WHERE schemaname IN ('crawl', 'shortvideo', 'photosocial')
ORDER BY 2"
done
