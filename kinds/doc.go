// Package kinds declares what the crawler crawls: every task kind once
// (its name, the job-file seeds that start it, the call it makes and the
// pure mapping of the answer to rows and child tasks, its reuse rules), and
// every expansion edge once (which kinds make which, when the job turns it
// on, at what depth, with which refresh window and page limit), next to the
// kinds. The runner (package pipeline), crawler plan, replay and job
// validation read these declarations; a kind knows of a job only what the
// Job interface says.
//
// Adding an endpoint is one Kind registration in <platform>.go with its
// call (sources) and its mapping, plus its edges in edges.go; see
// docs/adding-an-endpoint.md.
package kinds
