package bench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// VmHWM is the peak resident set so far of a running process, in bytes.
func VmHWM(pid int) (int64, error) { return vmHWM(pid) }

// Hostile answers of the short-video profile endpoint, chosen by the handle's
// prefix: what an upstream that misbehaves on purpose (or by accident) can
// send. Each class is what the crawler's memory and CPU bounds are measured
// against (the tests in cmd/crawler and the hostile bench workload).
const (
	HostileStr     = "str"     // a 7.5 MiB string field, under the default body cap: stored
	HostileStr30   = "strbig"  // a 30 MiB string field with its Content-Length: refused unread
	HostileChunked = "chunked" // the same 30 MiB body without Content-Length: read to the cap, refused
	HostileFlood   = "flood"   // a 1 GiB body without Content-Length: read to the cap, refused
	HostileGzip    = "gzip"    // a gzip bomb: 256 KiB on the wire, 256 MiB inflated
	HostileDeep    = "deep"    // 8 recent videos each wrapped in 9,000 nested objects
	HostileDigits  = "digits"  // counters of 10,000 digits
	HostileExp     = "exp"     // counters with huge exponents (1e999999999)
	HostileTrickle = "trickle" // headers, then a byte every 50 ms, forever
	HostileEcho    = "echo"    // a 400 whose body echoes the key, raw and \u-escaped
)

// HostileHandler serves the hostile profiles; key is the API key it
// expects. Any other handle gets a plain profile.
func HostileHandler(key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h := r.URL.Query().Get("handle")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasPrefix(h, HostileStr30):
			serveSized(w, profileWithString(h, 30<<20)...)
		case strings.HasPrefix(h, HostileChunked):
			w.(http.Flusher).Flush() // no Content-Length: chunked
			for _, p := range profileWithString(h, 30<<20) {
				if _, err := w.Write(p); err != nil {
					return // the client hung up
				}
			}
		case strings.HasPrefix(h, HostileStr):
			serveSized(w, profileWithString(h, 15<<19)...)
		case strings.HasPrefix(h, HostileFlood):
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(`{"user":{"uniqueId":"` + h + `","nickname":"`))
			chunk := bytes.Repeat([]byte("x"), 1<<20)
			for range 1 << 10 {
				if _, err := w.Write(chunk); err != nil {
					return // the client hung up
				}
			}
			_, _ = w.Write([]byte(`"}}`))
		case strings.HasPrefix(h, HostileGzip):
			w.Header().Set("Content-Encoding", "gzip")
			serveSized(w, gzipBomb())
		case strings.HasPrefix(h, HostileDeep):
			var b strings.Builder
			fmt.Fprintf(&b, `{"user":{"uniqueId":%q},"itemList":[`, h)
			for i := range 8 {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strings.Repeat(`{"aweme_info":`, 9000))
				fmt.Fprintf(&b, `{"id":"%d"}`, i+1)
				b.WriteString(strings.Repeat("}", 9000))
			}
			b.WriteString("]}")
			serveSized(w, []byte(b.String()))
		case strings.HasPrefix(h, HostileDigits):
			d := strings.Repeat("9", 10000)
			serveSized(w, fmt.Appendf(nil, `{"user":{"uniqueId":%q},"stats":{"followerCount":%s,"heartCount":%s.0e-3}}`, h, d, d))
		case strings.HasPrefix(h, HostileExp):
			serveSized(w, fmt.Appendf(nil, `{"user":{"uniqueId":%q},"stats":{"followerCount":1e999999999,"heartCount":"-1E-999999999"}}`, h))
		case strings.HasPrefix(h, HostileTrickle):
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte(`{"user":{"uniqueId":"` + h + `","nickname":"`))
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := w.Write([]byte("x")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		case strings.HasPrefix(h, HostileEcho):
			var esc strings.Builder
			for _, c := range key {
				fmt.Fprintf(&esc, `\u%04x`, c)
			}
			w.WriteHeader(http.StatusBadRequest)
			_, _ = fmt.Fprintf(w, `{"message":"unknown handle %s for key %s","key":"%s"}`, h, key, esc.String())
		default:
			serveSized(w, fmt.Appendf(nil, `{"user":{"uniqueId":%q}}`, h))
		}
	})
}

func serveSized(w http.ResponseWriter, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// profileWithString is a profile whose nickname is n bytes long, in parts
// whose long middle is shared by every answer of that size: built once,
// not once per request (30 MiB each under the race detector).
func profileWithString(handle string, n int) [][]byte {
	head := fmt.Appendf(nil, `{"user":{"uniqueId":%q,"secUid":"S-%s","nickname":"`, handle, handle)
	return [][]byte{head, filler(n), []byte(`"},"stats":{"followerCount":1}}`)}
}

// fillers holds the shared strings of filler, by size; fillerMu makes
// the four requests of a class that arrive at once build one, not four
// (4 x 30 MiB, ~1 CPU-s under the race detector).
var (
	fillers  sync.Map
	fillerMu sync.Mutex
)

// filler is n bytes of "n", shared: callers must not write to it.
func filler(n int) []byte {
	if b, ok := fillers.Load(n); ok {
		return b.([]byte)
	}
	fillerMu.Lock()
	defer fillerMu.Unlock()
	if b, ok := fillers.Load(n); ok {
		return b.([]byte)
	}
	b := bytes.Repeat([]byte("n"), n)
	fillers.Store(n, b)
	return b
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// gzipBomb is a multi-member gzip stream (Go's reader reads every member):
// 1 MiB of zeros compressed once and repeated, cheap to build.
func gzipBomb() []byte {
	bombOnce.Do(func() {
		member := func(p []byte) []byte {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(p)
			_ = zw.Close()
			return buf.Bytes()
		}
		zeros := member(make([]byte, 1<<20))
		b := member([]byte(`{"user":{"uniqueId":"bomb","nickname":"`))
		for range 256 {
			b = append(b, zeros...)
		}
		bomb = append(b, member([]byte(`"}}`))...)
	})
	return bomb
}
