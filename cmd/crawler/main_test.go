package main

import (
	"os"
	"testing"

	"github.com/socialcrawl/crawler/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
