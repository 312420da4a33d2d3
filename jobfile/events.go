package jobfile

import (
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
)

// Events is the job file's events section: who is told when a run ends
// (docs/events.md). It is not part of the job a run records
// (crawl.runs.job): a webhook's address may carry a token.
type Events struct {
	// Webhooks each get the event by POST, signed with their secret.
	Webhooks []Webhook `yaml:"webhooks"`
	// Notify is the PostgreSQL channel the event is NOTIFYed on; "": none.
	Notify Notify `yaml:"notify"`
	// Timeout bounds the time a run's end spends telling its events, every
	// webhook and retry together (default EventsTimeoutDefault).
	Timeout Duration `yaml:"timeout"`
}

// Webhook is one receiver of the events: its address and the environment
// variable holding the secret its deliveries are signed with.
type Webhook struct {
	URL       string `yaml:"url"`
	SecretEnv string `yaml:"secret_env"`
}

// Target is how a delivery to the webhook at place i (from 0) is named in
// logs and crawl.event_deliveries: its scheme and host only, since the
// path or query of a webhook's address often is its token.
func (w Webhook) Target(i int) string {
	u, err := url.Parse(w.URL)
	if err != nil {
		return fmt.Sprintf("webhook %d", i+1)
	}
	return fmt.Sprintf("webhook %d (%s://%s)", i+1, u.Scheme, u.Host)
}

// Notify is events.notify: true (the channel NotifyChannelDefault), false,
// or a channel's name.
type Notify string

// NotifyChannelDefault is the channel of `notify: true`.
const NotifyChannelDefault = "crawler_run_events"

// DecodeYAML reads true, false or a channel name (yamlstrict.Unmarshaler).
func (n *Notify) DecodeYAML(d *yamlstrict.Decoder, node *yaml.Node, path string, depth int) {
	if node.Kind == yaml.ScalarNode && node.ShortTag() == "!!bool" {
		var on bool
		d.DecodeValue(node, reflect.ValueOf(&on).Elem(), path, depth)
		if on {
			*n = NotifyChannelDefault
		}
		return
	}
	if node.Kind != yaml.ScalarNode || yamlstrict.IsNull(node) {
		d.WrongType(node, path, "true, false or a channel name")
		return
	}
	d.DecodeValue(node, reflect.ValueOf((*string)(n)).Elem(), path, depth)
}

// Bounds of the events section.
const (
	EventsTimeoutDefault = 30 * time.Second
	MaxEventsTimeout     = 10 * time.Minute
	MaxWebhooks          = 16
	MaxWebhookURLBytes   = 2048
)

// channelRe is a channel NOTIFY takes unquoted: a lower-case identifier
// within PostgreSQL's 63 bytes.
var channelRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func (j *Job) validateEvents() Errors {
	var errs Errors
	add := func(key, format string, args ...any) {
		errs = append(errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	ev := &j.Events
	if ev.Notify != "" && !channelRe.MatchString(string(ev.Notify)) {
		add("events.notify", "%s is not a channel name (a-z, 0-9, _, not starting with a digit, at most 63 bytes), true or false",
			yamlstrict.QuoteShort(string(ev.Notify)))
	}
	if j.has("events.timeout") {
		if d := time.Duration(ev.Timeout); d < time.Second || d > MaxEventsTimeout {
			add("events.timeout", "must be between 1s and %s, got %s", MaxEventsTimeout, d)
		}
	}
	if j.has("events") && !j.EventsOn() {
		add("events", "names no webhook and no notify channel: nobody would be told (remove the section, or add events.webhooks or events.notify)")
	}
	if len(ev.Webhooks) > MaxWebhooks {
		add("events.webhooks", "lists %d webhooks; at most %d", len(ev.Webhooks), MaxWebhooks)
	}
	seen := map[string]int{}
	for i, w := range ev.Webhooks {
		key := fmt.Sprintf("events.webhooks[%d]", i)
		switch u, err := url.Parse(w.URL); {
		case w.URL == "":
			add(key+".url", "is required: the address the event is POSTed to")
		case len(w.URL) > MaxWebhookURLBytes:
			add(key+".url", "is %d bytes long; at most %d", len(w.URL), MaxWebhookURLBytes)
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			add(key+".url", "%s is not an http or https address", yamlstrict.QuoteShort(w.URL))
		case u.User != nil:
			add(key+".url", "carries a user or password: name the secret in secret_env instead (every delivery is signed with it)")
		case u.Fragment != "":
			add(key+".url", "has a #fragment, which is never sent")
		default:
			if prev, dup := seen[w.URL]; dup {
				add(key+".url", "is webhook %d's address again: each webhook gets every event once", prev+1)
			}
			seen[w.URL] = i
		}
		switch {
		case w.SecretEnv == "":
			add(key+".secret_env", "is required: the variable holding the secret each delivery is signed with (HMAC-SHA256, docs/events.md)")
		case !keyEnvRe.MatchString(w.SecretEnv) || len(w.SecretEnv) > MaxNameBytes:
			add(key+".secret_env", "%s is not a variable of the CRAWLER_ namespace (CRAWLER_ then A-Z, 0-9, _): a job file may not name another variable",
				yamlstrict.QuoteShort(w.SecretEnv))
		case w.SecretEnv == j.API.KeyEnv:
			add(key+".secret_env", "is api.key_env: the API key never signs an event; give the webhook a secret of its own")
		}
	}
	return errs
}

// EventsOn reports whether the job names anyone to tell of its runs' ends.
func (j *Job) EventsOn() bool { return len(j.Events.Webhooks) > 0 || j.Events.Notify != "" }
