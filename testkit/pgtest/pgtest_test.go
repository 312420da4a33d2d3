package pgtest

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

// templateSetups counts runs of the template setup registered in TestMain.
var templateSetups atomic.Int32

func TestMain(m *testing.M) {
	SetTemplate(func(ctx context.Context, url string) error {
		templateSetups.Add(1)
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "create table migrated (id int primary key, note text)")
		return err
	})
	os.Exit(Main(m))
}

func TestDBParallelTestsGetOwnDatabases(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		names []string
	)
	t.Run("group", func(t *testing.T) {
		for _, sub := range []string{"a", "b"} {
			t.Run(sub, func(t *testing.T) {
				t.Parallel()
				conn := connect(t, DB(t))
				var name string
				var rows int
				err := conn.QueryRow(t.Context(), "select current_database(), (select count(*) from migrated)").Scan(&name, &rows)
				if err != nil {
					t.Fatal(err)
				}
				if rows != 0 {
					t.Errorf("new database %s has %d rows, want 0", name, rows)
				}
				if _, err := conn.Exec(t.Context(), "insert into migrated values (1, $1)", sub); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				names = append(names, name)
				mu.Unlock()
			})
		}
	})
	if len(names) != 2 || names[0] == names[1] || !strings.HasPrefix(names[0], "pgtest_") {
		t.Fatalf("databases = %q, want two distinct pgtest_ names", names)
	}

	// Both are dropped when their tests end.
	_, admin, err := h.server()
	if err != nil {
		t.Fatal(err)
	}
	var left int
	if err := admin.QueryRow(t.Context(), "select count(*) from pg_database where datname = any($1)", names).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d test databases left after their tests ended", left)
	}
}

func TestTemplateSetupRunsOnce(t *testing.T) {
	t.Parallel()
	for range 3 {
		conn := connect(t, DB(t))
		if _, err := conn.Exec(t.Context(), "select * from migrated"); err != nil {
			t.Fatalf("template table missing: %v", err)
		}
	}
	if n := templateSetups.Load(); n != 1 {
		t.Errorf("template setup ran %d times, want 1", n)
	}
}

func TestPool(t *testing.T) {
	t.Parallel()
	pool, u := Pool(t)
	ctx := t.Context()
	if _, err := pool.Exec(ctx, "insert into migrated values (1, 'x'), (2, 'y')"); err != nil {
		t.Fatal(err)
	}
	var name string
	var n int
	if err := pool.QueryRow(ctx, "select current_database(), count(*) from migrated").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Path != "/"+name || n != 2 {
		t.Errorf("pool on %s with %d rows; want database %s with 2 rows", name, n, parsed.Path)
	}
}

// Clone copies a database's rows into a new one; the two then differ.
func TestClone(t *testing.T) {
	t.Parallel()
	pool, u := Pool(t)
	if _, err := pool.Exec(t.Context(), "insert into migrated values (1, 'x'), (2, 'y')"); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	c := connect(t, Clone(t, u))
	if _, err := c.Exec(t.Context(), "insert into migrated values (3, 'z')"); err != nil {
		t.Fatal(err)
	}
	var n, m int
	if err := c.QueryRow(t.Context(), "select count(*) from migrated").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := connect(t, u).QueryRow(t.Context(), "select count(*) from migrated").Scan(&m); err != nil {
		t.Fatal(err)
	}
	if n != 3 || m != 2 {
		t.Errorf("clone has %d rows, its source %d; want 3 and 2", n, m)
	}
}

// Shared's database outlives the test that made it, and Clone copies it.
func TestSharedOutlivesItsTest(t *testing.T) {
	t.Parallel()
	var u string
	t.Run("maker", func(t *testing.T) {
		u = Shared(t)
		c := connect(t, u)
		if _, err := c.Exec(t.Context(), "insert into migrated values (1, 'x')"); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	var n int
	if err := connect(t, Clone(t, u)).QueryRow(t.Context(), "select count(*) from migrated").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("the copy has %d rows, want 1", n)
	}
}

// EmptyDB returns an empty database although the package has a template.
func TestEmptyDBSkipsTheTemplate(t *testing.T) {
	t.Parallel()
	var tables int
	err := connect(t, EmptyDB(t)).QueryRow(t.Context(),
		"select count(*) from information_schema.tables where table_schema = 'public'").Scan(&tables)
	if err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("EmptyDB has %d tables, want 0", tables)
	}
}

// Without SetTemplate, DB returns an empty database.
func TestDBWithoutTemplate(t *testing.T) {
	t.Parallel()
	base, _, err := h.server()
	if err != nil {
		t.Fatal(err)
	}
	plain := &harness{started: true, base: base}
	t.Cleanup(func() { // registered first: runs after the database is dropped
		if plain.admin != nil {
			plain.admin.Close()
		}
	})
	u, err := plain.newDB(t, true)
	if err != nil {
		t.Fatal(err)
	}
	var tables int
	err = connect(t, u).QueryRow(t.Context(),
		"select count(*) from information_schema.tables where table_schema = 'public'").Scan(&tables)
	if err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("database without template has %d tables, want 0", tables)
	}
}

func TestDBWithoutMain(t *testing.T) {
	t.Parallel()
	_, err := (&harness{}).newDB(t, true)
	if err == nil || !strings.Contains(err.Error(), "TestMain") {
		t.Errorf("error = %v, want one pointing at TestMain", err)
	}
}

func TestOwnCluster(t *testing.T) {
	t.Parallel()
	c := OwnCluster(t)
	var one int
	if err := connect(t, c.URL()).QueryRow(t.Context(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("select 1 = %d, %v", one, err)
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, want string }{
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/pgtest_x?sslmode=disable"},
		{"postgresql://u:p%40ss%2Fw@db:5432", "postgresql://u:p%40ss%2Fw@db:5432/pgtest_x"},
		{"postgres://u@db/app?dbname=app&sslmode=require", "postgres://u@db/pgtest_x?sslmode=require"},
	} {
		base, err := parseURL(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		if got := withDatabase(base, "pgtest_x"); got != tc.want {
			t.Errorf("withDatabase(%s) = %s, want %s", tc.base, got, tc.want)
		}
	}
}

func TestParseURLHidesPassword(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"postgres://u:hunter2@db/%zz",
		"mysql://u:hunter2@db/app",
	} {
		_, err := parseURL(raw)
		if err == nil {
			t.Errorf("parseURL(%q) succeeded", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error reveals the password: %v", err)
		}
	}
}

func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}
