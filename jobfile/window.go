package jobfile

import (
	"slices"
	"strings"
	"time"

	"github.com/socialcrawl/crawler/kinds"
)

// validateWindows resolves the date windows (posted_after, posted_before)
// of the expand edges against now and refuses them where they would do
// nothing: on an edge whose list is not dated and newest first
// (kinds.WindowKeys); and max_pages where it would do nothing, on an edge
// to an entity fetched whole (kinds.MaxPagesKeys).
func (j *Job) validateWindows(now time.Time) Errors {
	var errs Errors
	dated, paged := kinds.WindowKeys(), kinds.MaxPagesKeys()
	for name, e := range j.Expand.Edges() {
		if *e == nil {
			continue
		}
		if !kinds.IsEdgeKey(name) && j.has("expand."+name) && !j.has("expand."+name+".max_pages") && !(*e).StopAtSeen {
			errs = append(errs, &Error{Key: "expand." + name, Msg: "sets nothing: it turns no edge on (the comments of post seeds and reels are fetched without it); give max_pages or stop_at_seen: true, or remove it"})
		}
		if j.has("expand."+name+".max_pages") && !slices.Contains(paged, name) {
			errs = append(errs, &Error{Key: "expand." + name + ".max_pages", Msg: "applies only to edges to lists: " + strings.Join(paged, ", ") +
				" (a reel's comments are bounded by comments.max_pages)"})
		}
		for key, msg := range (*e).ResolveWindow(now) {
			errs = append(errs, &Error{Key: "expand." + name + "." + key, Msg: msg})
		}
		if slices.Contains(dated, name) {
			continue
		}
		for _, key := range []string{"posted_after", "posted_before"} {
			if j.has("expand." + name + "." + key) {
				errs = append(errs, &Error{Key: "expand." + name + "." + key, Msg: "applies only to lists returned newest first whose entries carry the time they were posted: " +
					strings.Join(dated, ", ") + " (searches are ranked, not in time order)"})
			}
		}
	}
	return errs
}

// validateIdleKeys refuses the expand keys the file writes that do nothing
// in this job (kinds.IdleExpandKeys): an edge whose tasks the job never
// makes, or the page limit of lists it never walks.
func (j *Job) validateIdleKeys() Errors {
	if j.Expand == nil {
		return nil
	}
	var seedKinds, written []string
	for _, t := range j.SeedTasks() {
		seedKinds = append(seedKinds, t.Kind)
	}
	for _, f := range j.Seeds.FileList() {
		seedKinds = append(seedKinds, f.List().Kind().Name)
	}
	for name, e := range j.Expand.Edges() {
		if *e != nil && j.has("expand."+name) {
			written = append(written, name)
		}
	}
	var errs Errors
	for key, msg := range kinds.IdleExpandKeys(j, seedKinds, j.Limits.MaxDepth, written) {
		errs = append(errs, &Error{Key: "expand." + key, Msg: msg})
	}
	return errs
}
