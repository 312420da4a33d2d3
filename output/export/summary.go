package export

import (
	"fmt"
	"sort"
	"strings"
)

// Summary is the manifest in a few lines, for people: what was exported,
// from which runs, what it cost, how complete the lists are, and what could
// not be rebuilt.
func Summary(m *Manifest) string {
	var b strings.Builder
	var rows int64
	files := 0
	for _, o := range m.Objects {
		rows += o.Rows
		files += len(o.Files)
	}
	as := "the latest state"
	if m.AsOf != nil {
		as = fmt.Sprintf("as of run %d", *m.AsOf)
	}
	fmt.Fprintf(&b, "  %d objects, %d rows in %d %s files, %s; crawler %s\n", len(m.Objects), rows, files, m.Format, as, m.Crawler)
	for _, j := range m.Jobs {
		fp := "no fingerprint"
		if len(j.Fingerprints) > 0 {
			fp = "fingerprint " + short(j.Fingerprints[len(j.Fingerprints)-1])
			if len(j.Fingerprints) > 1 {
				fp += fmt.Sprintf(" (and %d earlier)", len(j.Fingerprints)-1)
			}
		}
		fmt.Fprintf(&b, "  job %s: runs %s, %s\n", j.Name, runList(j.Runs), fp)
	}
	var billed, requests int64
	for _, c := range m.CreditsByEndpoint {
		billed += c.Billed
		requests += c.Requests
	}
	fmt.Fprintf(&b, "  credits: %d billed over %d requests to %d endpoints\n", billed, requests, len(m.CreditsByEndpoint))
	byMeaning := map[string]int64{}
	for _, c := range m.Completeness {
		byMeaning[c.Meaning] += c.Lists
	}
	if len(byMeaning) > 0 {
		keys := make([]string, 0, len(byMeaning))
		for k := range byMeaning {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if byMeaning[keys[i]] != byMeaning[keys[j]] {
				return byMeaning[keys[i]] > byMeaning[keys[j]]
			}
			return keys[i] < keys[j]
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%d %s", byMeaning[k], k)
		}
		fmt.Fprintf(&b, "  lists: %s\n", strings.Join(parts, "; "))
	}
	if n := len(m.NotReconstructed); n > 0 {
		fmt.Fprintf(&b, "  not rebuilt as the runs left them: %d notes (manifest.json, not_reconstructed)\n", n)
	}
	return b.String()
}

func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

// runList prints ids as ranges: 1-4, 7.
func runList(ids []int64) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, fmt.Sprint(ids[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
