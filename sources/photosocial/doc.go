// Package photosocial is the photo-sharing platform's endpoints: for
// each, its call (ProfileCall, CommentsCall, ...: path and parameters in
// the contract's terms, checked before anything is sent) and the types its
// answer decodes into, in either dialect's spelling.
//
// A call is built with package sources' constructors and sent by
// sources.Do, which translates it to the job's dialect and handles
// retries, credits and errors; decoding uses sources' tolerant types. The
// real service's own endpoints, which the contract lacks, are in
// content.go.
package photosocial
