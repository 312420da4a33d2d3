// Package sim is the simulator of combined nights: a seeded generator of
// worlds (the sandbox's churn world with prices per endpoint, 403s,
// cached answers, faults, unfollows) and of job files (either dialect,
// budgets, workers, reuse with or without adaptive revisits, replies,
// seed files, max_depth, the archive), run night after night with second
// processes, kills and prunes, each night checked against the sandbox's
// ground truth (see the Inv constants in check.go).
//
// A seed decides everything but the timing: the world, the job, and what
// happens each night (Generate). Each night is a sandbox at the night's
// world day over real HTTP and the crawler binary run as real processes
// (so kill -9 is real) on a database of its own on a real PostgreSQL.
// Invariants hold whatever the timing; the one that compares timings runs
// the same night again, with one worker, on a copy of the database.
//
//	env, _ := sim.NewEnv(ctx, os.Getenv("DATABASE_URL"))
//	res, _ := env.Run(ctx, 1234, sim.Profiles["full"], sim.Options{Log: os.Stderr})
//	for _, v := range res.Violations { fmt.Println(v) }
//
// tools/simulate runs many seeds (make simulate SEEDS=N); a short profile
// runs in make test. docs/simulator.md says what each invariant checks and
// how to replay a failing seed. The anchors: FoundationDB's simulation
// testing, TigerBeetle's VOPR, Jepsen's checkers.
package sim
