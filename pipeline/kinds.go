package pipeline

import (
	"context"
	"fmt"

	"github.com/socialcrawl/crawler/sinks"
	"github.com/socialcrawl/crawler/sources"
)

// Task kinds. A kind names the endpoint and what its key means.
const (
	KindSVProfile   = "shortvideo.profile"   // key: handle
	KindSVFollowers = "shortvideo.followers" // key: secUid; params: handle
	KindSVFollowing = "shortvideo.following" // key: secUid; params: handle
)

// result is what one fetch produced: rows, discovered tasks, and how the
// task goes on (Next cursor, or Stop reason when it ends).
type result struct {
	Batch    sinks.Batch
	Children []NewTask
	Items    int
	Next     string
	Stop     string
}

// handler fetches the next page (or the object) of a task.
type handler func(ctx context.Context, c *crawl, t *Task) (*result, error)

var handlers = map[string]handler{
	KindSVProfile:   fetchSVProfile,
	KindSVFollowers: fetchSVFollowList,
	KindSVFollowing: fetchSVFollowList,
}

// stopDone ends an object task (not a list).
const stopDone = "done"

func fetchSVProfile(ctx context.Context, c *crawl, t *Task) (*result, error) {
	p, err := c.client.SVProfile(ctx, t.Key)
	if err != nil {
		return nil, err
	}
	handle := string(p.User.UniqueID)
	if handle == "" {
		handle = t.Key
	}
	res := &result{Stop: stopDone, Items: 1}
	res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{
		UniqueID:  handle,
		UserID:    textPtr(p.User.ID),
		SecUID:    textPtr(p.User.SecUID),
		Nickname:  textPtr(p.User.Nickname),
		AvatarURL: textPtr(p.User.AvatarLarger),
		Signature: textPtr(p.User.Signature),
		Verified:  flagPtr(p.User.Verified),
		Private:   flagPtr(p.User.PrivateAccount),
		Profile:   true,
		Raw:       p.Raw,
	})
	res.Batch.SVSnapshots = append(res.Batch.SVSnapshots, sinks.SVUserSnapshot{
		UniqueID:       handle,
		FollowerCount:  intPtr(p.Stats.FollowerCount),
		FollowingCount: intPtr(p.Stats.FollowingCount),
		HeartCount:     intPtr(p.Stats.HeartCount),
		VideoCount:     intPtr(p.Stats.VideoCount),
		DiggCount:      intPtr(p.Stats.DiggCount),
	})
	secUID := string(p.User.SecUID)
	switch {
	case p.User.PrivateAccount.V:
		res.Stop = "done: private account, lists not fetched"
	case secUID == "":
		res.Stop = "done: profile carries no secUid, lists not fetched"
	default:
		params := map[string]string{"handle": handle}
		if e := c.job.Expand.Followers; e != nil {
			res.Children = append(res.Children, NewTask{Kind: KindSVFollowers, Key: secUID, Params: params, Depth: t.Depth, MaxPages: e.MaxPages})
		}
		if e := c.job.Expand.Following; e != nil {
			res.Children = append(res.Children, NewTask{Kind: KindSVFollowing, Key: secUID, Params: params, Depth: t.Depth, MaxPages: e.MaxPages})
		}
	}
	return res, nil
}

func fetchSVFollowList(ctx context.Context, c *crawl, t *Task) (*result, error) {
	owner := t.Params["handle"]
	if owner == "" {
		return nil, fmt.Errorf("task %d: %s without params.handle", t.ID, t.Kind)
	}
	fetch := c.client.SVFollowers
	if t.Kind == KindSVFollowing {
		fetch = c.client.SVFollowing
	}
	page, err := fetch(ctx, t.Key, t.Cursor)
	if err != nil {
		return nil, err
	}
	res := &result{Items: len(page.Items), Next: page.Cursor}
	for _, it := range page.Items {
		e := it.V
		if e.UniqueID == "" {
			continue
		}
		res.Batch.SVUsers = append(res.Batch.SVUsers, sinks.SVUser{
			UniqueID: e.UniqueID,
			SecUID:   strPtr(e.SecUID),
			Nickname: strPtr(e.Nickname),
			Verified: &e.Verified,
			Raw:      it.Raw,
		})
		edge := sinks.SVFollow{Follower: e.UniqueID, Followee: owner, Raw: it.Raw}
		if t.Kind == KindSVFollowing {
			edge.Follower, edge.Followee = owner, e.UniqueID
		}
		res.Batch.SVFollows = append(res.Batch.SVFollows, edge)
	}
	res.Stop = string(sources.NextStep(t.Cursor, page.Info(), t.Pages+1, t.MaxPages))
	return res, nil
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func textPtr(s sources.Text) *string { return strPtr(string(s)) }

func flagPtr(f sources.Flag) *bool {
	if !f.Valid {
		return nil
	}
	return &f.V
}

func intPtr(n sources.Int64) *int64 {
	if !n.Valid {
		return nil
	}
	return &n.V
}
