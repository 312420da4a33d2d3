package frontier

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// sendPipelined writes b's statements on conn as one pipeline ended by one
// Sync, as conn.SendBatch does (one round trip's wait for the results), but
// writes them to the server as they are encoded rather than all at the end:
// PostgreSQL runs a group's first statements (its BEGIN, its advances, a
// table's first rows) while the next are encoded, and the send buffer holds
// a statement, not the group. The server sees the same messages in the same
// order; nothing but the Sync ends the pipeline, so a group whose sending
// fails midway (an argument that cannot be encoded, a write error) sent no
// COMMIT: the pipeline is closed with the connection, and the server rolls
// back what it ran. Each distinct statement is prepared on the connection
// once (conn.Prepare, kept by pgx for the connection's life): commitGroup
// uses it in pgx's default mode only (cache_statement), not through
// PgBouncer's transaction pooling (docs/pgbouncer.md).
//
// The results are read as a batch's (Exec, then Close); a pool's batch
// tracer sees a batch, as it would with SendBatch.
func sendPipelined(ctx context.Context, conn *pgx.Conn, b *pgx.Batch) *pipelinedResults {
	r := &pipelinedResults{ctx: ctx, conn: conn, b: b}
	if bt, ok := conn.Config().Tracer.(pgx.BatchTracer); ok {
		r.tracer = bt
		r.ctx = bt.TraceBatchStart(ctx, conn, pgx.TraceBatchStartData{Batch: b})
	}
	sds := make([]*pgconn.StatementDescription, len(b.QueuedQueries))
	for i, q := range b.QueuedQueries {
		sd, err := conn.Prepare(ctx, q.SQL, q.SQL)
		if err != nil {
			r.err = fmt.Errorf("prepare: %w", err)
			return r
		}
		sds[i] = sd
	}
	enc := encoders.Get().(*encoder)
	defer enc.put()
	p := conn.PgConn().StartPipeline(ctx)
	r.pipeline = p
	unflushed := 0
	for i, q := range b.QueuedQueries {
		if err := enc.build(conn.TypeMap(), sds[i], q.Arguments); err != nil {
			r.fail(fmt.Errorf("encode arguments: %w", err))
			return r
		}
		p.SendQueryStatement(sds[i], enc.values, enc.formats, enc.results)
		// Written once a few kilobytes wait (a table's rows at once; the
		// advances, a hundred bytes each, in packets of their own).
		if unflushed += len(enc.buf); unflushed >= flushAt {
			if err := p.Flush(); err != nil {
				r.fail(err)
				return r
			}
			unflushed = 0
		}
	}
	if err := p.Sync(); err != nil {
		r.fail(err)
	}
	return r
}

// flushAt is how many encoded bytes sendPipelined keeps before writing them.
const flushAt = 16 << 10

// pipelinedResults reads the results of sendPipelined's statements.
type pipelinedResults struct {
	ctx      context.Context
	conn     *pgx.Conn
	b        *pgx.Batch
	pipeline *pgconn.Pipeline // nil: nothing was sent
	tracer   pgx.BatchTracer
	next     int // the statement Exec reads next
	err      error
	closed   bool
}

// fail ends the pipeline after a failure to send: with requests not synced,
// Close closes the connection (no COMMIT was sent).
func (r *pipelinedResults) fail(err error) {
	r.err = err
	_ = r.pipeline.Close()
	r.closed = true
}

// Exec reads the next statement's result.
func (r *pipelinedResults) Exec() (pgconn.CommandTag, error) {
	if r.err != nil {
		return pgconn.CommandTag{}, r.err
	}
	if r.next >= len(r.b.QueuedQueries) {
		r.err = errors.New("no more statements in the pipeline")
		return pgconn.CommandTag{}, r.err
	}
	q := r.b.QueuedQueries[r.next]
	r.next++
	start := time.Now()
	var tag pgconn.CommandTag
	res, err := r.pipeline.GetResults()
	if err == nil {
		if rr, ok := res.(*pgconn.ResultReader); ok {
			tag, err = rr.Close()
		} else {
			err = fmt.Errorf("unexpected pipeline result %T", res)
		}
	}
	r.err = err
	if r.tracer != nil {
		r.tracer.TraceBatchQuery(r.ctx, r.conn, pgx.TraceBatchQueryData{SQL: q.SQL, Args: q.Arguments, CommandTag: tag, Err: err, ReadStartTime: start})
	}
	return tag, err
}

// Close reads what is left of the pipeline (up to its Sync) and returns
// the first error.
func (r *pipelinedResults) Close() error {
	if !r.closed {
		r.closed = true
		if r.pipeline != nil {
			if err := r.pipeline.Close(); r.err == nil {
				r.err = err
			}
		}
		if r.tracer != nil {
			r.tracer.TraceBatchEnd(r.ctx, r.conn, pgx.TraceBatchEndData{Err: r.err})
		}
	}
	return r.err
}

// encoder encodes a statement's arguments into a buffer kept from one
// statement to the next and from one group to the next: pgx's own builder
// starts each statement from a few hundred bytes and grows, copying, to
// the statement's size (a thousand rows' arrays).
type encoder struct {
	buf     []byte
	values  [][]byte
	formats []int16
	results []int16
}

var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 64<<10)} }}

// put gives enc back, unless it grew past what is worth keeping.
func (enc *encoder) put() {
	if cap(enc.buf) > 8<<20 {
		return
	}
	encoders.Put(enc)
}

// build encodes args for sd as pgx.ExtendedQueryBuilder does: each in the
// format pgx prefers for it (text for a string, otherwise the type's), the
// other when that fails.
func (enc *encoder) build(m *pgtype.Map, sd *pgconn.StatementDescription, args []any) error {
	if len(sd.ParamOIDs) != len(args) {
		return fmt.Errorf("%d arguments for %d parameters", len(args), len(sd.ParamOIDs))
	}
	enc.buf, enc.values, enc.formats = enc.buf[:0], enc.values[:0], enc.formats[:0]
	for i, arg := range args {
		oid := sd.ParamOIDs[i]
		format := m.FormatCodeForOID(oid)
		switch arg.(type) {
		case string, *string:
			format = pgtype.TextFormatCode
		}
		v, err := enc.encode(m, oid, format, arg)
		if err != nil {
			other := int16(pgtype.TextFormatCode)
			if format == pgtype.TextFormatCode {
				other = pgtype.BinaryFormatCode
			}
			var err2 error
			if v, err2 = enc.encode(m, oid, other, arg); err2 != nil {
				return fmt.Errorf("argument %d: %w", i+1, err)
			}
			format = other
		}
		enc.values = append(enc.values, v)
		enc.formats = append(enc.formats, format)
	}
	// pgconn keeps the result formats until the results are read.
	enc.results = make([]int16, len(sd.Fields))
	for i, f := range sd.Fields {
		enc.results[i] = m.FormatCodeForOID(f.DataTypeOID)
	}
	return nil
}

// encode appends arg's encoding to the buffer and returns it (nil: NULL).
func (enc *encoder) encode(m *pgtype.Map, oid uint32, format int16, arg any) ([]byte, error) {
	start := len(enc.buf)
	buf, err := m.Encode(oid, format, arg, enc.buf)
	if err != nil {
		enc.buf = enc.buf[:start]
		return nil, err
	}
	if buf == nil {
		return nil, nil
	}
	enc.buf = buf
	return buf[start:len(buf):len(buf)], nil
}
