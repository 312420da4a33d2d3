package db

// Lockstep is lockstep, for the tests of package db_test.
var Lockstep = lockstep
