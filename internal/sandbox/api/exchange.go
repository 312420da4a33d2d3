package api

import (
	"context"
	"net/http"
	"time"
)

// Exchange is the per-request state shared along the server's chain. The
// fields after Arrived are set by the fault layer and the dialect before
// the status is written, so the counter sees them when it records.
type Exchange struct {
	Key      string    // accepted API key, or "" when missing or unknown
	Endpoint string    // path after the prefix when it is an endpoint, else the other-endpoint bucket
	Path     string    // URL path after the prefix (/api, or none in the real preset)
	Arrived  time.Time // when the request arrived

	Price          int64         // what a billable answer of Endpoint costs by Config.Prices; 0: the dialect's own cost
	Free           bool          // set by a dialect whose 200 answer costs no credit
	Charge         int64         // credits a billable answer costs; 0 is 1
	Fault          string        // what the fault layer did, for the log ("" = nothing)
	RetryAfter     time.Duration // delay announced by a 429
	CreditsLimited bool          // a credit is held for this request
	CreditsLeft    int64         // the balance after holding it
	Truncate       bool          // the 200 body must be cut
	Truncated      bool          // it was
	Hung           bool          // held by a hang
	Abandoned      bool          // the client gave up before any answer
	// AbandonedBilled: the client gave up, and the answer was made (and
	// billed) all the same (Faults.BillAbandoned).
	AbandonedBilled bool
}

// Credits takes the credits an answer costs beyond the one the fault
// layer held for it (a price, comments with replies): all n, or none
// when the balance is short (ok false). left is the balance after.
type Credits interface {
	HoldMore(key string, n int64) (ok bool, left int64)
}

// Billable reports whether an answer with this status costs a credit.
func (ex *Exchange) Billable(status int) bool { return status == http.StatusOK && !ex.Free }

type exchangeKey struct{}

// WithExchange returns r carrying ex.
func WithExchange(r *http.Request, ex *Exchange) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex))
}

// ExchangeOf is the exchange r carries.
func ExchangeOf(r *http.Request) *Exchange { return r.Context().Value(exchangeKey{}).(*Exchange) }

// StatusWriter remembers the status code and calls OnStatus once with it,
// before the status line goes out.
type StatusWriter struct {
	http.ResponseWriter
	Status   int
	OnStatus func(status int)
}

// Decide sets the status once, calling OnStatus.
func (w *StatusWriter) Decide(code int) {
	if w.Status != 0 {
		return
	}
	w.Status = code
	if w.OnStatus != nil {
		w.OnStatus(code)
	}
}

func (w *StatusWriter) WriteHeader(code int) {
	w.Decide(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	w.Decide(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
