package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Error is an answer other than 200: its status, the code the contract's
// bodies carry in "error", and the message.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf is an *Error of status with its code (see CodeOf).
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Code: CodeOf(status), Message: fmt.Sprintf(format, args...)}
}

// BadRequest, NotFound and Forbidden are the errors the handlers answer.
func BadRequest(format string, args ...any) *Error {
	return Errorf(http.StatusBadRequest, format, args...)
}

func NotFound(format string, args ...any) *Error { return Errorf(http.StatusNotFound, format, args...) }

func Forbidden(format string, args ...any) *Error {
	return Errorf(http.StatusForbidden, format, args...)
}

// AsError is err as an *Error; anything else is a 500.
func AsError(err error) *Error {
	var ae *Error
	if !errors.As(err, &ae) {
		ae = &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
	}
	return ae
}

// CodeOf is the error field of an answer of status.
func CodeOf(status int) string {
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

type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// WriteError answers err as {"success":false,"error":code,"message":...};
// a 402 as WriteOutOfCredits does.
func WriteError(rw http.ResponseWriter, err error) {
	ae := AsError(err)
	if ae.Status == http.StatusPaymentRequired {
		WriteOutOfCredits(rw)
		return
	}
	WriteJSON(rw, ae.Status, errorBody{Error: ae.Code, Message: ae.Message})
}

// OutOfCreditsMessage is the message of a 402 answer, as the real service
// words it.
const OutOfCreditsMessage = "Looks like you're out of credits :( Top up your balance to continue."

// outOfCreditsBody is the real service's 402 body: no error code.
type outOfCreditsBody struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// WriteOutOfCredits answers 402 as the real service does.
func WriteOutOfCredits(rw http.ResponseWriter) {
	WriteJSON(rw, http.StatusPaymentRequired, outOfCreditsBody{Message: OutOfCreditsMessage})
}

// OnlyGET answers 405 to any method but GET, and says whether r is a GET.
func OnlyGET(rw http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	rw.Header().Set("Allow", http.MethodGet)
	WriteError(rw, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: "only GET is supported"})
	return false
}

// EncodeJSON encodes body; encoding/json sorts map keys and keeps struct
// field order, so the same value always gives the same bytes. HTML is not
// escaped so the embed markup reads as sent.
func EncodeJSON(body any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "encoding failed"}
	}
	return buf.Bytes(), nil
}

// Each is f of each of items, in order: a page's JSON list made from the
// world's items. Never nil, so an empty page encodes as [], not null.
func Each[T, J any](items []T, f func(T) J) []J {
	out := make([]J, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}

// WriteJSON encodes and writes body.
func WriteJSON(rw http.ResponseWriter, status int, body any) {
	b, err := EncodeJSON(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"success":false,"error":"internal","message":"encoding failed"}` + "\n")
	}
	WriteBody(rw, status, b)
}

// WriteBody writes an encoded JSON answer.
func WriteBody(rw http.ResponseWriter, status int, b []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(b)))
	rw.WriteHeader(status)
	_, _ = rw.Write(b)
}

// WriteCut announces body's full length but sends its first half, so the
// client reads an unexpected EOF; net/http closes a connection whose answer
// is shorter than its Content-Length.
func WriteCut(rw http.ResponseWriter, body []byte) {
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(body[:len(body)/2])
}
