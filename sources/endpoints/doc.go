// Package endpoints is the upstream's endpoints, both platforms': for
// each, its call (SVProfileCall, PSCommentsCall, ...: path and parameters
// in the contract's terms, checked before anything is sent) and the types
// its answer decodes into, in either dialect's spelling. The short-video
// platform's are in shortvideo*.go (SV), the photo-sharing platform's in
// photosocial*.go (PS); the real service's own endpoints, which the
// contract lacks, in *_content.go.
//
// A call is built with package sources' constructors and sent by
// sources.Do, which translates it to the job's dialect and handles
// retries, credits and errors; decoding uses sources' tolerant types
// (Text, Int64, Flag, ...), so a counter sent as a string or an id sent as
// a number still decodes.
package endpoints
