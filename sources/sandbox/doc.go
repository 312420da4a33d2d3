// Package sandbox is a faithful, deterministic, stateless stand-in for the
// social-data API of upstream-api.md: it serves the contract's 18 GET
// endpoints under /api so the client and the pipeline can be tested without
// credits. docs/sandbox.md is the long form of this comment.
//
// Faithful: routes, parameters, field names and JSON types follow the
// contract (not upstream-notes.md). The sandbox writes JSON from its own
// types and never imports package sources, so a misspelled field in the
// client cannot pass by sharing a struct. Deterministic: the same request to
// a sandbox with the same Config gives the same bytes; only Config.WorldTime
// moves the world, and injected faults follow Faults.Seed and the request
// sequence (only the optional rate limit runs on the wall clock).
// Stateless: every value is derived from a hash of the entity key and an
// index, so a page costs O(page) and an account with 10^9 followers costs
// nothing up front. The only state is the usage counters, the arrivals log
// and the fault layer's buckets, balances and counters.
//
// # HTTP
//
// Every /api request runs identify -> count -> authorize -> inject -> route
// -> handler. identify resolves the x-api-key (unknown or missing = key "")
// and the endpoint; count records every request under its key and, when the
// status is 200 and the handler did not mark it free, one billable credit,
// as soon as the status is decided (before the client can read it);
// authorize answers 401; inject is the fault layer (see Faults below; off by
// default); route answers 404 for unknown paths and 405 for non-GET.
//
// Errors are {"success":false,"error":code,"message":...}: 400 bad_request
// (the message names the parameter), 401 unauthorized (never echoes the
// key), 404 not_found, 405 method_not_allowed. Only 200 is billable, except
// the photo-sharing profile of a private account: 200 {} and free.
// Usage.ByEndpoint is keyed by the path after /api; unknown paths count under
// OtherEndpoint. GET /debug/usage (header x-api-key) answers that key's Usage
// as JSON and GET /debug/healthz answers "ok"; /debug is never counted.
// An optional parameter sent empty is absent; a required one is missing.
//
// # Faults
//
// All off in the zero Config. inject runs, in order: the key's token bucket
// (Config.Rate, Burst; no token: 429, Retry-After per RetryAfterMode:
// seconds rounded up, an HTTP date rounded up, none, or garbage); the key's
// credit balance (Config.Credits or CreditLimit; 0: 402 with
// OutOfCreditsMessage; else a credit is held and given back unless the
// answer is billable); the draw; the latency (Faults.Latency + seeded
// jitter); the outcome. Rejections by the bucket and the balance are
// immediate and do not advance the draw's counters, so seeded faults never
// depend on the bucket's wall-clock timing.
//
// The draw: n = the 1-based count of requests with the same key, path
// (after /api) and raw query that reached the draw since New or SetFaults;
// u = (H("fault", seed, key, path, query, n) >> 11) / 2^53. u < ErrorRate:
// 500/502/503 (H("fault.status", same) % 3); then HangRate: hang until the
// client leaves or HangMax (504); then TruncateRate: the 200 body cut in
// half under its full Content-Length (billable). Jitter is
// H("fault.latency", same) % LatencyJitter nanoseconds. Faults.Script
// overrides the outcome of the i-th request per endpoint path: 0 normal,
// ScriptTruncate, ScriptHang, or a status 400-599. 429, 402, 5xx and hangs
// are not billable. RealServiceFields adds credits_remaining (when limited)
// and credits_charged to billable 200 bodies. Usage counts RateLimited,
// OutOfCredits, Errors, Truncated and Hung; Arrivals(key) keeps the last
// ArrivalsMax requests with arrival and answer times and the 429 delay, so
// tests can check a client honoured Retry-After. SetRate, SetFaults,
// AddCredits and Close act at run time.
//
// # Pagination
//
// Endpoints 1-6: cursor = decimal offset of the next item (1 to 18 digits,
// else 400 naming cursor; absent = 0), answer cursor (string; a JSON number
// in keyword search form B) and hasMore. The last page has hasMore false and
// cursor = the offset reached; an offset past the end is an empty last page
// at that offset. N items at page size P take max(1, ceil(N/P)) requests.
// Comments (14): cursor in and out, no hasMore, the last page answers
// cursor "". Reels search (15): page from 1 (default 1), ReelsPageSize (12)
// per page, a page past the end is an empty list (200, billable).
//
// # Hashes and drift
//
// H(p1..pn) = mix64(FNV-1a-64(p1 NUL p2 NUL ... pn NUL)), mix64 the
// SplitMix64 finalizer. pick(k,key,f,m) = H(k,key,f) % m;
// rate(k,key,f,r) = 1 + H(k,key,f+".rate") % r; a growing counter is
// grow(k,key,f,m,r) = pick(k,key,f,m) + rate(k,key,f,r)*WorldTime, so two
// world times always differ. Counts fixed by a token never drift.
//
// # Tokens
//
// Handles, ids and codes split into tokens on '_', keywords also on spaces.
// A count token is a letter and 1 to 15 digits (first match wins); word
// tokens match exactly; prefixes look at the whole string.
//
// Handles (endpoints 4, 5 via secUid, 11, 12, 13, 17) are case-sensitive; a
// leading '@' is 400 naming handle.
//   - prefix "missing": 404.
//   - prefix "private": user.privateAccount true, followers/following empty,
//     itemList empty; photo-sharing profile 200 {} not billable.
//   - f<N>: exactly N followers (followerCount, edge_followed_by, list);
//     else grow(account,h,followers,300,5).
//   - g<N>: exactly N following; else pick(account,h,following,150).
//   - business: is_business_account, category_name and contact fields
//     (business_email, business_phone_number, public_email,
//     public_phone_number) set; else false and null.
//   - live: isLive, title, viewerCount = 1+grow(account,h,viewerCount,5000,100),
//     startTime; else false, "", 0, 0.
//   - endless: followers/following give full pages and fresh cursors forever;
//     loop: a full page, hasMore true and the cursor sent ("0" if none)
//     forever; emptymore: empty pages, hasMore true, cursor offset+P.
//     Precedence private > loop > emptymore > endless.
//
// Other account values: heartCount grow(account,h,heartCount,1e6,1e3),
// videoCount grow(...,videoCount,500,3), diggCount grow(...,diggCount,1e4,50),
// photo posts grow(...,posts,1000,3), verified pick(...,verified,20) == 0.
// user.secUid = "MS4wLjABAAAA" + base64.RawURLEncoding(handle); endpoints
// 4/5 decode it (invalid: 404). Entry i of the followers (following) list of
// X is "u" + 16 hex digits of mix64(H("followers"|"following", X) + i):
// distinct (mix64 is a bijection), token-free, and a valid handle whose
// nickname, verified and secUid the entry carries. Profile itemList holds
// min(3, videoCount) of the account's videos.
//
// Videos: id is 19 digits starting with 7, distinct within a list; every
// field derives from the id: playCount grow(video,id,playCount,1e6,1e4),
// diggCount grow(video,id,diggCount,1e5,1e3), commentCount and shareCount
// fixed, author {uniqueId, nickname} a hashed handle.
//
// Searches normalize the keyword (lower case, single spaces). Totals:
// prefix "missing" 0 (200, empty), n<N> exactly N, else
// H("search",kind,keyword) % 120 (kind keyword, hashtag, top) or % 150
// (reels). Keyword search: a non-empty keyword selects form A (and wins over
// query, whose form B parameters are then ignored); else query selects form
// B with date_posted, sort_by, region (two letters), cursor (number), trim
// (true|false), each validated (400). Form B has form A's result set; no
// filter keeps form A's order, other filters apply a keyed Feistel
// permutation, so different filters give different orders. trim=true keeps
// id, desc, stats.playCount, author.uniqueId. Hashtag i: name = keyword slug +
// word + i, viewCount grow(hashtag,name,viewCount,1e9,1e6), videoCount
// grow(...,videoCount,1e6,1e3), growth {views7d, videos7d} = 7 * the rates.
// Top search order is the platform's rank; with token "mixed" types cycle
// video, user, hashtag, sound; else user when H("search","top",kw,"type",i)
// % 3 == 0, else video. Reels: id digits, code "D" + 11 base-62 characters.
//
// Songs (6, 7): prefix "missing" 404; list length L = v<N> or
// pick(song,id,videos,200); usageCount = L + (0 with v<N>, else
// pick(song,id,usageCount,5000)) + rate(song,id,usageCount,100)*WorldTime.
// Feeds (8, 9, 10): FeedSize (20) items, reseeded each world day.
//
// Post URLs (14, 16): http(s), any host, a path segment p, reel or reels
// followed by the code, else 400 naming url. Code prefix "missing" 404.
// Comments: c<N> exactly N, else pick(post,code,comments,100); like_count
// drifts. Transcripts: nospeech -> [] (billable), t<N> -> min(N,1000)
// entries, else 1; shortcode = code.
//
// Highlights (18): id digits only (else 400), prefix "404" -> 404;
// media_count = value of the last two digits; that many items, media_type
// 2 (video_versions with urls) or 1 (video_versions []); id in the answer is
// "highlight:" + id.
//
// WorldEpoch (2025-01-01) is day 0; the world's now is
// WorldEpoch + WorldTime*86400.
package sandbox
