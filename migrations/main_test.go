package migrations_test

import (
	"context"
	"os"
	"testing"

	"github.com/socialcrawl/crawler/internal/pgtest"
	"github.com/socialcrawl/crawler/migrations"
)

func TestMain(m *testing.M) {
	pgtest.SetTemplate(func(ctx context.Context, url string) error { return migrations.UpURL(ctx, url) })
	os.Exit(pgtest.Main(m))
}
