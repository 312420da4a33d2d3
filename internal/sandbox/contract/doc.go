// Package contract is the sandbox's contract dialect: the 18 GET
// endpoints of docs/upstream.md under /api, each parsing the contract's
// parameters, asking the world (package world) and writing the contract's
// JSON from its own types (never the client's, so a misspelled field on
// either side fails the tests).
package contract
