package pgtmp

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// emptySQL brings a copy of the migrated template back to what it was: no
// row in any table but the migrations' own (goose_db_version, the only
// rows the migrations write) and every sequence restarted. The foreign
// keys' triggers are skipped (session_replication_role, a superuser's:
// elsewhere the statement fails), so the order of the deletes does not
// matter.
const emptySQL = `DO $$
DECLARE
    r record;
BEGIN
    SET LOCAL session_replication_role = replica;
    FOR r IN SELECT c.oid::regclass AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
               AND c.oid IS DISTINCT FROM to_regclass('public.goose_db_version') LOOP
        EXECUTE format('DELETE FROM %s', r.t);
    END LOOP;
    FOR r IN SELECT c.oid::regclass AS s FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind = 'S' AND n.nspname NOT LIKE 'pg\_%'
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.refobjid = to_regclass('public.goose_db_version')) LOOP
        EXECUTE format('ALTER SEQUENCE %s RESTART', r.s);
    END LOOP;
END $$`

// Empty ends every session on the database name (admin is a connection to
// another database of its server, dbURL the database's own URL) and
// empties it as a copy of the migrated template: a harness keeps it for
// its next use, where a new copy (CREATE DATABASE ... TEMPLATE, then its
// DROP) cost the server ~0.27 s of CPU and emptying ~0.03 s. It fails when
// a session came back meanwhile (a process still running), or the role
// may not skip triggers: drop the database then.
func Empty(ctx context.Context, admin interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, dbURL, name string) error {
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", name); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, emptySQL); err != nil {
		return err
	}
	var others int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()").Scan(&others); err != nil {
		return err
	}
	if others > 0 {
		return fmt.Errorf("pgtmp: %d sessions still open on %s", others, name)
	}
	return nil
}
