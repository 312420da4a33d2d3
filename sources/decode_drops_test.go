package sources

import "testing"

// Entries that are not objects, or objects that do not decode, cost only
// themselves: counted on the page, never failing it (a failed decode is
// retried and billed), and still counted as entries for pagination.
func TestDecodePageDropsBadEntries(t *testing.T) {
	t.Parallel()
	body := `{"followers":[null,{"uniqueId":"a"},7,"s",{"uniqueId":{"x":1}},[],{"uniqueId":"b"}],"cursor":"c","hasMore":true}`
	p, err := DecodePage[testFollower](newAnswer([]byte(body)), "followers")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 2 || p.Items[0].V.UniqueID != "a" || p.Items[0].Pos != 1 || p.Items[1].V.UniqueID != "b" || p.Items[1].Pos != 6 {
		t.Errorf("items = %+v", p.Items)
	}
	if p.Dropped != 5 || p.DropReason != "followers[5]: array entry" {
		t.Errorf("dropped %d, %q", p.Dropped, p.DropReason)
	}
	if info := p.Info(); info.Items != 7 || NextStep("", info, 1, 0) != "" {
		t.Errorf("info = %+v", info)
	}
	nulls, err := DecodePage[testFollower](newAnswer([]byte(`{"followers":[null,null],"cursor":"c","hasMore":true}`)), "followers")
	if err != nil || len(nulls.Items) != 0 || nulls.Dropped != 2 || NextStep("", nulls.Info(), 1, 0) != "" {
		t.Errorf("page of nulls: %+v, %v", nulls, err)
	}
}
