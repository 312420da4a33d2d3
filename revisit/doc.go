// Package revisit decides what the nightly crawl revisits: it estimates how
// fast each list gains entries and each counter changes from past visits
// (EstimateCount, EstimateChange), and spends a night's credits on the
// visits expected to capture the most new data per credit (Schedule). It is
// pure: no database, no I/O, the standard library only.
package revisit
