package migrations_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// released reads released.txt: the versions on main, ascending.
func released(t *testing.T) []int64 {
	t.Helper()
	f, err := os.Open("released.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []int64
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("released.txt:%d: %q is not a version", n, line)
		}
		if len(vs) > 0 && v <= vs[len(vs)-1] {
			t.Fatalf("released.txt:%d: %d after %d: the list is ascending", n, v, vs[len(vs)-1])
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("released.txt lists no version")
	}
	return vs
}

// checkNumbering says whether the migration files (versions) keep the
// numbering rule given the released versions: every released one is still
// there, and every other is numbered above the last released, so that
// goose, which refuses a migration below a database's version, applies it
// on every database at main's head.
func checkNumbering(files, rel []int64) error {
	for _, v := range rel {
		if !slices.Contains(files, v) {
			return fmt.Errorf("released migration %05d has no file: a released migration is never removed or renumbered", v)
		}
	}
	head := rel[len(rel)-1]
	for _, v := range files {
		if !slices.Contains(rel, v) && v < head {
			return fmt.Errorf("migration %05d is numbered below %05d, the newest on main: "+
				"goose refuses it on every database that has %05d; number it above (migrations/doc.go)", v, head, head)
		}
	}
	return nil
}

// Migrations keep the numbering rule (issue 33.6: 00036, 00040 and 00052
// were merged in that order, and a later 00044 would have made crawler
// migrate refuse on every database at 00052); the check catches a
// migration numbered below the released head and a released one removed.
func TestMigrationNumbering(t *testing.T) {
	t.Parallel()
	rel := released(t)
	files := migrations.Embedded()
	if err := checkNumbering(files, rel); err != nil {
		t.Error(err)
	}
	head := rel[len(rel)-1]
	below := head - 1
	for slices.Contains(files, below) {
		below--
	}
	if err := checkNumbering(append(slices.Clone(files), below), rel); err == nil {
		t.Errorf("a migration %05d below the head %05d passed the check", below, head)
	}
	if err := checkNumbering(slices.DeleteFunc(slices.Clone(files), func(v int64) bool { return v == head }), rel); err == nil {
		t.Errorf("the released %05d removed passed the check", head)
	}
}

// newDB creates a database for the test, a copy of template (template0:
// an empty one, not the migrated template's copy), and opens it; it
// returns its name.
func newDB(t *testing.T, admin *pgxpool.Pool, u, template string) (*sql.DB, string) {
	t.Helper()
	name := fmt.Sprintf("mig_head_%d", time.Now().UnixNano())
	if _, err := admin.Exec(t.Context(), `CREATE DATABASE `+name+` TEMPLATE `+template); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`) })
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Path = "/" + name
	db, err := sql.Open("pgx", pu.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, name
}

// only is the embedded migrations of the versions keep says to keep.
func only(t *testing.T, keep func(v int64) bool) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	entries, err := fs.ReadDir(migrations.FS(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || !keep(v) {
			continue
		}
		data, err := fs.ReadFile(migrations.FS(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = &fstest.MapFile{Data: data}
	}
	return out
}

// The newest migrations apply to a database that has all the others: one
// at main's head (the released migrations only, what every deployed
// database has) takes the ones not released yet, and one with all but the
// newest takes the newest. goose refuses a migration numbered below a
// version the database has (no out-of-order migrations), so this fails
// on one numbered below main's head, as TestMigrationNumbering does
// without a database.
func TestNewestMigrationsApplyAtHead(t *testing.T) {
	t.Parallel()
	rel := released(t)
	files := migrations.Embedded()
	latest := files[len(files)-1]
	cases := []struct {
		name string
		has  func(v int64) bool
	}{
		{"at main's head", func(v int64) bool { return slices.Contains(rel, v) }},
		{"all but the newest", func(v int64) bool { return v != latest }},
	}
	// The versions both cases have (the shorter of two runs of the oldest)
	// are applied once, to an empty database each case copies: a fresh
	// migration costs about a CPU-second under -race (goose's parser).
	ctx := t.Context()
	admin, u := pgtest.Pool(t)
	db, common := newDB(t, admin, u, "template0")
	p, err := goose.NewProvider(goose.DialectPostgres, db, only(t, func(v int64) bool { return cases[0].has(v) && cases[1].has(v) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("the versions of both: %v", err)
	}
	db.Close() // a database is copied with no one on it
	for _, c := range cases {
		db, _ := newDB(t, admin, u, common)
		before, err := goose.NewProvider(goose.DialectPostgres, db, only(t, c.has))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.Up(ctx); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS())
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Up(ctx)
		if err != nil {
			t.Errorf("%s, the rest: %v", c.name, err)
			continue
		}
		var applied, want []int64
		for _, r := range res {
			applied = append(applied, r.Source.Version)
		}
		for _, v := range files {
			if !c.has(v) {
				want = append(want, v)
			}
		}
		if !slices.Equal(applied, want) {
			t.Errorf("%s: applied %v, want %v", c.name, applied, want)
		}
		if v, err := p.GetDBVersion(ctx); err != nil || v != latest {
			t.Errorf("%s, then up: version %d, %v; want %d", c.name, v, err, latest)
		}
	}
}
