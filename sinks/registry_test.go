package sinks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func panicOf(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return "<nil>"
}

// The write order is the one the foreign keys and the deadlock tests were
// written against: entities before the rows that reference them, the
// short-video schema before the photo-sharing one.
func TestTablesInWriteOrder(t *testing.T) {
	t.Parallel()
	want := []string{
		"shortvideo.users", "shortvideo.videos", "shortvideo.hashtags", "shortvideo.songs",
		"shortvideo.user_snapshots", "shortvideo.follows", "shortvideo.video_snapshots",
		"shortvideo.hashtag_snapshots", "shortvideo.song_snapshots", "shortvideo.song_videos",
		"shortvideo.search_results", "shortvideo.feed_entries", "shortvideo.popular_creators",
		"shortvideo.live_status", "shortvideo.video_hashtags", "shortvideo.profile_videos", "shortvideo.comments",
		"shortvideo.transcripts",
		"photosocial.profiles", "photosocial.reels", "photosocial.highlights", "photosocial.posts",
		"photosocial.profile_snapshots", "photosocial.comments", "photosocial.reel_snapshots",
		"photosocial.reel_search_results", "photosocial.transcripts", "photosocial.transcript_checks",
		"photosocial.embeds", "photosocial.highlight_items", "photosocial.post_snapshots", "photosocial.profile_posts",
		"photosocial.profile_reels", "photosocial.profile_highlights",
	}
	if got := Tables(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Tables() =\n%v\nwant\n%v", got, want)
	}
}

func TestRegisterRefusesDuplicatesAndAddUnknownTypes(t *testing.T) {
	t.Parallel()
	tables := len(Tables())
	nop := func(*pgx.Batch, int64, []SVUser) int { return 0 }
	type other struct{}
	nopOther := func(*pgx.Batch, int64, []other) int { return 0 }
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { register("x.users_again", 999, nop) }, "row type sinks.SVUser registered for both shortvideo.users and x.users_again"},
		{func() { register("shortvideo.users", 999, nopOther) }, "table shortvideo.users registered twice"},
		{func() { register("x.other", 101, nopOther) }, "tables shortvideo.users and x.other both have order 101"},
		{func() { var b Batch; Add(&b, other{}) }, "no table registered for row type sinks.other"},
		{func() { var b Batch; b.AddRow(&SVUser{}) }, "no table registered for row type *sinks.SVUser"},
	} {
		if got := panicOf(c.f); got != "sinks: "+c.want {
			t.Errorf("panic %q, want %q", got, "sinks: "+c.want)
		}
	}
	if len(Tables()) != tables {
		t.Errorf("%d tables after refused registrations, want %d", len(Tables()), tables)
	}
}

func TestAddFilesRowsByType(t *testing.T) {
	t.Parallel()
	var b Batch
	Add(&b, SVUser{UniqueID: "a"}, SVUser{UniqueID: "b"})
	Add(&b, PSEmbed{Username: "c"})
	b.AddRow(SVUser{UniqueID: "d"})
	if got := len(Rows[SVUser](&b)); got != 3 {
		t.Errorf("SVUser rows = %d, want 3", got)
	}
	if got := Rows[SVFollow](&b); got != nil {
		t.Errorf("SVFollow rows = %v, want none", got)
	}
	if b.Len() != 4 {
		t.Errorf("Len() = %d, want 4", b.Len())
	}
	var batch pgx.Batch
	if got := Queue(&batch, 1, &b); strings.Join(got, ",") != "write shortvideo.users,write photosocial.embeds" || batch.Len() != 2 {
		t.Errorf("Queue = %v (%d statements)", got, batch.Len())
	}
}
