package sinks_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/testkit/pgtest"
)

// BenchmarkWriteFollowersPage writes a followers page (50 users + 50 follow
// edges) per transaction: "new" with fresh accounts each time, "rewrite" the
// same page again (every row conflicts and nothing changes).
func BenchmarkWriteFollowersPage(b *testing.B) {
	pool, _ := pgtest.Pool(b)
	run := newRun(b, pool)
	write(b, pool, run, batchOf([]sinks.SVUser{{UniqueID: "owner", Profile: true, Raw: []byte(`{"user": {"uniqueId": "owner"}}`)}}))
	page := func(p int) *sinks.Batch {
		var batch sinks.Batch
		for i := range 50 {
			id := fmt.Sprintf("u%08d_%02d", p, i)
			raw := fmt.Appendf(nil, `{"uniqueId": %q, "nickname": "Nick %d", "verified": false, "secUid": "MS4wLjABAAAA%s"}`, id, i, id)
			sinks.Add(&batch, sinks.SVUser{UniqueID: id, Nickname: ptr(fmt.Sprint("Nick ", i)), SecUID: ptr("MS4wLjABAAAA" + id), Verified: ptr(false), Raw: raw})
			sinks.Add(&batch, sinks.SVFollow{Follower: id, Followee: "owner", Raw: raw})
		}
		return &batch
	}
	bench(b, pool, run, page)
}

// BenchmarkWriteVideosPage writes a keyword-search page (50 videos, their 50
// counter snapshots and 50 search results) per transaction.
func BenchmarkWriteVideosPage(b *testing.B) {
	pool, _ := pgtest.Pool(b)
	run := newRun(b, pool)
	page := func(p int) *sinks.Batch {
		var batch sinks.Batch
		for i := range 50 {
			id := fmt.Sprintf("7%018d", p*50+i)
			raw := fmt.Appendf(nil, `{"id": %q, "desc": "video %d #cats", "createTime": 1735000000, "stats": {"playCount": %d, "diggCount": %d, "commentCount": 3, "shareCount": 1}, "author": {"uniqueId": "u%d"}}`, id, i, 1000+i, 100+i, i)
			sinks.Add(&batch, sinks.SVVideo{VideoID: id, AuthorUniqueID: ptr(fmt.Sprint("u", i)), Description: ptr(fmt.Sprint("video ", i, " #cats")), CreateTime: ptr(int64(1735000000)), Raw: raw})
			sinks.Add(&batch, sinks.SVVideoSnapshot{VideoID: id, PlayCount: ptr(int64(1000 + i)), DiggCount: ptr(int64(100 + i)), CommentCount: ptr(int64(3)), ShareCount: ptr(int64(1))})
			sinks.Add(&batch, sinks.SVSearchResult{Kind: sinks.SearchKeyword, QueryKey: "cats", Rank: p*50 + i + 1, Type: sinks.ResultVideo, VideoID: ptr(id), Raw: raw})
		}
		return &batch
	}
	bench(b, pool, run, page)
}

func bench(b *testing.B, pool *pgxpool.Pool, run int64, page func(p int) *sinks.Batch) {
	ctx := context.Background()
	p := 0
	b.Run("new", func(b *testing.B) {
		rows := 0
		for b.Loop() {
			batch := page(p)
			p++
			rows += batch.Len()
			if err := writeTx(ctx, pool, run, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("rewrite", func(b *testing.B) {
		batch := page(0)
		rows := 0
		for b.Loop() {
			rows += batch.Len()
			if err := writeTx(ctx, pool, run, batch); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	})
}
