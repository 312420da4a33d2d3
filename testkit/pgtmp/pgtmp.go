package pgtmp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoBinaries is returned by Start when initdb, pg_ctl and postgres cannot
// be found under /usr/lib/postgresql/*/bin or in PATH.
var ErrNoBinaries = errors.New("pgtmp: PostgreSQL binaries (initdb, pg_ctl, postgres) not found under /usr/lib/postgresql/*/bin or in PATH (run scripts/ensure-postgres.sh)")

// errServerExited reports that the server process ended before it accepted
// connections (typically: the port was taken between picking and binding it).
var errServerExited = errors.New("pgtmp: server exited during startup")

const (
	// ReadyTimeout bounds how long Start and Restart wait for the server to
	// accept connections, on top of the caller's context.
	ReadyTimeout = 60 * time.Second
	// StopTimeout bounds how long StopImmediate and Close wait for the server
	// to exit before killing it.
	StopTimeout = 30 * time.Second

	dirPrefix     = "pgtmp-"
	ownerFile     = "owner"
	logFile       = "postgres.log"
	startAttempts = 3 // with a picked port, to survive losing the port to another process
	maxSocketPath = 107
)

// Options configures Start. The zero value is ready to use.
type Options struct {
	// Dir is the parent directory of the cluster directory.
	// Default: os.TempDir(). When running as root, every directory from Dir
	// up to / must be traversable by the postgres OS user.
	Dir string
	// Logger receives lifecycle events (start, stop, stale-cluster sweeps).
	// Default: discard.
	Logger *slog.Logger
	// Port is the TCP port the server listens on at 127.0.0.1.
	// Default 0: pick a free port (and pick again if another process takes
	// it before the server binds it).
	Port int
	// DurableCommits runs the server with synchronous_commit=on, so a commit
	// that was acknowledged survives StopImmediate even while other
	// transactions commit concurrently, as on a production server. Outage
	// tests need it; the default trades that for speed.
	DurableCommits bool
	// MaxConnections is the server's max_connections. Default 200; a test
	// of a client's connection bound sets it low.
	MaxConnections int
}

func (o Options) withDefaults() Options {
	o.Dir = cmp.Or(o.Dir, os.TempDir())
	o.MaxConnections = cmp.Or(o.MaxConnections, 200)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("pgtmp: Options.Port %d is outside 0-65535", o.Port)
	}
	return nil
}

// Cluster is a running (or stopped) throwaway PostgreSQL cluster owned by
// this process. Its methods are safe for concurrent use.
type Cluster struct {
	bins   binaries
	cred   *syscall.Credential // the postgres OS user when running as root, else nil
	dir    string
	port   int
	logger *slog.Logger
	sync   string // synchronous_commit setting
	// maxConns is max_connections.
	maxConns int

	mu     sync.Mutex
	server *server // nil when stopped
	closed bool
}

// server is one run of the postgres process.
type server struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // exit status, valid after done is closed
}

// Start creates a cluster in a new directory under opts.Dir with initdb,
// starts it and waits until it accepts connections. On error nothing is left
// behind. Directories of clusters whose owning process died without Close are
// removed first.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	begin := time.Now()
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	parent, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgtmp: Options.Dir: %w", err)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("pgtmp: Options.Dir: %w", err)
	}
	sweepStale(ctx, parent, bins, cred, opts.Logger)
	if cred != nil {
		if err := checkTraversable(parent, cred); err != nil {
			return nil, err
		}
	}

	dir, err := os.MkdirTemp(parent, dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgtmp: create cluster dir: %w", err)
	}
	c := &Cluster{bins: bins, cred: cred, dir: dir, port: opts.Port, logger: opts.Logger, sync: "off", maxConns: opts.MaxConnections}
	if opts.DurableCommits {
		c.sync = "on"
	}
	ok := false
	defer func() {
		if !ok {
			_ = c.Close()
		}
	}()
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	initdbTook := time.Since(begin)

	for attempt := 1; ; attempt++ {
		if opts.Port == 0 {
			if c.port, err = freePort(); err != nil {
				return nil, err
			}
		}
		c.mu.Lock()
		err = c.startServer(ctx)
		c.mu.Unlock()
		if err == nil {
			break
		}
		if opts.Port != 0 || attempt == startAttempts || !errors.Is(err, errServerExited) {
			return nil, err
		}
		c.logger.Info("pgtmp: server exited during startup, retrying on another port", "port", c.port, "attempt", attempt)
	}
	ok = true
	c.logger.Info("pgtmp: cluster ready", "port", c.port, "dir", c.dir,
		"initdb_ms", initdbTook.Milliseconds(), "total_ms", time.Since(begin).Milliseconds())
	return c, nil
}

// URL returns the connection URL of the cluster's postgres database as the
// postgres superuser (trust authentication, no password).
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Port returns the TCP port the server listens on at 127.0.0.1.
func (c *Cluster) Port() int { return c.port }

// Dir returns the cluster directory: data/ (the data directory), the server
// log postgres.log, and the Unix socket. Close removes it.
func (c *Cluster) Dir() string { return c.dir }

// StopImmediate stops the server with pg_ctl stop -m immediate, as in a crash:
// open connections break and new ones are refused until Restart. It returns
// nil once the server is down, also when it was already stopped.
//
// The cluster runs with synchronous_commit=off, which alone would let a crash
// lose transactions committed in the last few hundred milliseconds. So that
// outage tests see what a production server would keep, StopImmediate first
// flushes the WAL: every transaction committed before the call survives
// Restart; work in flight is lost.
func (c *Cluster) StopImmediate(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtmp: cluster is closed")
	}
	if c.running() {
		if err := c.flushWAL(ctx); err != nil {
			c.logger.Warn("pgtmp: flush WAL before stop", "port", c.port, "err", err)
		}
	}
	return c.stopServer(ctx)
}

// flushWAL commits a transaction that writes WAL with synchronous_commit=on:
// its commit flushes all WAL written so far, including the asynchronous
// commits before it. (A transaction that writes no WAL before its commit
// record, like select txid_current(), commits asynchronously anyway.)
func (c *Cluster) flushWAL(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(c.URL())
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = 5 * time.Second
	cfg.RuntimeParams["synchronous_commit"] = "on"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, "select pg_logical_emit_message(true, 'pgtmp', 'flush before stop')")
	return err
}

// Restart starts a stopped server again on the same port and data directory
// (running crash recovery after StopImmediate) and waits until it accepts
// connections.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("pgtmp: cluster is closed")
	}
	if c.running() {
		return errors.New("pgtmp: restart: server is running")
	}
	begin := time.Now()
	if err := c.startServer(ctx); err != nil {
		return err
	}
	c.logger.Info("pgtmp: cluster restarted", "port", c.port, "took_ms", time.Since(begin).Milliseconds())
	return nil
}

// Close stops the server (immediate mode) and removes the cluster directory.
// Calling it again does nothing.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	stopErr := c.stopServer(ctx)
	rmErr := os.RemoveAll(c.dir)
	if rmErr != nil {
		rmErr = fmt.Errorf("pgtmp: remove cluster dir: %w", rmErr)
	}
	c.logger.Info("pgtmp: cluster closed", "port", c.port, "dir", c.dir)
	return errors.Join(stopErr, rmErr)
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// prepare writes the owner file, hands the directory to the server user, runs
// initdb and appends the server settings.
func (c *Cluster) prepare(ctx context.Context) error {
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%d %s\n", os.Getpid(), cmp.Or(host, "-"))
	if err := os.WriteFile(filepath.Join(c.dir, ownerFile), []byte(owner), 0o644); err != nil {
		return fmt.Errorf("pgtmp: write owner file: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(c.dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgtmp: chown cluster dir to postgres: %w", err)
		}
	}
	if err := c.initData(ctx); err != nil {
		return err
	}

	socketDir := c.dir
	if len(socketDir)+len("/.s.PGSQL.65535") > maxSocketPath {
		// Too long for a Unix socket path: TCP is all this package needs.
		c.logger.Info("pgtmp: cluster dir too long for a Unix socket, listening on TCP only", "dir", c.dir)
		socketDir = ""
	}
	settings := "\n# pgtmp: throwaway cluster, speed over durability\n" +
		"listen_addresses = '127.0.0.1'\n" +
		"unix_socket_directories = '" + strings.ReplaceAll(socketDir, "'", "''") + "'\n" +
		"fsync = off\n" +
		"synchronous_commit = " + c.sync + "\n" +
		"full_page_writes = off\n" +
		"max_connections = " + strconv.Itoa(c.maxConns) + "\n" +
		"shared_buffers = 128MB\n"
	f, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("pgtmp: configure: %w", err)
	}
	_, err = f.WriteString(settings)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgtmp: configure: %w", err)
	}
	return nil
}

// initData fills the data directory with initdb's output: a copy of the
// one this machine's first cluster of these binaries kept (initdbCache),
// else initdb's own run, then kept. initdb costs some 1.3 CPU-s on a small
// VM (it starts the server several times), the copy a quarter of that.
func (c *Cluster) initData(ctx context.Context) error {
	cache := initdbCache(c.bins.initdb)
	if st, err := os.Stat(cache); cache != "" && err == nil && time.Since(st.ModTime()) > initdbCacheAge {
		// Made again now and then: a temp cleaner may have taken part of it.
		_ = os.RemoveAll(cache)
	}
	if cache != "" {
		if _, err := os.Stat(filepath.Join(cache, "PG_VERSION")); err == nil {
			out, err := c.command(ctx, "cp", "-a", cache, c.dataDir()).CombinedOutput()
			if err == nil {
				return nil
			}
			c.logger.Info("pgtmp: copy of the initdb cache failed, running initdb", "cache", cache, "err", err, "out", tail(out, 5))
			_ = os.RemoveAll(c.dataDir())
		}
	}
	out, err := c.command(ctx, c.bins.initdb, "-D", c.dataDir(), "-A", "trust", "-U", "postgres",
		"--no-sync", "-E", "UTF8", "--locale=C").CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("pgtmp: initdb: %w", context.Cause(ctx))
		}
		return fmt.Errorf("pgtmp: initdb: %w\n%s", err, tail(out, 20))
	}
	if cache != "" {
		// Kept whole or not at all: copied beside the cache, then renamed
		// (a process that renamed first wins; this copy goes).
		tmp := fmt.Sprintf("%s.tmp-%d-%d", cache, os.Getpid(), initdbCopies.Add(1)) // cp -a into a directory that exists would nest
		if _, err := c.command(ctx, "cp", "-a", c.dataDir(), tmp).CombinedOutput(); err == nil {
			if os.Rename(tmp, cache) != nil {
				_ = os.RemoveAll(tmp)
			}
		} else {
			_ = os.RemoveAll(tmp)
		}
	}
	return nil
}

// initdbCopies numbers this process's copies made for the cache.
var initdbCopies atomic.Int64

// initdbCacheAge is how long a kept initdb output serves.
const initdbCacheAge = 24 * time.Hour

// initdbCache is where initdb's output for the initdb binary at path is
// kept (under os.TempDir, named after the binary's path, size and time, so
// another PostgreSQL gets its own), or "" when the binary cannot be read.
func initdbCache(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s %d %d C UTF8 trust postgres", path, st.Size(), st.ModTime().UnixNano())
	return filepath.Join(os.TempDir(), fmt.Sprintf("pgtmpcache-initdb-%x", h.Sum64()))
}

// command returns a command run as the server user in the cluster dir.
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	setupCommand(cmd, c.dir, c.cred)
	return cmd
}

func setupCommand(cmd *exec.Cmd, dir string, cred *syscall.Credential) {
	// A cwd the postgres user cannot read (/root) makes the tools fail.
	cmd.Dir = dir
	cmd.Env = serverEnv()
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
}

// serverEnv is the environment without libpq/server variables (PGDATA,
// PGPORT, ...) that could override what pgtmp passes explicitly.
func serverEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "PG") })
}

func (c *Cluster) running() bool {
	if c.server == nil {
		return false
	}
	select {
	case <-c.server.done:
		return false
	default:
		return true
	}
}

// startServer runs postgres as a child process with its output appended to
// the log file and waits until it is ready. c.mu must be held.
func (c *Cluster) startServer(ctx context.Context) error {
	logf, err := os.OpenFile(filepath.Join(c.dir, logFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtmp: open server log: %w", err)
	}
	// The server is not bound to ctx: it outlives Start. It shares our
	// process group, so a terminal Ctrl-C stops it as well.
	cmd := exec.Command(c.bins.postgres, "-D", c.dataDir(), "-p", strconv.Itoa(c.port))
	setupCommand(cmd, c.dir, c.cred)
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	_ = logf.Close() // the child holds its own descriptor
	if err != nil {
		return fmt.Errorf("pgtmp: start postgres: %w", err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	c.server = s

	if err := c.waitReady(ctx, s); err != nil {
		_ = c.stopServer(context.WithoutCancel(ctx))
		return fmt.Errorf("%w\nserver log (%s):\n%s", err, filepath.Join(c.dir, logFile), c.logTail(20))
	}
	return nil
}

// waitReady polls with pgx until the server accepts connections, the process
// exits, or ctx (bounded by ReadyTimeout) ends.
func (c *Cluster) waitReady(ctx context.Context, s *server) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	cfg, err := pgx.ParseConfig(c.URL())
	if err != nil {
		return fmt.Errorf("pgtmp: %w", err)
	}
	cfg.ConnectTimeout = time.Second
	delay := 10 * time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastErr error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("%w on port %d: %v", errServerExited, c.port, s.err)
		case <-ctx.Done():
			return fmt.Errorf("pgtmp: server on port %d not ready: %w (last attempt: %v)", c.port, context.Cause(ctx), lastErr)
		case <-timer.C:
		}
		if lastErr = c.ping(ctx, cfg); lastErr == nil {
			return nil
		}
		timer.Reset(delay)
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// ping connects and checks that the server answering is ours, not another
// cluster that grabbed the port first.
func (c *Cluster) ping(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var dataDir string
	if err := conn.QueryRow(ctx, "select current_setting('data_directory')").Scan(&dataDir); err != nil {
		return err
	}
	if filepath.Clean(dataDir) != c.dataDir() {
		return fmt.Errorf("port %d is served by another cluster (%s)", c.port, dataDir)
	}
	return nil
}

// stopServer stops the server with pg_ctl stop -m immediate and reaps it.
// If pg_ctl fails (postmaster.pid not written yet early in startup) the
// process gets SIGQUIT, the same immediate shutdown; if it is still alive when
// ctx or StopTimeout ends, SIGKILL. c.mu must be held.
func (c *Cluster) stopServer(ctx context.Context) error {
	s := c.server
	if s == nil {
		return nil
	}
	c.server = nil
	select {
	case <-s.done:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, StopTimeout)
	defer cancel()
	out, err := c.command(ctx, c.bins.pgctl, "stop", "-D", c.dataDir(), "-m", "immediate", "-w").CombinedOutput()
	if err != nil {
		c.logger.Info("pgtmp: pg_ctl stop failed, signalling the server", "port", c.port, "err", err, "output", string(tail(out, 5)))
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
	}
	select {
	case <-s.done:
		c.logger.Info("pgtmp: server stopped", "port", c.port)
		return nil
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("pgtmp: server on port %d did not stop in time, killed: %w", c.port, context.Cause(ctx))
	}
}

// logTail returns the last lines of the server log.
func (c *Cluster) logTail(lines int) string {
	f, err := os.Open(filepath.Join(c.dir, logFile))
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	defer f.Close()
	const maxTail = 8 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > maxTail {
		_, _ = f.Seek(-maxTail, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(tail(b, lines))
}

// tail returns the last n lines of b.
func tail(b []byte, n int) []byte {
	b = bytes.TrimRight(b, "\n")
	for i, seen := len(b)-1, 0; i >= 0; i-- {
		if b[i] == '\n' {
			if seen++; seen == n {
				return b[i+1:]
			}
		}
	}
	return b
}

// freePort asks the kernel for a free port on 127.0.0.1. Another process may
// take it before the server binds it; Start then picks again.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtmp: pick a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pgtmp: pick a free port: %w", err)
	}
	return port, nil
}

type binaries struct{ initdb, pgctl, postgres string }

// findBinaries looks in /usr/lib/postgresql/*/bin (Debian layout, highest
// version first), then in PATH.
func findBinaries() (binaries, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		return -slices.Compare(versionOf(a), versionOf(b))
	})
	for _, d := range dirs {
		b := binaries{filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl"), filepath.Join(d, "postgres")}
		if isExecutable(b.initdb) && isExecutable(b.pgctl) && isExecutable(b.postgres) {
			return b, nil
		}
	}
	var b binaries
	for _, p := range []struct {
		dst  *string
		name string
	}{{&b.initdb, "initdb"}, {&b.pgctl, "pg_ctl"}, {&b.postgres, "postgres"}} {
		path, err := exec.LookPath(p.name)
		if err != nil {
			return binaries{}, ErrNoBinaries
		}
		*p.dst = path
	}
	return b, nil
}

// versionOf parses the version directory of /usr/lib/postgresql/<v>/bin.
func versionOf(binDir string) []int {
	var v []int
	for f := range strings.SplitSeq(filepath.Base(filepath.Dir(binDir)), ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return []int{-1}
		}
		v = append(v, n)
	}
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// serverCredential returns the postgres OS user to run initdb, pg_ctl and
// postgres as when this process is root (initdb refuses root), else nil.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtmp: running as root needs the postgres OS user (initdb refuses root): %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtmp: postgres uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("pgtmp: postgres gid %q: %w", u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// checkTraversable reports whether the user of cred can reach dir: every
// directory from dir up to / needs the search (x) bit for that user.
func checkTraversable(dir string, cred *syscall.Credential) error {
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgtmp: %w", err)
		}
		perm := fi.Mode().Perm()
		ok := perm&0o001 != 0
		if st, isUnix := fi.Sys().(*syscall.Stat_t); isUnix {
			ok = ok || (st.Uid == cred.Uid && perm&0o100 != 0) || (st.Gid == cred.Gid && perm&0o010 != 0)
		}
		if !ok {
			return fmt.Errorf("pgtmp: %s (mode %v) is not traversable by the postgres user; choose another Options.Dir or chmod o+x it", p, perm)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// sweepStale removes cluster directories under parent whose owner process
// (same host) is gone, stopping a server still running in them. Such leftovers
// come from processes killed before Close, e.g. by a go test timeout.
func sweepStale(ctx context.Context, parent string, bins binaries, cred *syscall.Credential, logger *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(parent, dirPrefix+"*"))
	host, _ := os.Hostname()
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being created
		}
		var pid int
		var owner string
		if _, err := fmt.Sscan(string(b), &pid, &owner); err != nil || owner != cmp.Or(host, "-") || processAlive(pid) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			stopCtx, cancel := context.WithTimeout(ctx, StopTimeout)
			cmd := exec.CommandContext(stopCtx, bins.pgctl, "stop", "-D", filepath.Join(dir, "data"), "-m", "immediate", "-w")
			setupCommand(cmd, dir, cred)
			_ = cmd.Run() // fails when no server runs: nothing to stop
			cancel()
		}
		if err := os.RemoveAll(dir); err != nil {
			logger.Warn("pgtmp: remove stale cluster", "dir", dir, "err", err)
			continue
		}
		logger.Info("pgtmp: removed stale cluster", "dir", dir, "owner_pid", pid)
	}
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return true // never signal process groups; treat as alive
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ServerCredential is the OS user servers run as when this process is root
// (postgres), nil otherwise: pgbouncer refuses root as initdb does.
func ServerCredential() (*syscall.Credential, error) { return serverCredential() }

// EnvMigratedTemplate names the environment variable holding the name of a
// database, on the server of DATABASE_URL, that the migrations of the tree
// under test were applied to and that nothing connects to (tools/withpg
// -migrated-template, for make test): test harnesses clone it instead of
// migrating a template of their own.
const EnvMigratedTemplate = "PGTEST_MIGRATED_TEMPLATE"

// MigratedTemplate is the database named by EnvMigratedTemplate when
// serverURL is on the same server as DATABASE_URL, else "".
func MigratedTemplate(serverURL string) string {
	name := os.Getenv(EnvMigratedTemplate)
	if name == "" {
		return ""
	}
	a, err1 := url.Parse(serverURL)
	b, err2 := url.Parse(os.Getenv("DATABASE_URL"))
	if err1 != nil || err2 != nil || a.Host == "" || a.Host != b.Host {
		return ""
	}
	return name
}

// FileCopy is the clause that makes CREATE DATABASE copy the template's
// files, where that is cheaper: PostgreSQL 15 and later default to
// writing every block of the template to the WAL, which cost a throwaway
// cluster (fsync off) ~0.45 s of CPU per test database (created and
// dropped) against ~0.25 s for the file copy and its checkpoint. With
// fsync on, that checkpoint would flush to disk: there, and on an older
// server or an error, it is "" (the default strategy).
func FileCopy(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) string {
	var ok bool
	err := q.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 150000 AND NOT current_setting('fsync')::bool`).Scan(&ok)
	if err != nil || !ok {
		return ""
	}
	return " STRATEGY file_copy"
}
