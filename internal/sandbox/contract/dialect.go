package contract

import (
	"bytes"
	"cmp"
	"net/http"
	"strconv"

	"github.com/socialcrawl/crawler/internal/sandbox/api"
	"github.com/socialcrawl/crawler/internal/sandbox/world"
)

// handler answers one GET: a 200 reply, unless a read of its parameters
// (or the world) failed, the error p keeps.
type handler func(w *world.World, p *api.Params) reply

// reply is a 200 answer; free marks the one 200 that costs no credit (the
// photo-sharing profile of a private account).
type reply struct {
	body any
	free bool
}

func billable(body any) reply { return reply{body: body} }

// routes maps the path after /api to its handler: the 18 endpoints of
// the contract, each registered by route next to its handler (a cursor
// list by list).
var routes = map[string]handler{}

// route registers h as the handler of path; a path registered twice panics
// when the package loads.
func route(path string, h handler) struct{} {
	if _, dup := routes[path]; dup {
		panic("sandbox: route " + path + " registered twice")
	}
	routes[path] = h
	return struct{}{}
}

// list is the handler of a cursor list: key reads and checks the list's
// key (a keyword, a song, a post), then the offset of "cursor" is read;
// page is the world's list from that offset and answer the page's body.
// A list endpoint is then one declaration: route(path, list(key, page,
// answer)).
func list[T any](key func(*api.Params) string, page func(*world.World, string, int64) ([]T, world.Window),
	answer func([]T, world.Window) any) handler {
	return func(w *world.World, p *api.Params) reply {
		k, off := key(p), p.Offset("cursor")
		if !p.OK() {
			return reply{}
		}
		return billable(answer(page(w, k, off)))
	}
}

// Dialect serves the contract over a world.
type Dialect struct {
	w          *world.World
	realFields bool
	credits    api.Credits
}

// New is the contract over w; realFields adds the real service's credit
// fields to billable answers (Config.RealServiceFields); a priced answer
// (Exchange.Price) takes its extra credits from credits.
func New(w *world.World, realFields bool, credits api.Credits) *Dialect {
	return &Dialect{w: w, realFields: realFields, credits: credits}
}

// Has reports whether path (after /api) is one of the contract's
// endpoints.
func Has(path string) bool {
	_, ok := routes[path]
	return ok
}

func (d *Dialect) Has(path string) bool { return Has(path) }

// Answer is the 200 body of the endpoint ex names, or its error.
func (d *Dialect) Answer(ex *api.Exchange, p *api.Params) ([]byte, error) {
	rep := routes[ex.Endpoint](d.w, p)
	if err := p.Err(); err != nil {
		return nil, err
	}
	ex.Free = rep.free
	if !rep.free && ex.Price > 1 {
		ok, left := d.credits.HoldMore(ex.Key, ex.Price-1)
		if !ok {
			ex.Fault = "out_of_credits"
			return nil, api.Errorf(http.StatusPaymentRequired, "%s", api.OutOfCreditsMessage)
		}
		ex.Charge, ex.CreditsLeft = ex.Price, left
	}
	body, err := api.EncodeJSON(rep.body)
	if err != nil || !d.realFields || rep.free {
		return body, err
	}
	return withCredits(body, ex.CreditsLimited, ex.CreditsLeft, cmp.Or(ex.Charge, 1)), nil
}

// WriteError answers err as the contract does.
func (d *Dialect) WriteError(rw http.ResponseWriter, _ *api.Exchange, err error) {
	api.WriteError(rw, err)
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

// queriedAccount is the account named by the "handle" parameter.
func queriedAccount(w *world.World, p *api.Params) world.Account {
	h := p.Handle("handle")
	if !p.OK() {
		return world.Account{}
	}
	a, err := w.Account(h)
	p.Keep(err)
	return a
}
