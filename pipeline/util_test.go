package pipeline_test

import (
	"encoding/base64"
	"strconv"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// secUID is the sandbox's documented secUid of a handle.
func secUID(handle string) string {
	return "MS4wLjABAAAA" + base64.RawURLEncoding.EncodeToString([]byte(handle))
}
