package db

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// The SQLSTATEs the crawler's own functions raise (migrations).
const (
	// NotAdvancedCode: crawl.expect_advanced, when AdvanceTask matches no
	// row (the page was committed already, or the lease is gone).
	NotAdvancedCode = "CR001"
	// LeaseLostCode: crawl.expect_lease, when ReserveCredits took the
	// budget for a lease that is gone.
	LeaseLostCode = "CR002"
)

// Class is what to do about an error of the database. Classify decides
// it, once for every caller.
type Class int

const (
	// None: no error.
	None Class = iota
	// Fatal: neither the connection nor the data: a bug, or a resource
	// or operator condition of the server (SQLSTATE classes 53, 57, 58,
	// XX) that retrying cannot help. The run stops.
	Fatal
	// Unreachable: the database went away or does not accept
	// connections yet. Wait and retry, up to the outage timeout (Retry).
	Unreachable
	// Conflict: a deadlock (40P01) or serialization failure (40001).
	// Retry now, after a short jittered pause (ConflictBackOff).
	Conflict
	// Data: the database refuses what the statement holds: invalid
	// values (class 22), constraint violations (23), a value too large for
	// an index (54000)... The task fails, the run goes on.
	Data
	// Transient: the statement ran out of time, not the data out of
	// bounds: a statement timeout (57014) or a lock not available in time
	// (55P03) on a busy server. Retried like Unreachable (Retry), never a
	// reason to stop the run or fail a task while the outage timeout lasts.
	Transient
)

func (c Class) String() string {
	return [...]string{"none", "fatal", "unreachable", "conflict", "data", "transient"}[c]
}

// Retryable reports the classes Retry waits out: the database away, or
// a statement that ran out of time.
func (c Class) Retryable() bool { return c == Unreachable || c == Transient }

// Classify sorts an error of pgx by type and SQLSTATE, never by message.
func Classify(err error) Class {
	if err == nil {
		return None
	}
	// No free connection slot is not an outage: waiting does not make one.
	if TooManyConnections(err) {
		return Fatal
	}
	// Refused, reset or timed out while connecting; a server that is
	// starting or shutting down (57P03, 57P01) answers inside it too.
	if errors.As(err, new(*pgconn.ConnectError)) {
		return Unreachable
	}
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
		return classifySQLState(pgErr.Code)
	}
	switch {
	case errors.Is(err, pgconn.ErrConnClosed), // the driver closed it after a failure
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), // the server hung up mid-message
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		// Any other network failure, and timeouts: a read deadline, or a
		// statement's own context.DeadlineExceeded (a hung server).
		errors.As(err, new(net.Error)):
		return Unreachable
	}
	return Fatal
}

// classifySQLState sorts an error the server sent by its SQLSTATE.
func classifySQLState(code string) Class {
	switch code {
	case "57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03": // cannot_connect_now (starting, recovering)
		return Unreachable
	case "40001", // serialization_failure
		"40P01": // deadlock_detected
		return Conflict
	case "57014", // query_canceled: statement_timeout (a cancel by our own context comes back as pgconn's timeout error, Fatal)
		"55P03": // lock_not_available: lock_timeout
		return Transient
	case NotAdvancedCode:
		return Fatal // Commit turns it into errAlreadyApplied or an error of its own
	case "42P05", "26000": // duplicate or missing prepared statement
		return Fatal // a pooler in transaction mode: see PoolerStatements
	}
	switch code[:min(2, len(code))] {
	case "08": // connection exception
		return Unreachable
	case "53", "57", "58", "XX":
		return Fatal
	}
	return Data
}

// TooManyConnectionsCode is SQLSTATE 53300: the server (max_connections)
// or a pooler in front of it has no free connection slot.
const TooManyConnectionsCode = "53300"

// TooManyConnections reports a connection refused for want of a free slot
// (53300), also inside a pgconn.ConnectError: the run stops, with an error
// naming the setting (database.max_conns), instead of waiting it out as an
// outage.
func TooManyConnections(err error) bool {
	pgErr := (*pgconn.PgError)(nil)
	return errors.As(err, &pgErr) && pgErr.Code == TooManyConnectionsCode
}

// PoolerStatements reports a prepared statement found already existing
// (42P05) or missing (26000): pgx's statement cache through a pooler in
// transaction mode (PgBouncer), which hands each transaction another
// server connection. Set default_query_exec_mode=cache_describe in
// DATABASE_URL (docs/pgbouncer.md).
func PoolerStatements(err error) bool {
	pgErr := (*pgconn.PgError)(nil)
	return errors.As(err, &pgErr) && (pgErr.Code == "42P05" || pgErr.Code == "26000")
}

// IsData reports a page the database refuses for what it holds
// (Data): retrying cannot help, the task fails, the run goes on.
func IsData(err error) bool { return Classify(err) == Data }
