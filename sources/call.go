package sources

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// Lease is what the requests of one leased task may spend and must wait
// for, handed to every call explicitly (Do) so that a call's signature
// says what it spends: the pipeline's page lease reserves credits, holds
// body bytes until the page commits, archives the body and orders its
// statements after the previous page's commit. A nil Lease reserves and
// holds nothing (tools, tests): a body is given back once decoded.
type Lease interface {
	// Reserve is called before every attempt that may be billed, with what
	// the answer is expected to cost (1 but for the documented dearer
	// requests, Call.Credits); an error aborts the call. The pipeline
	// reserves the credits here.
	Reserve(ctx context.Context, endpoint string, credits int) error
	// Settle is told the outcome of every attempt Reserve let through that
	// got an HTTP response, or was never sent.
	Settle(ctx context.Context, o Outcome)
	// Hold keeps a decoded body's share of the in-flight body budget until
	// the page built from it is committed; release gives it back.
	Hold(release func())
	// BeforeBudgetWait runs before a body read waits for the in-flight
	// budget: a lease holding budget it can give back (the previous page,
	// its commit in flight) gives it back, so that no read waits on budget
	// only its own caller could free.
	BeforeBudgetWait()
	// Body is handed every 2xx body that decoded, after the key was
	// redacted from it, with the request it answered in the contract's
	// terms (endpoint and query before the dialect's translation, so that
	// a replay matches it whatever the dialect). It is the client's buffer, aliased by
	// the decoded values: copy what you keep.
	Body(endpoint, query string, body []byte)
}

// noLease is the nil Lease.
type noLease struct{}

func (noLease) Reserve(context.Context, string, int) error { return nil }
func (noLease) Settle(context.Context, Outcome)            {}
func (noLease) Hold(release func())                        { release() }
func (noLease) BeforeBudgetWait()                          {}
func (noLease) Body(string, string, []byte)                {}

func leaseOr(l Lease) Lease {
	if l == nil {
		return noLease{}
	}
	return l
}

// Call is one request to an endpoint and how its 2xx body decodes into an
// A: built by the endpoint's constructor (endpoints.SVProfileCall, ...), sent by Do,
// or applied to a stored body by Decode (the page archive's replay) with
// no transport at all.
type Call[A any] struct {
	request
	// err is a parameter refused before anything is sent or reserved.
	err    error
	decode func(*Answer) (A, error)
	// after, when set, is the endpoint's own reading of the outcome (Then).
	after func(A, error) (A, error)
}

// request is what a call sends, in the contract's terms.
type request struct {
	platform Platform
	path     string // below the platform's prefix, e.g. "/profile"
	query    url.Values
	// credits is what an answer is expected to cost when more than 1.
	credits int
}

// Credits is what the call's answer is expected to cost (and reserves):
// 1, but for the documented dearer requests (comments with replies).
func (c Call[A]) Credits() int { return max(c.credits, 1) }

// Endpoint is the call's endpoint in the spec's terms, e.g.
// "/shortvideo/profile".
func (c Call[A]) Endpoint() string { return specPrefix(c.platform) + c.path }

// Query is the call's query string, as sent.
func (c Call[A]) Query() string { return c.query.Encode() }

// Do sends call with c under lease l (retries, rate control and outages
// included) and decodes its answer.
func Do[A any](ctx context.Context, c *Client, l Lease, call Call[A]) (A, error) {
	var out, zero A
	err := call.err
	if err == nil {
		err = c.fetch(ctx, leaseOr(l), call.request, func(a *Answer) (err error) {
			out, err = call.decode(a)
			return err
		})
	}
	return call.finish(out, err, zero)
}

// Decode decodes body, a 2xx answer to this call stored earlier (its key
// already redacted), exactly as Do decodes a fresh one.
func (c Call[A]) Decode(body []byte) (A, error) {
	var out, zero A
	err := c.err
	if err == nil {
		err = checkShape(body)
		if err == nil {
			out, err = c.decode(newAnswer(body))
		}
		if e := (*Error)(nil); err != nil && !errors.As(err, &e) {
			err = malformed(c.Endpoint(), 1, err)
		}
	}
	return c.finish(out, err, zero)
}

func (c Call[A]) finish(out A, err error, zero A) (A, error) {
	if c.after != nil {
		return c.after(out, err)
	}
	if err != nil {
		return zero, err
	}
	return out, nil
}

// The constructors the endpoints' calls are built with (packages
// shortvideo and photosocial): each call names its platform, its path
// below the platform's prefix and its parameters, in the contract's terms.

// NewCall is a call of the endpoint at path that decodes its 2xx body with
// decode.
func NewCall[A any](p Platform, path string, q url.Values, decode func(*Answer) (A, error)) Call[A] {
	return Call[A]{request: request{platform: p, path: path, query: q}, decode: decode}
}

// ObjectCall is a call of an endpoint that answers one object. A charged
// answer whose data is all nulls is the real service's way of saying not
// found: ClassNotFound (billed, the task skipped), never a row of nulls.
// An endpoint whose decoder gives an all-null answer its own meaning (the
// photo-sharing profile's empty answer is a private account, a null list
// of transcripts no speech) is a NewCall.
func ObjectCall[A any](p Platform, path string, q url.Values, decode func(*Answer) (A, error)) Call[A] {
	return NewCall(p, path, q, func(a *Answer) (A, error) {
		if a.err == nil && a.env.allNull() {
			var zero A
			return zero, &Error{Endpoint: specPrefix(p) + path, Class: ClassNotFound, Status: 200,
				Message: "the answer's fields are all null: recorded as not found (billed)"}
		}
		return decode(a)
	})
}

// PageCall is a call of a list endpoint: its entries are under the first
// of listKeys the body has.
func PageCall[T any](p Platform, path string, q url.Values, listKeys ...string) Call[*Page[T]] {
	return ShapedPageCall[T](p, path, q, PageShape{Lists: listKeys})
}

// ShapedPageCall is a call of a list endpoint whose page has the given
// shape.
func ShapedPageCall[T any](p Platform, path string, q url.Values, shape PageShape) Call[*Page[T]] {
	return NewCall(p, path, q, func(a *Answer) (*Page[T], error) { return DecodeShapedPage[T](a, shape) })
}

// Then is the call with after reading its outcome: the decoded answer or
// the error, whatever failed (the reels search's page numbers and its 400
// past the last page).
func (c Call[A]) Then(after func(A, error) (A, error)) Call[A] {
	c.after = after
	return c
}

// Refused is a call refused before it is sent: a parameter is wrong.
func Refused[A any](err error) Call[A] { return Call[A]{err: err} }

// DecodeInto adapts a decoder that fills a value to a call's decode.
func DecodeInto[T any](f func(a *Answer, v *T) error) func(*Answer) (*T, error) {
	return func(a *Answer) (*T, error) {
		var v T
		if err := f(a, &v); err != nil {
			return nil, err
		}
		return &v, nil
	}
}

// DecodeObject decodes a single-object body into v, keeping the raw body and
// the credit fields.
func DecodeObject(a *Answer, v any, raw *json.RawMessage, credits *Credits) error {
	if a.err != nil {
		return a.err
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		return err
	}
	*raw = a.body
	*credits = a.env.credits()
	return nil
}

// NormalizeHandle strips a leading @ and surrounding space; the upstream
// wants handles without it.
func NormalizeHandle(h string) string {
	return strings.TrimPrefix(strings.TrimSpace(h), "@")
}

// WithCursor adds the cursor when there is one; the first page sends none.
func WithCursor(v url.Values, cursor string) url.Values {
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	return v
}

// CheckMediaURL refuses a post, reel or video URL that is empty or not an
// absolute http(s) URL. The URL is otherwise sent as given: a shortened URL
// may be refused upstream, and the error should name what was sent.
func CheckMediaURL(endpoint, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", ParamError(endpoint, "url", "is empty")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", ParamError(endpoint, "url", "must be an absolute http(s) URL")
	}
	return raw, nil
}
