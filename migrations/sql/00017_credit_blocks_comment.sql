-- Credits are now reserved in blocks per lease far from the budget and
-- settled in the page's commit (pipeline/budget.go): the column comment of
-- migration 00009 said one reservation per request in flight.

-- +goose Up
COMMENT ON COLUMN crawl.tasks.credits_held IS 'Credits reserved by the current lease and not yet settled: a block of up to 16 far from the budget, one at a time near it. A billed answer becomes billed in its page''s commit; what the lease still holds goes back to the run when the lease ends (finished, released, or expired and rescued).';

-- +goose Down
COMMENT ON COLUMN crawl.tasks.credits_held IS 'Credits reserved by the current lease for requests whose answer is not yet settled; given back to the run when the lease ends unsettled.';
