package sources

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Class is what the caller should do about a failed call. Every failure is
// classified once, by classify, and acted on by Class alone.
type Class int

const (
	// ClassRetry: 5xx, timeouts, connection resets, truncated or malformed
	// bodies. Retried with back-off; when retries run out the task fails.
	ClassRetry Class = iota + 1
	// ClassRateLimited: 429. Every worker on the key pauses, then retries.
	ClassRateLimited
	// ClassNotFound: 404. The item is recorded as not found; no retry.
	ClassNotFound
	// ClassBadRequest: 400 (or another 4xx). Recorded with the upstream's
	// message; no retry.
	ClassBadRequest
	// ClassAuth: 401, or 500 "apiKey is required". The key was refused:
	// the run stops.
	ClassAuth
	// ClassNoCredits: 402. The account is out of credits: the run stops and
	// can be resumed later.
	ClassNoCredits
	// ClassUnreachable: the upstream gave no HTTP answer at all (refused,
	// reset, DNS, TLS, timeouts) for longer than Config.OutageWindow: the
	// run stops and can be resumed once it is back. No task fails for it.
	ClassUnreachable
	// ClassBlocked: 403 from a service that answers it for one piece of
	// content the platform blocked (the real service): that item fails
	// with reason blocked, the run goes on.
	ClassBlocked
	// ClassRetired: the dialect says the upstream no longer serves the
	// endpoint; nothing is sent and the task ends skipped.
	ClassRetired
)

func (c Class) String() string {
	switch c {
	case ClassRetry:
		return "retryable"
	case ClassRateLimited:
		return "rate_limited"
	case ClassNotFound:
		return "not_found"
	case ClassBadRequest:
		return "bad_request"
	case ClassAuth:
		return "key_refused"
	case ClassNoCredits:
		return "out_of_credits"
	case ClassUnreachable:
		return "unreachable"
	case ClassBlocked:
		return "blocked"
	case ClassRetired:
		return "retired"
	}
	return "unknown"
}

// StopsRun reports whether the class ends the whole run rather than one task.
func (c Class) StopsRun() bool {
	return c == ClassAuth || c == ClassNoCredits || c == ClassUnreachable
}

// Error is a classified failure of one endpoint call. It never contains the
// API key.
type Error struct {
	Endpoint string        // e.g. "/shortvideo/user/followers"
	Status   int           // HTTP status, 0 for transport failures
	Class    Class         // what to do about it
	Message  string        // the upstream's message, or a description
	Attempts int           // how many attempts were made
	Retry    time.Duration // a 429's pause: its Retry-After, or a back-off without one
	Err      error         // underlying transport or decode error

	// A connection-level failure (no HTTP answer): outage when it is part
	// of an outage (free), else doubt, its streak (see outageGate).
	outage bool
	doubt  *streak
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", e.Endpoint, e.Class)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.Err != nil && e.Message == "" {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	switch e.Class {
	case ClassAuth:
		b.WriteString(" (the API key was refused; check the key variable)")
	case ClassNoCredits:
		b.WriteString(" (out of credits; add credits and resume the run)")
	case ClassUnreachable:
		b.WriteString(" (resume the run once the upstream is back)")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ParamError is a client-side refusal: the call is never sent.
func ParamError(endpoint, param, what string) error {
	return &Error{Endpoint: endpoint, Class: ClassBadRequest, Message: fmt.Sprintf("parameter %s %s", param, what)}
}

// ClassOf returns the class of err, or 0 when err is not an *Error.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return 0
}

// classify maps an HTTP status (and, for the one known case, its error
// body) to a Class. 2xx returns 0. A 403 is the platform blocking one
// piece of content, never the key: the real service answers 401 for a bad
// key, and 500 "apiKey is required" for a missing one.
func classify(status int, body []byte) Class {
	switch {
	case status >= 200 && status < 300:
		return 0
	case status == http.StatusTooManyRequests:
		return ClassRateLimited
	case status == http.StatusUnauthorized:
		return ClassAuth
	case status == http.StatusForbidden:
		return ClassBlocked
	case status == http.StatusInternalServerError && strings.Contains(upstreamMessage(body), "apiKey is required"):
		return ClassAuth
	case status == http.StatusPaymentRequired:
		return ClassNoCredits
	case status == http.StatusNotFound:
		return ClassNotFound
	case status == http.StatusRequestTimeout || status >= 500:
		return ClassRetry
	default:
		return ClassBadRequest
	}
}

// upstreamMessage extracts a short message from an error body of the forms
// {"message": "..."} or {"error": "..."}; it falls back to a snippet.
func upstreamMessage(body []byte) string {
	var v struct {
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) == nil {
		for _, raw := range []json.RawMessage{v.Message, v.Error} {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				return Truncate(s, 300)
			}
		}
	}
	return Truncate(strings.TrimSpace(string(body)), 200)
}

// Truncate cuts s to at most n bytes, on a character boundary, and marks
// the cut; the result is valid UTF-8 when s is.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// parseRetryAfter reads a Retry-After value in seconds or as an HTTP date.
// It returns 0 when the header is absent, unparsable or in the past; the
// result is capped.
func parseRetryAfter(v string, now time.Time, limit time.Duration) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs != secs {
			return 0
		}
		if secs > limit.Seconds() {
			return limit
		}
		d = time.Duration(secs * float64(time.Second))
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
		if d <= 0 {
			return 0
		}
	} else {
		return 0
	}
	return min(d, limit)
}
