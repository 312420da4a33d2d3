package sandbox

// endpoint answers one GET: a 200 reply, or an *apiError.
type endpoint func(q query) (reply, error)

// reply is a 200 answer; free marks the one 200 that costs no credit (the
// photo-sharing profile of a private account).
type reply struct {
	body any
	free bool
}

func billable(body any) (reply, error) { return reply{body: body}, nil }

// routes maps the path after /api to its handler: the 18 endpoints of
// contract (docs/upstream.md), each registered by route next to its handler.
var routes = map[string]func(*world, query) (reply, error){}

// route registers h as the handler of path; a path registered twice panics
// when the package loads.
func route(path string, h func(*world, query) (reply, error)) struct{} {
	if _, dup := routes[path]; dup {
		panic("sandbox: route " + path + " registered twice")
	}
	routes[path] = h
	return struct{}{}
}

// endpoints binds the routes to w.
func (w *world) endpoints() map[string]endpoint {
	m := make(map[string]endpoint, len(routes))
	for path, h := range routes {
		m[path] = func(q query) (reply, error) { return h(w, q) }
	}
	return m
}
