// Package netfault serves HTTP on an address that can be taken off the
// network and put back, to test how clients live through an upstream
// outage: while it is down, connections to the address are refused.
package netfault

import (
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
	s.serve.Go(func() { _ = s.srv.Serve(ln) })
}

// track closes connections that fall idle while the server is down, so a
// client's pooled connection cannot reach it either.
func (s *Server) track(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
		return
	}
	s.conns[c] = st
	if st == http.StateIdle && s.down {
		_ = c.Close()
	}
}

// Down refuses new connections and closes idle ones; requests being served
// finish, and their connections close after the response.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down = true
	s.srv.SetKeepAlivesEnabled(false)
	_ = s.ln.Close()
	for c, st := range s.conns {
		if st == http.StateIdle || st == http.StateNew {
			_ = c.Close()
		}
	}
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
	s.srv.SetKeepAlivesEnabled(true)
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
