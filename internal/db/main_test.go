package db_test

import (
	"context"
	"os"
	"testing"

	"github.com/socialcrawl/crawler/migrations"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) {
	pgtest.SetTemplate(func(ctx context.Context, url string) error { return migrations.UpURL(ctx, url) })
	os.Exit(pgtest.Main(m))
}
