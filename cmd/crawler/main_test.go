package main

import (
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// Tests get a clone of a database migrated once per package
// (pgtest.DB); those of a database never migrated ask for pgtest.EmptyDB.
func TestMain(m *testing.M) { pgtest.MainMigrated(m) }
