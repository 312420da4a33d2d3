package jobfile

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const eventsBase = "name: ev\napi: {base_url: https://h/api}\nseeds: {shortvideo: {profiles: [a]}}\n"

// The events section: its forms, its defaults, and every bad value named
// by its key and line.
func TestEventsSection(t *testing.T) {
	t.Parallel()
	job, err := Parse("j.yaml", []byte(eventsBase+`events:
  webhooks:
    - {url: "https://hooks.example.org/c?token=abc", secret_env: CRAWLER_HOOK_SECRET}
  notify: true
`))
	if err != nil {
		t.Fatal(err)
	}
	ev := job.Events
	if !job.EventsOn() || ev.Notify != NotifyChannelDefault || time.Duration(ev.Timeout) != EventsTimeoutDefault ||
		ev.Webhooks[0].Target(0) != "webhook 1 (https://hooks.example.org)" {
		t.Errorf("events %+v, target %q", ev, ev.Webhooks[0].Target(0))
	}
	// The run's recorded job leaves the section out: an address may carry a token.
	if b, _ := json.Marshal(job); strings.Contains(string(b), "token=abc") || strings.Contains(string(b), "CRAWLER_HOOK_SECRET") {
		t.Errorf("the recorded job carries the events section: %s", b)
	}
	for _, c := range []struct{ notify, want string }{{"false", ""}, {"night_runs", "night_runs"}} {
		job, err := Parse("j.yaml", []byte(eventsBase+"events: {notify: "+c.notify+", webhooks: [{url: 'http://127.0.0.1:9/h', secret_env: CRAWLER_S}]}\n"))
		if err != nil || string(job.Events.Notify) != c.want {
			t.Errorf("notify: %s: %v %v", c.notify, job, err)
		}
	}
	if job, _ := Parse("j.yaml", []byte(eventsBase)); job.EventsOn() {
		t.Error("events on without the section")
	}

	_, err = Parse("bad.yaml", []byte(eventsBase+`events:
  webhooks:
    - url: ftp://h/x
      secret_env: CRAWLER_API_KEY
    - {url: "https://u:p@h/x"}
    - {url: "https://h/y", secret_env: HOME}
    - {url: "https://h/y", secret_env: CRAWLER_S}
    - {secret_env: CRAWLER_S}
  notify: Bad-Chan
  timeout: 11m
`))
	got := ""
	if err != nil {
		got = err.Error()
	}
	for _, want := range []string{
		`bad.yaml:6: events.webhooks[0].url: "ftp://h/x" is not an http or https address`,
		`bad.yaml:7: events.webhooks[0].secret_env: is api.key_env`,
		`bad.yaml:8: events.webhooks[1].url: carries a user or password`,
		`bad.yaml:8: events.webhooks[1].secret_env: is required`,
		`bad.yaml:9: events.webhooks[2].secret_env: "HOME" is not a variable of the CRAWLER_ namespace`,
		`bad.yaml:10: events.webhooks[3].url: is webhook 3's address again`,
		`bad.yaml:11: events.webhooks[4].url: is required`,
		`bad.yaml:12: events.notify: "Bad-Chan" is not a channel name`,
		`bad.yaml:13: events.timeout: must be between 1s and 10m0s, got 11m0s`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	// A section that tells nobody does nothing: an error.
	for _, text := range []string{"events: {}\n", "events: {notify: false}\n", "events: {timeout: 5s}\n"} {
		if _, err := Parse("j.yaml", []byte(eventsBase+text)); err == nil || !strings.Contains(err.Error(), "j.yaml:4: events: names no webhook and no notify channel") {
			t.Errorf("%q: %v", text, err)
		}
	}
	if _, err := Parse("j.yaml", []byte(eventsBase+"events: {notify: [a]}\n")); err == nil || !strings.Contains(err.Error(), "events.notify: expected true, false or a channel name") {
		t.Errorf("notify list: %v", err)
	}
}
