package sources

import (
	"encoding/json"
	"testing"
)

// The real service's spellings, decoded by the same calls as the contract's
// (kinds/testdata/mapping/real_*.json map whole samples).

func TestUnixTime(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]UnixTime{
		`1758042184`:                  {1758042184, true},
		`"1758042184"`:                {1758042184, true},
		`"2025-09-16T17:03:04.000Z"`:  {1758042184, true},
		`"2025-09-16T17:03:04Z"`:      {1758042184, true},
		`"2025-09-16T19:03:04+02:00"`: {1758042184, true},
		`"2025-09-16T17:03:04"`:       {1758042184, true},
		`null`:                        {},
		`""`:                          {},
	} {
		var got UnixTime
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{`"yesterday"`, `"2025-13-45T00:00:00Z"`, `true`} {
		var got UnixTime
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("%s: %+v, want an error", in, got)
		}
	}
}
