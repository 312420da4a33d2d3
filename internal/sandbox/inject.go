package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// inject is the fault layer, between authorize and route. In order:
//
//  1. the key's token bucket: no token -> 429 with Retry-After;
//  2. the key's credit balance: 0 -> 402; else a credit is held until the
//     status is written and given back unless the answer is billable;
//  3. the draw (faultBox.draw): script entry or seeded outcome, and delay;
//  4. the delay (Latency + jitter); a client giving up here gets nothing;
//  5. the outcome: an error status, a hang, or the endpoint (its 200 body
//     cut when truncated).
//
// Requests rejected in 1 or 2 are answered at once, without latency, and
// take no place in the script or the attempt numbers, so the seeded faults
// do not depend on the bucket's timing.
func (s *Server) inject(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		ex := exchangeFrom(r.Context())
		if ok, wait := s.bucket.take(ex.key, s.now()); !ok {
			s.writeRateLimited(rw, ex, wait)
			return
		}
		ok, limited, left := s.credits.hold(ex.key)
		if !ok {
			ex.fault = "out_of_credits"
			writeOutOfCredits(rw)
			return
		}
		if limited {
			ex.creditsLimited, ex.creditsLeft = true, left
			sw := &statusWriter{ResponseWriter: rw, onStatus: func(status int) {
				if !ex.billable(status) {
					s.credits.release(ex.key)
				}
			}}
			defer func() {
				if sw.status == 0 { // nothing was answered
					s.credits.release(ex.key)
				}
			}()
			rw = sw
		}

		d := s.faults.draw(ex.key, ex.path, r.URL.RawQuery)
		if !s.wait(r.Context(), d.delay) {
			ex.abandoned = true
			return
		}
		switch d.action {
		case actStatus:
			ex.fault = "error"
			if d.scripted {
				ex.fault = "script"
			}
			s.writeStatus(rw, ex, d.status)
		case actHang:
			ex.fault, ex.hung = "hang", true
			s.hang(rw, r, ex, d.hangMax)
		case actTruncate:
			ex.fault, ex.truncate = "truncate", true
			next.ServeHTTP(rw, r)
		default:
			next.ServeHTTP(rw, r)
		}
	})
}

// wait sleeps d unless the client gives up first (false) or the server is
// closed (true, at once).
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	if s.holding != nil {
		s.holding()
	}
	select {
	case <-t.C:
		return true
	case <-s.closing:
		return true
	case <-ctx.Done():
		return false
	}
}

// hang holds the request until the client gives up (nothing is sent), limit
// elapses (504) or the server is closed (503).
func (s *Server) hang(rw http.ResponseWriter, r *http.Request, ex *exchange, limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	if s.holding != nil {
		s.holding()
	}
	select {
	case <-t.C:
		writeError(rw, &apiError{status: http.StatusGatewayTimeout, code: errorCode(http.StatusGatewayTimeout),
			message: fmt.Sprintf("injected fault: the upstream did not answer within %v", limit)})
	case <-s.closing:
		writeError(rw, &apiError{status: http.StatusServiceUnavailable, code: errorCode(http.StatusServiceUnavailable),
			message: "the sandbox is closing"})
	case <-r.Context().Done():
		ex.abandoned = true
	}
}

// writeStatus answers an injected error status.
func (s *Server) writeStatus(rw http.ResponseWriter, ex *exchange, status int) {
	switch status {
	case http.StatusTooManyRequests:
		s.writeRateLimited(rw, ex, max(time.Second, s.bucket.wait(ex.key, s.now())))
	case http.StatusPaymentRequired:
		writeOutOfCredits(rw)
	default:
		writeError(rw, &apiError{status: status, code: errorCode(status),
			message: fmt.Sprintf("injected fault: the upstream answered %d", status)})
	}
}

// writeRateLimited answers 429 announcing wait per the Retry-After mode.
func (s *Server) writeRateLimited(rw http.ResponseWriter, ex *exchange, wait time.Duration) {
	if ex.fault == "" {
		ex.fault = "rate_limited"
	}
	ex.retryAfter = wait
	setRetryAfter(rw.Header(), s.retryMode, s.now(), wait)
	writeError(rw, &apiError{status: http.StatusTooManyRequests, code: errorCode(http.StatusTooManyRequests),
		message: "too many requests for this API key: retry later"})
}

// outOfCreditsBody is the real service's 402 body: no error code.
type outOfCreditsBody struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func writeOutOfCredits(rw http.ResponseWriter) {
	writeJSON(rw, http.StatusPaymentRequired, outOfCreditsBody{Message: OutOfCreditsMessage})
}

// errorCode is the error field of an injected status.
func errorCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad_request"
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusNotFound:
		return "not_found"
	case http.StatusMethodNotAllowed:
		return "method_not_allowed"
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusInternalServerError:
		return "internal"
	case http.StatusBadGateway:
		return "bad_gateway"
	case http.StatusServiceUnavailable:
		return "unavailable"
	case http.StatusGatewayTimeout:
		return "upstream_timeout"
	}
	return "error"
}

// withCredits adds the real service's credit fields at the end of a JSON
// object: credits_remaining (when limited) then credits_charged.
func withCredits(body []byte, limited bool, left, charged int64) []byte {
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return body
	}
	var b []byte
	b = append(b, body[:end]...)
	if t := bytes.TrimSpace(b); len(t) > 0 && t[len(t)-1] != '{' {
		b = append(b, ',')
	}
	if limited {
		b = append(b, `"credits_remaining":`...)
		b = strconv.AppendInt(b, left, 10)
		b = append(b, ',')
	}
	b = strconv.AppendInt(append(b, `"credits_charged":`...), charged, 10)
	return append(b, body[end:]...)
}

// writeCut announces body's full length but sends its first half, so the
// client reads an unexpected EOF; net/http closes a connection whose answer
// is shorter than its Content-Length.
func writeCut(rw http.ResponseWriter, body []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(body[:len(body)/2])
}
