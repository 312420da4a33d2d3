package runs

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/internal/db"
)

// Drift is how the shape of a run's answers differs from the job's
// previous run's (crawl.response_keys, sampled by the client): what users
// of a paid upstream ask to know when a dialect changes under them.
type Drift struct {
	// Against is the previous run compared with (nil: none sampled).
	Against *int64     `json:"against_run,omitempty"`
	New     []DriftKey `json:"new_keys"`
	Gone    []DriftKey `json:"gone_keys"`
}

// DriftKey is a key path of an endpoint's answers and how many sampled
// answers carried it (this run's for a new key, the previous run's for a
// gone one).
type DriftKey struct {
	Endpoint string `json:"endpoint"`
	Key      string `json:"key"`
	Answers  int64  `json:"answers"`
}

var schemaDrift = db.Prepare[db.RunArg]("SchemaDrift")

// LoadDrift reads the drift of run id's answers (at most 200 keys).
func LoadDrift(ctx context.Context, conn db.Querier, id int64) (*Drift, error) {
	d := &Drift{New: []DriftKey{}, Gone: []DriftKey{}}
	rows, _ := schemaDrift.Query(ctx, conn, db.RunArg{RunID: id})
	var change, endpoint, key *string
	var answers *int64
	_, err := pgx.ForEachRow(rows, []any{&d.Against, &change, &endpoint, &key, &answers}, func() error {
		if change == nil {
			return nil
		}
		k := DriftKey{Endpoint: *endpoint, Key: *key, Answers: *answers}
		if *change == "new" {
			d.New = append(d.New, k)
		} else {
			d.Gone = append(d.Gone, k)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema drift of run %d: %w", id, err)
	}
	return d, nil
}

// Summary is the drift in a line, "" when there is none to tell.
func (d *Drift) Summary() string {
	if d.Against == nil || len(d.New)+len(d.Gone) == 0 {
		return ""
	}
	return fmt.Sprintf("%d key paths new, %d gone since run %d", len(d.New), len(d.Gone), *d.Against)
}
