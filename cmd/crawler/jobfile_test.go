package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialcrawl/crawler/testkit/childproc"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// binResult is how a crawler child process ended.
type binResult struct {
	code           int
	stdout, stderr string
}

// runBin runs the crawler binary with env as its whole environment.
func runBin(t *testing.T, env []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(childproc.Crawler(t), args...)
	cmd.Env = append(env, "PATH="+os.Getenv("PATH"))
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := binResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// Hostile and mistaken job files, through the real binary: each exits 2
// with one line naming file, line and key, neither the API key, a password
// in base_url nor the variable a job file may not name appears in any
// output, and the database is left untouched.
func TestBadJobFilesExit2RealBinary(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.EmptyDB(t)
	const pgSecret = "pg-secret-value-77"
	env := []string{"DATABASE_URL=" + dbURL, "CRAWLER_API_KEY=" + cliKey, "PGPASSWORD=" + pgSecret}
	head := "name: x\napi:\n  base_url: http://127.0.0.1:9/api\n"
	seed := "seeds: {shortvideo: {profiles: [a]}}\n"
	insecure := `would send the API key over plain http to a host that is not loopback: use https (plain http goes only to 127.0.0.0/8, ::1 and localhost, unless the operator passes crawler run --allow-insecure-http)`
	cred := "must not carry credentials (user:password@): the key is read from api.key_env and sent in x-api-key"
	cases := []struct {
		name, text string
		args       []string
		want       string // stderr after "crawler: <path>"
	}{
		{"unknown deep key", head + "limits:\n  workerz: 3\n" + seed, nil, ":5: limits.workerz: unknown key (did you mean workers?)"},
		{"wrong type in a list", head + "seeds:\n  shortvideo:\n    profiles: [a, b, {x: 1}]\n", nil, ":6: seeds.shortvideo.profiles[2]: expected a string, got a mapping"},
		{"NUL in a keyword", head + "seeds:\n  shortvideo:\n    keyword_searches: [\"ca\\0ts\"]\n", nil,
			`:6: seeds.shortvideo.keyword_searches[0]: "ca\x00ts" contains the control character U+0000 at byte 2`},
		{"10 KB keyword", head + "seeds:\n  shortvideo:\n    top_searches: [" + strings.Repeat("k", 10_000) + "]\n", nil,
			":6: seeds.shortvideo.top_searches[0]: is 10000 bytes long; strings are at most 2048 bytes"},
		{"NaN rate", head + "  rate: .nan\n" + seed, nil, ":4: api.rate: must be a finite number, got .nan"},
		{"wrapping max_pages", head + "limits:\n  max_pages: 4294967296\n" + seed, nil,
			":5: limits.max_pages: must be between 1 and 2147483647, got 4294967296 (a list's page limit; omit the key for the default)"},
		{"zero workers", head + "limits:\n  workers: 0\n" + seed, nil, ":5: limits.workers: must be between 1 and 4096, got 0 (omit the key for the adaptive limit)"},
		{"1ms lease", head + "limits:\n  lease_timeout: 1ms\n" + seed, nil,
			":5: limits.lease_timeout: 1ms is shorter than api.timeout (1m0s): a lease must outlast a request; set at least 1m0s"},
		{"key_env outside the namespace", "name: x\napi:\n  base_url: https://elsewhere.example/api\n  key_env: PGPASSWORD\n" + seed, nil,
			`:4: api.key_env: "PGPASSWORD" is not a variable of the CRAWLER_ namespace (CRAWLER_ then A-Z, 0-9, _; e.g. CRAWLER_API_KEY): a job file may not name another variable`},
		{"credentials, no scheme", "name: x\napi:\n  base_url: user:hunter2-pw@host/api\n" + seed, nil, ":3: api.base_url: " + cred},
		{"credentials, no host", "name: x\napi:\n  base_url: http://user:hunter2-pw@\n" + seed, nil, ":3: api.base_url: " + cred},
		{"plain http elsewhere", "name: x\napi:\n  base_url: http://api.example.com/api\n" + seed, nil, `:3: api.base_url: "http://api.example.com/api" ` + insecure},
		{"--base-url with credentials", head + seed, []string{"--base-url", "//user:hunter2-pw@/x"}, "--base-url: " + cred},
		{"--base-url plain http elsewhere", head + seed, []string{"--base-url", "http://10.1.2.3/api"}, `--base-url: "http://10.1.2.3/api" ` + insecure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			job := writeJob(t, tc.text)
			r := runBin(t, env, append(append([]string{"run"}, tc.args...), job)...)
			want := "crawler: " + job + tc.want + "\n"
			if strings.HasPrefix(tc.want, "--") {
				want = "crawler: " + tc.want + "\n"
			}
			if r.code != exitUsage || r.stderr != want || r.stdout != "" {
				t.Errorf("code %d, stdout %q, stderr\n%q\nwant\n%q", r.code, r.stdout, r.stderr, want)
			}
			for _, secret := range []string{cliKey, "hunter2", pgSecret} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("%q in the output", secret)
				}
			}
		})
	}

	// A 50 MB job file is refused from its size (its memory cost is
	// measured by pipeline's TestJobFileMemory: a child's own rusage here
	// would include this test process's RSS, shared until exec).
	t.Run("50 MB", func(t *testing.T) {
		t.Parallel()
		big := filepath.Join(t.TempDir(), "big.yaml")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString("name: x\nseeds: {shortvideo: {profiles: [a]}}\n# "); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(50 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := runBin(t, env, "run", big)
		want := "crawler: " + big + ": the job file is more than 1048576 bytes; job files are at most 1048576 bytes (1 MiB)\n"
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("code %d, stderr %q", r.code, r.stderr)
		}
	})

	// Nothing was written: not even the schemas.
	t.Cleanup(func() {
		conn := testConn(t, dbURL)
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname IN ('crawl', 'shortvideo', 'photosocial')`).Scan(&n); err != nil || n != 0 {
			t.Errorf("schemas created by rejected jobs: %d (%v)", n, err)
		}
	})
}

// --allow-insecure-http is the operator's: with it, plain http to a host
// that is not loopback passes validation and the client's check (this run
// then stops at the next check, the unset DATABASE_URL).
func TestAllowInsecureHTTPFlag(t *testing.T) {
	t.Parallel()
	job := writeJob(t, "name: x\napi:\n  base_url: http://10.1.2.3/api\nseeds: {shortvideo: {profiles: [a]}}\n")
	env := map[string]string{"CRAWLER_API_KEY": cliKey}
	if r := invoke(t, env, "run", job); r.code != exitUsage || !strings.Contains(r.stderr, "would send the API key over plain http") {
		t.Errorf("without the flag: %+v", r)
	}
	if r := invoke(t, env, "run", "--allow-insecure-http", job); r.code != exitUsage || !strings.Contains(r.stderr, "DATABASE_URL is not set") {
		t.Errorf("with the flag: %+v", r)
	}
}
