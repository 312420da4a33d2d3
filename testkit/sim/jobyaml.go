package sim

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/socialcrawl/crawler/jobfile"
)

// jobName names every run of a scenario: reuse and revisits are per job.
const jobName = "sim"

// writeJob writes the night's job file (and its seed files) into dir for
// the upstream at baseURL with workers workers, and returns its path.
func writeJob(dir string, s *Scenario, baseURL string, workers int) (string, error) {
	j := &s.Job
	var b strings.Builder
	line := func(indent int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", indent))
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	line(0, "name: %s", jobName)
	if j.Archive {
		line(0, "archive: true")
	}
	line(0, "api:")
	if s.World.Preset != "contract" {
		line(1, "preset: %s", s.World.Preset)
	}
	line(1, "base_url: %q", baseURL)
	line(1, "max_retries: %d", j.MaxRetries)
	line(1, "retry_initial: 1ms")
	line(1, "retry_max: 20ms")
	line(1, "timeout: %dms", cmp.Or(j.TimeoutMillis, 20_000))
	if len(j.DeclaredPrices) > 0 {
		line(1, "endpoints:")
		byPlatform := map[string][]string{}
		for _, kind := range sortedKeys(j.DeclaredPrices) {
			platform, name, _ := strings.Cut(kind, ".")
			byPlatform[platform] = append(byPlatform[platform], fmt.Sprintf("%s: {credits: %d}", name, j.DeclaredPrices[kind]))
		}
		for _, platform := range sortedKeys(byPlatform) {
			line(2, "%s: {%s}", platform, strings.Join(byPlatform[platform], ", "))
		}
	}
	line(0, "limits:")
	if workers > 0 { // else the adaptive concurrency, the default
		line(1, "workers: %d", workers)
	}
	line(1, "max_pages: %d", j.MaxPages)
	line(1, "max_depth: %d", j.MaxDepth)
	line(1, "lease_timeout: %ds", cmp.Or(j.LeaseSeconds, 60))
	if j.Budget > 0 {
		line(1, "max_credits: %d", j.Budget)
	}

	line(0, "seeds:")
	lists := map[string][]Seed{}
	for _, sd := range j.Seeds {
		lists[sd.Key] = append(lists[sd.Key], sd)
	}
	platform := ""
	for _, key := range sortedKeys(lists) {
		p, name, _ := strings.Cut(key, ".")
		if p != platform {
			line(1, "%s:", p)
			platform = p
		}
		var inline, file []string
		for _, sd := range lists[key] {
			if sd.InFile {
				file = append(file, sd.Value)
			} else {
				inline = append(inline, fmt.Sprintf("%q", sd.Value))
			}
		}
		if len(inline) > 0 {
			line(2, "%s: [%s]", name, strings.Join(inline, ", "))
		}
		if len(file) > 0 {
			fname := key + ".txt" // shortvideo.profiles.txt: one file per list
			if err := os.WriteFile(filepath.Join(dir, fname), []byte(strings.Join(file, "\n")+"\n"), 0o644); err != nil {
				return "", err
			}
			line(2, "%s_file: %s", name, fname)
		}
	}

	var edges []string
	edge := func(key string, l *List) {
		if l == nil {
			return
		}
		e := fmt.Sprintf("%s: {max_pages: %d", key, l.MaxPages)
		if l.StopAtSeen {
			e += ", stop_at_seen: true"
		}
		edges = append(edges, e+"}")
	}
	edge("followers", j.Followers)
	edge("following", j.Following)
	edge("comments", j.Comments)
	if j.FollowerProfiles {
		edges = append(edges, "follower_profiles: {}")
	}
	edge("videos", j.Videos)
	edge("video_comments", j.VideoComments)
	edge("comment_replies", j.CommentReplies)
	if t := j.VideoTranscripts; t != nil {
		e := "video_transcripts: {}"
		if t.RefreshAfterDays > 0 {
			e = fmt.Sprintf("video_transcripts: {refresh_after: %dd}", t.RefreshAfterDays)
		}
		edges = append(edges, e)
	}
	edge("posts", j.Posts)
	edge("reels", j.Reels)
	if j.Highlights {
		edges = append(edges, "highlights: {}")
	}
	line(0, "expand: {%s}", strings.Join(edges, ", "))

	r := j.Reuse
	var reuse []string
	if r.RefreshAfterHours > 0 {
		reuse = append(reuse, fmt.Sprintf("refresh_after: %dh", r.RefreshAfterHours))
	}
	if r.FullWalkEvery > 0 {
		reuse = append(reuse, fmt.Sprintf("full_walk_every: %d", r.FullWalkEvery))
	}
	if r.Adaptive {
		reuse = append(reuse, "adaptive: true")
		if r.MaxAgeDays > 0 {
			reuse = append(reuse, fmt.Sprintf("max_age: %dh", 24*r.MaxAgeDays))
		}
		if r.MinYield > 0 {
			reuse = append(reuse, fmt.Sprintf("min_yield: %g", r.MinYield))
		}
		if r.CounterWeight > 0 {
			reuse = append(reuse, fmt.Sprintf("counter_weight: %g", r.CounterWeight))
		}
	}
	if r.UpstreamCache != "" {
		reuse = append(reuse, "upstream_cache: "+r.UpstreamCache)
	}
	if len(reuse) > 0 {
		line(0, "reuse: {%s}", strings.Join(reuse, ", "))
	}
	if j.IncludeReplies {
		line(0, "comments: {include_replies: true}")
	}
	path := filepath.Join(dir, "job.yaml")
	return path, os.WriteFile(path, []byte(dropIdleEdges(path, b.String(), edges)), 0o644)
}

// dropIdleEdges leaves out of text's expand line the edges the crawler
// refuses as doing nothing in the job (issue 32: a hop at max_depth 0,
// comments once the shrink dropped the post seeds, a profile's lists once
// it dropped the profiles): they would change nothing the night does.
func dropIdleEdges(path, text string, edges []string) string {
	line := "expand: {" + strings.Join(edges, ", ") + "}\n"
	for range 3 {
		_, err := jobfile.Parse(path, []byte(text))
		errs, ok := err.(jobfile.Errors)
		if !ok {
			return text
		}
		idle := map[string]bool{}
		for _, e := range errs {
			if strings.HasPrefix(e.Msg, "does nothing") || strings.HasPrefix(e.Msg, "sets nothing") {
				idle[strings.TrimPrefix(e.Key, "expand.")] = true
			}
		}
		if len(idle) == 0 {
			return text
		}
		edges = slices.DeleteFunc(slices.Clone(edges), func(e string) bool {
			name, _, _ := strings.Cut(e, ":")
			return idle[name]
		})
		next := "expand: {" + strings.Join(edges, ", ") + "}\n"
		text, line = strings.Replace(text, line, next, 1), next
	}
	return text
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
