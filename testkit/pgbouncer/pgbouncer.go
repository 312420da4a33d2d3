// Package pgbouncer runs a throwaway PgBouncer in transaction pooling mode
// in front of a PostgreSQL server, for tests of what works through it (the
// binary comes from the Debian package, installed by
// scripts/ensure-pgbouncer.sh, as testkit/pgtmp's PostgreSQL does from
// scripts/ensure-postgres.sh).
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/socialcrawl/crawler/testkit/pgtmp"
)

// Options configures Start.
type Options struct {
	// Host and Port are the PostgreSQL server's; every database of it is
	// served (trust authentication, user postgres).
	Host string
	Port int
	// PoolSize is default_pool_size: the server connections per database
	// and user. Default 5.
	PoolSize int
}

// Bouncer is a running PgBouncer.
type Bouncer struct {
	cmd  *exec.Cmd
	dir  string
	port int
	done chan struct{}
}

// Binary finds pgbouncer: /usr/sbin/pgbouncer, else PATH.
func Binary() (string, error) {
	if fi, err := os.Stat("/usr/sbin/pgbouncer"); err == nil && fi.Mode()&0o111 != 0 {
		return "/usr/sbin/pgbouncer", nil
	}
	p, err := exec.LookPath("pgbouncer")
	if err != nil {
		return "", errors.New("pgbouncer not found (/usr/sbin/pgbouncer or PATH): run scripts/ensure-pgbouncer.sh (make test does)")
	}
	return p, nil
}

// Start runs pgbouncer in pool_mode transaction on a free port of
// 127.0.0.1 and waits until it serves a connection.
func Start(ctx context.Context, opts Options) (*Bouncer, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 5
	}
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		return nil, err
	}
	cred, err := pgtmp.ServerCredential()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = %d
max_client_conn = 2000
ignore_startup_parameters = extra_float_digits
logfile = %s
pidfile =
`, opts.Host, opts.Port, port, filepath.Join(dir, "users.txt"), opts.PoolSize, filepath.Join(dir, "pgbouncer.log"))
	files := map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	cmd := exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	cmd.Dir = dir
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgbouncer: %w", err)
	}
	b := &Bouncer{cmd: cmd, dir: dir, port: port, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(b.done) }()
	if err := b.waitReady(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// URL is a connection URL of database db through the bouncer. pgx's
// statement cache is off (default_query_exec_mode=cache_describe):
// transaction pooling keeps no named prepared statement between
// transactions.
func (b *Bouncer) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&default_query_exec_mode=cache_describe", b.port, db)
}

func (b *Bouncer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last error
	for {
		select {
		case <-b.done:
			return fmt.Errorf("pgbouncer exited: %s", b.log())
		default:
		}
		c, err := pgx.Connect(ctx, b.URL("postgres"))
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
			if err == nil {
				return nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer not ready: %v; %s", last, b.log())
		case <-time.After(20 * time.Millisecond): // polling a child process's port
		}
	}
}

func (b *Bouncer) log() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

// Close stops pgbouncer and removes its directory.
func (b *Bouncer) Close() error {
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done
	}
	return os.RemoveAll(b.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return strconv.Atoi(strings.TrimPrefix(l.Addr().String()[strings.LastIndexByte(l.Addr().String(), ':'):], ":"))
}
