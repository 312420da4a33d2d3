// Package sandbox is a faithful, deterministic stand-in for the social-data
// API our contract describes (docs/upstream.md): it serves the contract's 18 GET endpoints under
// /api so the client and the pipeline can be tested without credits.
//
// It writes its JSON from its own types and never imports the client
// (package sources), so a misspelled field in the client cannot pass by
// sharing a struct. Its world, tokens, faults and debug endpoints are
// documented in docs/sandbox.md; `crawler sandbox --help` lists its flags.
//
// It is built of packages, one idea each: world (the world and its truth,
// answered once as values), contract and real (each dialect reads its
// parameters and encodes the world's answers), faults (the 429 bucket, the
// 402 balance, the seeded and scripted faults) and api (what every request
// shares). This package assembles them: Config, the server's chain, usage
// and arrivals.
//
// # Churn worlds
//
// Config.Churn = ChurnHeavyTail (`crawler sandbox --churn heavytail`)
// replaces the linear day-to-day change (lists growing by a fixed number a
// day, counters by a fixed amount) for every account without an r<N>
// token: each account draws its own rates from heavy-tailed mixes (for
// followers 60% still, 25% slow, 12% moderate, 3% fast), a day's arrivals
// are Poisson draws seeded by the handle, the list and the day, 12% of the
// lists lose entries on hash-chosen days, and the profile counters drift
// irregularly. The counts always equal the lists' lengths, both presets
// serve the same lists, and a contract follow page still costs O(days +
// removals + page). ChurnTruth, ChurnChanges and ChurnRatesOf are the ground truth a
// benchmark scores revisit policies against; docs/sandbox.md gives the
// model and its parameters.
//
// # The real preset
//
// Config.Preset = PresetScrapeCreators (`crawler sandbox --preset
// scrapecreators`) serves the same world in the real service's dialect, as
// docs/upstream.md and the vendor's sample responses describe it. The same
// job stores the same entities in both presets: the world answers once
// (same handles, ids, counts, videos, songs, comments, reels) and each
// dialect encodes it. What differs:
//
//   - Paths are at the root, with no /api: /v1/tiktok/<suffix> for the
//     short-video endpoints, /v1/instagram/profile, /user/embed and
//     /user/highlight/detail, and /v2/instagram/post/comments,
//     /reels/search and /media/transcript, and the real service's own
//     content endpoints (real/content.go: a creator's videos, posts, reels,
//     comments' replies, transcripts, highlights; the contract preset has
//     none). Any other path is 404.
//     /v1/tiktok/videos/popular is retired: 400, not billed.
//   - Parameters: keyword and top search take query, hashtag search
//     hashtag, the song endpoints clipId; the trending feed requires region;
//     followers take handle or user_id (a numeric id the sandbox has shown
//     in a profile, live, creators or video author answer), following takes
//     handle only, and both page with min_time. A contract name sent instead
//     (keyword, secUid, id on songs, cursor on follow lists) or a missing
//     required parameter answers 400 {"success":false,"message":...}, not
//     billed. trim, optional region, date_posted, sort_by and publish_time
//     are accepted.
//   - Shapes are snake_case (aweme_list, aweme_id, statistics.play_count,
//     author.unique_id, music.id) except the profile and the live user
//     (camelCase). Song and music ids are JSON numbers wider than a float64
//     (exact digits) beside id_str; the sandbox's token song ids
//     (summer_hit_v80) are not digits, so their id is left out. Authors at
//     even ranks of the trending feed have no unique_id. Verified accounts
//     are marked by custom_verify "Verified account" in snake_case shapes.
//   - Paging: hashtag search and song videos carry has_more 0/1 and a
//     numeric cursor. The keyword and top searches have no has_more: the
//     last page has no cursor field (a top search page may hold fewer
//     items than PageSize, even none, since only the video ranks are kept,
//     and still not be the last). Follow lists carry has_more (boolean),
//     total, max_time and min_time: min_time is the world's now minus the
//     next offset, decreasing page after page; send it back to go on.
//     Comments have an opaque string cursor, absent on the last page.
//     Reels search pages run 1 to 11; page 12 or more is 400.
//   - Envelope: the endpoints whose vendor samples carry success,
//     credits_remaining or credits_charged start with the same fields
//     (credits_remaining only when credits are limited); the others carry
//     none, so a client must cope with both.
//   - Credits: a 200 costs 1; comments with include_replies=true cost 15
//     (402 when the balance is short); a profile (either platform) or a
//     transcript asked with cache_max_age (1d..30d) that the same API key
//     got fresh within that age answers cached: true, cached_at and
//     credits_charged 0, and is not billable. Usage.Credits counts what
//     was charged.
//   - Errors: 404 {"success":false,"credits_remaining","credits_charged":0,
//     "error":"not_found","errorStatus":404,"message"}; the platform's
//     blocked items answer 403 the same way with error "forbidden": a
//     handle, post code or song clipId starting with "blocked", a highlight
//     id starting with 403. 401, 402, 429 and the injected faults are the
//     contract preset's (Faults.Script keys are then the real paths).
//
// # Prices and nights
//
// Config.Prices makes an endpoint's billable answers cost more than one
// credit, in either preset (Usage, Arrival.Credits and the balance count
// the price; bodies say it only where they say what they charged).
// Config.Cache shares the real preset's answer cache between the servers
// of successive world days, on the world's clock, so a simulation of
// nights (testkit/sim) sees cached answers as the real service's users do.
package sandbox
