// Package netfault serves HTTP on an address that can be taken off the
// network and put back, to test how clients live through an upstream
// outage: while it is down, connections to the address are refused.
package netfault

import (
	"io"
	"net"
	"net/http"
	"sync"
)

// Server is an HTTP server whose listener can be closed (connections
// refused) and opened again on the same address.
type Server struct {
	// URL is http://host:port, stable across Down and Up.
	URL  string
	addr string
	srv  *http.Server

	mu    sync.Mutex
	ln    net.Listener
	down  bool
	conns map[net.Conn]http.ConnState
	serve sync.WaitGroup
}

// Start serves h on a free loopback port.
func Start(h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{addr: ln.Addr().String(), conns: map[net.Conn]http.ConnState{}}
	s.URL = "http://" + s.addr
	s.srv = &http.Server{Handler: h, ConnState: s.track}
	s.mu.Lock()
	s.startLocked(ln)
	s.mu.Unlock()
	return s, nil
}

func (s *Server) startLocked(ln net.Listener) {
	s.ln, s.down = ln, false
	s.serve.Go(func() { _ = s.srv.Serve(listener{ln, s}) })
}

func (s *Server) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
		return
	}
	s.conns[c] = st
}

// refuses reports whether bytes read on c start a request the server must
// not see: it is down and c is between requests.
func (s *Server) refuses(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.conns[c]
	return s.down && (!ok || st == http.StateNew || st == http.StateIdle)
}

// listener hands out conns that drop requests arriving while down.
type listener struct {
	net.Listener
	s *Server
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, s: l.s}, nil
}

// conn closes itself, unread, when a request arrives on it (a client's
// pooled connection) while the server is down: the handler never runs, so
// a request is either refused unseen or served and answered, never served
// and then cut. (Closing idle connections from Down instead would race with
// the server reading a request that just arrived.)
type conn struct {
	net.Conn
	s *Server
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.s.refuses(c) {
		_ = c.Conn.Close()
		return 0, io.EOF
	}
	return n, err
}

// Down refuses new connections, and requests arriving on open ones;
// requests being served finish and are answered.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	_ = s.ln.Close()
}

// Up listens on the same address again.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err
	}
	s.startLocked(ln)
	return nil
}

// IsDown reports whether connections are being refused.
func (s *Server) IsDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// Close stops the server and closes every connection.
func (s *Server) Close() {
	_ = s.srv.Close()
	s.serve.Wait()
}
