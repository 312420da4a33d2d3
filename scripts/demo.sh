#!/usr/bin/env bash
# demo.sh: the main job end to end. Starts the sandbox on a free port and
# (unless DATABASE_URL is set) a throwaway PostgreSQL, runs
# `crawler run jobs.example.yaml` against them, and prints what landed.
# PRESET=scrapecreators (make demo PRESET=scrapecreators) does the same in
# the real service's dialect: the sandbox speaks it and the job is
# jobs.scrapecreators.example.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s%N)
go build -buildvcs=true -o bin/crawler ./cmd/crawler

preset=${PRESET:-contract}
case $preset in
contract) job=jobs.example.yaml ;;
scrapecreators) job=jobs.scrapecreators.example.yaml ;;
*) echo "demo: PRESET must be contract or scrapecreators, got $preset" >&2; exit 2 ;;
esac

export CRAWLER_API_KEY=demo-key-not-secret
mkdir -p tmp
report=$PWD/tmp/demo-report.html
export_dir=$PWD/tmp/demo-export
rm -rf "$export_dir"
sandbox_out=$(mktemp)
bin/crawler sandbox --preset "$preset" --addr 127.0.0.1:0 --api-key "$CRAWLER_API_KEY" --log-level warn >"$sandbox_out" 2>&1 &
sandbox_pid=$!
trap 'kill $sandbox_pid 2>/dev/null || true; rm -f "$sandbox_out"' EXIT

# The sandbox prints its address on its first line.
for _ in $(seq 1 100); do
	grep -q 'serving http' "$sandbox_out" && break
	kill -0 $sandbox_pid 2>/dev/null || { cat "$sandbox_out"; exit 1; }
	sleep 0.05
done
base_url=$(grep -o 'serving http://[^ ]*' "$sandbox_out" | head -1 | cut -d' ' -f2)
echo "demo: sandbox ($preset dialect) at $base_url"

go run ./tools/withpg -- bash -c '
set -euo pipefail
bin/crawler run --base-url "$0" --log-level warn "$3"
echo
bin/crawler status
echo
echo "Sample query: the most-followed accounts in the harvested graph"
psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "
SELECT f.followee AS account, count(*) AS followers_harvested, s.follower_count AS followers_reported
FROM shortvideo.follows f
LEFT JOIN shortvideo.user_snapshots s ON s.unique_id = f.followee
GROUP BY f.followee, s.follower_count ORDER BY 2 DESC LIMIT 5;"
if [ "$3" = jobs.scrapecreators.example.yaml ]; then
	echo
	echo "Sample query: a creator'"'"'s videos and what is said under them (the real service'"'"'s own endpoints)"
	psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "
SELECT unique_id AS creator, count(*) AS videos, sum(play_count) AS plays, sum(comments_stored) AS comments_and_replies,
       count(*) FILTER (WHERE has_speech) AS transcribed
FROM shortvideo.creator_videos GROUP BY 1 ORDER BY 4 DESC, 1 LIMIT 5;"
	psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -c "
SELECT owner_username AS account, count(*) AS posts, count(*) FILTER (WHERE media_type = 2) AS reels,
       (SELECT count(*) FROM photosocial.profile_highlights h WHERE h.username = p.owner_username) AS highlights
FROM photosocial.posts_latest p GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5;"
fi
echo
bin/crawler report --html "$1"
echo
bin/crawler export --out "$2"
bin/crawler export --verify "$2"
' "$base_url" "$report" "$export_dir" "$job"

echo "demo: the run report: $report (open it in a browser)"
echo "demo: the harvest as Parquet with its manifest: $export_dir (docs/export.md loads it in DuckDB, pandas and R)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "demo: done in $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
