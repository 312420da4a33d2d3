// Package api is what every request of the sandbox shares, whichever
// dialect answers it: the exchange the server's chain fills in as the
// request goes through, the parameters it reads, the errors it answers and
// the JSON bytes it writes. The dialects (contract, real) and the fault
// layer (faults) build on it; it knows nothing of the world.
package api
