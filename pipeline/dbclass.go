package pipeline

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// dbClass is what to do about an error of the database. classifyDB decides
// it, once for every caller.
type dbClass int

const (
	// dbNone: no error.
	dbNone dbClass = iota
	// dbFatal: neither the connection nor the data: a bug, or a resource
	// or operator condition of the server (SQLSTATE classes 53, 57, 58,
	// XX) that retrying cannot help. The run stops.
	dbFatal
	// dbUnreachable: the database went away or does not accept
	// connections yet. Wait and retry, up to the outage timeout (retryDB).
	dbUnreachable
	// dbConflict: a deadlock (40P01) or serialization failure (40001).
	// Retry now, after a short jittered pause (conflictBackOff).
	dbConflict
	// dbData: the database refuses what the statement holds: invalid
	// values (class 22), constraint violations (23), a value too large for
	// an index (54000)... The task fails, the run goes on.
	dbData
)

func (c dbClass) String() string {
	return [...]string{"none", "fatal", "unreachable", "conflict", "data"}[c]
}

// classifyDB sorts an error of pgx by type and SQLSTATE, never by message.
func classifyDB(err error) dbClass {
	if err == nil {
		return dbNone
	}
	// Refused, reset or timed out while connecting; a server that is
	// starting or shutting down (57P03, 57P01) answers inside it too.
	if errors.As(err, new(*pgconn.ConnectError)) {
		return dbUnreachable
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
		return dbUnreachable
	}
	return dbFatal
}

// classifySQLState sorts an error the server sent by its SQLSTATE.
func classifySQLState(code string) dbClass {
	switch code {
	case "57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03": // cannot_connect_now (starting, recovering)
		return dbUnreachable
	case "40001", // serialization_failure
		"40P01": // deadlock_detected
		return dbConflict
	case notAdvancedCode:
		return dbFatal // Commit turns it into errAlreadyApplied or an error of its own
	}
	switch code[:min(2, len(code))] {
	case "08": // connection exception
		return dbUnreachable
	case "53", "57", "58", "XX":
		return dbFatal
	}
	return dbData
}

// isDataError reports a page the database refuses for what it holds
// (dbData): retrying cannot help, the task fails, the run goes on.
func isDataError(err error) bool { return classifyDB(err) == dbData }
