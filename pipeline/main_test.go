package pipeline_test

import (
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainMigrated(m) }
