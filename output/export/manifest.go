package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/socialcrawl/crawler/internal/db"
	"github.com/socialcrawl/crawler/kinds"
)

// ManifestName is the manifest's file name in an export's directory.
const ManifestName = "manifest.json"

// Manifest says what an export holds and where it came from. It records no
// time of its own writing: the same database and as-of give the same
// manifest, as they give the same files.
type Manifest struct {
	Version int    `json:"manifest_version"`
	Crawler string `json:"crawler_version"`
	Format  Format `json:"format"`
	// AsOf is the run given to --as-of; nil: the latest state.
	AsOf *int64 `json:"as_of_run"`
	// LastRun is the latest run the export includes (its runs are all the
	// runs up to it); 0 when the database has none.
	LastRun int64 `json:"last_run"`
	Jobs    []Job `json:"jobs"`
	Runs    []Run `json:"runs"`
	// Credits is what each endpoint cost each run included.
	Credits []Credits `json:"credits"`
	// CreditsByEndpoint sums Credits over the runs.
	CreditsByEndpoint []Credits `json:"credits_by_endpoint"`
	// Completeness is how the lists of each run ended.
	Completeness []Completeness `json:"completeness"`
	Objects      []Object       `json:"objects"`
	// NotReconstructed says, once for the export, what it could not give
	// as the runs left it: runs whose bookkeeping or snapshots were pruned,
	// and, as of a run, the columns the schema keeps one value of.
	NotReconstructed []string `json:"not_reconstructed"`
}

// Job is a job of the runs included, with the fingerprints its runs had
// (what they harvest: seeds, expand section, depth).
type Job struct {
	Name         string   `json:"name"`
	Fingerprints []string `json:"fingerprints"`
	Runs         []int64  `json:"runs"`
}

// Run is a run included.
type Run struct {
	ID            int64      `json:"id"`
	Job           string     `json:"job"`
	Fingerprint   string     `json:"fingerprint"`
	State         string     `json:"state"`
	StopReason    string     `json:"stop_reason,omitempty"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`
	CreditsBilled int64      `json:"credits_billed"`
	// Pruned: crawler prune removed the run's bookkeeping (tasks, samples,
	// archive), so views over crawl.tasks lack its walks.
	Pruned bool `json:"pruned,omitempty"`
	// SnapshotsPruned: its superseded snapshot and ranking rows are gone.
	SnapshotsPruned bool `json:"snapshots_pruned,omitempty"`
}

// Credits is what an endpoint cost (a run's, or all runs' when RunID is 0).
type Credits struct {
	RunID       int64  `json:"run_id,omitempty"`
	Endpoint    string `json:"endpoint"`
	Requests    int64  `json:"requests"`
	Billed      int64  `json:"credits_billed"`
	Free        int64  `json:"free"`
	Cached      int64  `json:"cached"`
	RateLimited int64  `json:"rate_limited"`
	Errors      int64  `json:"errors"`
}

// Completeness counts a run's lists of a kind that ended one way: by
// crawl.tasks.outcome (an outcome a later migration adds shows with its
// name), or by state while unfinished.
type Completeness struct {
	RunID   int64  `json:"run_id"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
	Meaning string `json:"meaning"`
	Lists   int64  `json:"lists"`
}

// outcomeMeaning says what a list's outcome means for its completeness.
var outcomeMeaning = map[string]string{
	"done_end":          "walked whole",
	"done_page_limit":   "capped at its page limit",
	"done_stop_at_seen": "stopped at seen (the rest stored by earlier runs)",
	"done_guard":        "stopped by a loop guard (incomplete)",
	"skipped_fresh":     "not walked: an earlier walk is fresh (refresh_after)",
	"skipped_adaptive":  "not walked: the adaptive schedule did not revisit it",
	"skipped_budget":    "not walked: the night's credits did not cover it",
	"skipped_not_found": "not walked: no such item upstream",
	"skipped_retired":   "not walked: the endpoint is retired in the dialect",
	"failed":            "failed (incomplete)",
	"failed_blocked":    "failed: the platform blocks it",
	"failed_unstorable": "failed: what it fetched cannot be stored",
	"pending":           "unfinished: not started",
	"leased":            "unfinished: in progress when the export read it",
}

// Object is a table or view exported.
type Object struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"` // table or view
	Rows    int64    `json:"rows"`
	OrderBy []string `json:"order_by"`
	Columns []Column `json:"columns"`
	Files   []File   `json:"files"`
	// AsOf says how the object was cut at the run (exact, or what is not),
	// as of a run only.
	AsOf []string `json:"as_of,omitempty"`
}

// File is one file of an object, its path relative to the export's
// directory.
type File struct {
	Path   string `json:"path"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

var (
	exportRuns         = db.Prepare[asOfArg]("ExportRuns")
	exportCredits      = db.Prepare[asOfArg]("ExportCredits")
	exportCompleteness = db.Prepare[completenessArg]("ExportCompleteness")
)

type asOfArg struct {
	AsOf int64 `db:"as_of"`
}

type completenessArg struct {
	AsOf  int64    `db:"as_of"`
	Kinds []string `db:"kinds"`
}

// provenance fills the runs, jobs, credits and completeness of m.
func provenance(ctx context.Context, q db.Querier, m *Manifest) error {
	rows, err := exportRuns.Query(ctx, q, asOfArg{m.LastRun})
	if err != nil {
		return err
	}
	for rows.Next() {
		var r Run
		var pruned, snapPruned *time.Time
		if err := rows.Scan(&r.ID, &r.Job, &r.State, &r.StopReason, &r.StartedAt, &r.FinishedAt, &r.CreditsBilled,
			&r.Fingerprint, &pruned, &snapPruned); err != nil {
			rows.Close()
			return err
		}
		r.StartedAt = r.StartedAt.UTC()
		if r.FinishedAt != nil {
			t := r.FinishedAt.UTC()
			r.FinishedAt = &t
		}
		r.Pruned, r.SnapshotsPruned = pruned != nil, snapPruned != nil
		m.Runs = append(m.Runs, r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range m.Runs {
		i := slices.IndexFunc(m.Jobs, func(j Job) bool { return j.Name == r.Job })
		if i < 0 {
			m.Jobs = append(m.Jobs, Job{Name: r.Job})
			i = len(m.Jobs) - 1
		}
		j := &m.Jobs[i]
		j.Runs = append(j.Runs, r.ID)
		if r.Fingerprint != "" && !slices.Contains(j.Fingerprints, r.Fingerprint) {
			j.Fingerprints = append(j.Fingerprints, r.Fingerprint)
		}
		if r.Pruned {
			m.NotReconstructed = append(m.NotReconstructed, fmt.Sprintf(
				"run %d: its tasks were pruned (crawler prune): the views over crawl.tasks (follow_walks, follow_changes, run_ledger) and the completeness below lack its lists", r.ID))
		}
		if r.SnapshotsPruned {
			m.NotReconstructed = append(m.NotReconstructed, fmt.Sprintf(
				"run %d: its superseded snapshots and rankings were pruned: growth and as-of views lack them", r.ID))
		}
	}
	slices.SortFunc(m.Jobs, func(a, b Job) int { return cmpString(a.Name, b.Name) })

	rows, err = exportCredits.Query(ctx, q, asOfArg{m.LastRun})
	if err != nil {
		return err
	}
	total := map[string]*Credits{}
	for rows.Next() {
		var c Credits
		if err := rows.Scan(&c.RunID, &c.Endpoint, &c.Requests, &c.Billed, &c.Free, &c.Cached, &c.RateLimited, &c.Errors); err != nil {
			rows.Close()
			return err
		}
		m.Credits = append(m.Credits, c)
		t := total[c.Endpoint]
		if t == nil {
			t = &Credits{Endpoint: c.Endpoint}
			total[c.Endpoint] = t
		}
		t.Requests += c.Requests
		t.Billed += c.Billed
		t.Free += c.Free
		t.Cached += c.Cached
		t.RateLimited += c.RateLimited
		t.Errors += c.Errors
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range total {
		m.CreditsByEndpoint = append(m.CreditsByEndpoint, *t)
	}
	slices.SortFunc(m.CreditsByEndpoint, func(a, b Credits) int { return cmpString(a.Endpoint, b.Endpoint) })

	var lists []string
	for _, k := range kinds.All() {
		if k.List {
			lists = append(lists, k.Name)
		}
	}
	slices.Sort(lists)
	rows, err = exportCompleteness.Query(ctx, q, completenessArg{m.LastRun, lists})
	if err != nil {
		return err
	}
	for rows.Next() {
		var c Completeness
		if err := rows.Scan(&c.RunID, &c.Kind, &c.Outcome, &c.Lists); err != nil {
			rows.Close()
			return err
		}
		c.Meaning = outcomeMeaning[c.Outcome]
		if c.Meaning == "" {
			c.Meaning = c.Outcome // an outcome this crawler does not describe: its name says it
		}
		m.Completeness = append(m.Completeness, c)
	}
	return rows.Err()
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Problem is a file of an export that is not as its manifest says.
type Problem struct {
	Path string
	What string
}

// VerifyError is an export whose files do not match its manifest.
type VerifyError struct{ Problems []Problem }

func (e *VerifyError) Error() string {
	s := fmt.Sprintf("%d file(s) differ from the manifest:", len(e.Problems))
	for _, p := range e.Problems {
		s += fmt.Sprintf("\n  %s: %s", p.Path, p.What)
	}
	return s
}

// ErrNoManifest is a directory with no readable manifest.
var ErrNoManifest = errors.New("no export manifest")

// Verify checks every file of the export in dir against its manifest: its
// size and SHA-256. It returns the manifest, a *VerifyError listing the
// files that differ or are missing, or an error wrapping ErrNoManifest.
func Verify(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("%w in %s: %v", ErrNoManifest, dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w in %s: %s is not valid: %v", ErrNoManifest, dir, ManifestName, err)
	}
	var probs []Problem
	for _, o := range m.Objects {
		for _, f := range o.Files {
			n, sum, err := hashFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
			switch {
			case err != nil:
				probs = append(probs, Problem{f.Path, err.Error()})
			case n != f.Bytes:
				probs = append(probs, Problem{f.Path, fmt.Sprintf("%d bytes, the manifest says %d", n, f.Bytes)})
			case sum != f.SHA256:
				probs = append(probs, Problem{f.Path, fmt.Sprintf("sha256 %s, the manifest says %s", sum, f.SHA256)})
			}
		}
	}
	if len(probs) > 0 {
		return &m, &VerifyError{probs}
	}
	return &m, nil
}

func hashFile(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, hex.EncodeToString(h.Sum(nil)), err
}
