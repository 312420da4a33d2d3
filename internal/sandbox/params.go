package sandbox

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// apiError is an answer other than 200, written as
// {"success":false,"error":code,"message":message}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, code: "not_found", message: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

func writeError(rw http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", message: "internal error"}
	}
	writeJSON(rw, ae.status, errorBody{Error: ae.code, Message: ae.message})
}

// query reads parameters. An optional parameter sent empty is the same as
// absent; a required one sent empty is missing.
type query struct{ v url.Values }

func (q query) get(name string) string { return q.v.Get(name) }

func (q query) required(name string) (string, error) {
	v := q.v.Get(name)
	if v == "" {
		return "", badRequest("missing required parameter %q", name)
	}
	return v, nil
}

// offset reads a cursor: absent or empty is 0, otherwise 1 to 18 decimal
// digits (no sign, no spaces, no exponent).
func (q query) offset(name string) (int64, error) {
	v := q.v.Get(name)
	if v == "" {
		return 0, nil
	}
	n, ok := parseDigits(v)
	if !ok {
		return 0, badRequest("parameter %q must be a non-negative integer offset", name)
	}
	return n, nil
}

// handle reads a handle parameter: required, and the upstream does not strip
// a leading '@' (the spec says "without @"), so one is rejected.
func (q query) handle(name string) (string, error) {
	h, err := q.required(name)
	if err != nil {
		return "", err
	}
	if h[0] == '@' {
		return "", badRequest("parameter %q must be given without the leading @", name)
	}
	return h, nil
}

// parseDigits accepts 1 to 18 ASCII digits, so the value and a page added to
// it never overflow int64.
func parseDigits(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
