// Package quota is the key's quota shared by the processes working on one
// run, through PostgreSQL (sources.QuotaSharer): a row per run holds the
// estimate the leading process published (crawl.rate_quota), a row per
// process its heartbeat (crawl.rate_members), and a 429's pause is
// announced with NOTIFY on the channel crawl_rate, so that every process
// pauses with it. The database cost does not grow with the request rate:
// one statement per process per second (RateSync), one more per
// publication and one per 429 event (the pause), all counted in
// crawl.rate_members.statements.
//
// The runner joins with Start, handing it the client whose rate control
// shares the quota and the weight of the process (the tasks it holds).
package quota
