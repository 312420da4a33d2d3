package kinds

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/socialcrawl/crawler/internal/yamlstrict"
)

// Unserved says which of the job's seed lists and expand keys would call
// an endpoint its upstream's dialect does not have (Route.Absent: the real
// service's own endpoints under the contract preset): the job is refused,
// each problem keyed by the seed list or expand key, before anything is
// written.
func Unserved(s *Seeds, j Job) yamlstrict.Errors {
	var errs yamlstrict.Errors
	v := reflect.ValueOf(s).Elem()
	for _, l := range seedLists {
		used := s.Files[l.Key] != nil
		l.each(v.FieldByIndex(l.index), func(int, any) { used = true })
		if absent := j.Route(l.kind.Name).Absent; used && absent != "" {
			errs = append(errs, &yamlstrict.Error{Key: l.Key, Msg: fmt.Sprintf("%s; set api.preset: scrapecreators, or remove the seeds", absent)})
		}
	}
	var keys []string
	for _, d := range edgeDecls {
		if absent := j.Route(d.To).Absent; d.on(j) && absent != "" && !slices.Contains(keys, d.Key) {
			keys = append(keys, d.Key)
			errs = append(errs, &yamlstrict.Error{Key: "expand." + d.Key, Msg: fmt.Sprintf("%s; set api.preset: scrapecreators, or turn the edge off", absent)})
		}
	}
	return errs
}
