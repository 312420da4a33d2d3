package pipeline_test

import (
	"context"
	"os"
	"testing"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// TestMain is pgtest.MainMigrated, and drops the shared harvests'
// databases (shared_test.go) after the tests.
func TestMain(m *testing.M) {
	pgtest.SetTemplate(func(ctx context.Context, url string) error { return migrations.UpURL(ctx, url) })
	code := pgtest.Main(m)
	dropShared()
	os.Exit(code)
}
