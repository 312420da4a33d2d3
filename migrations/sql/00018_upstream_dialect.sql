-- The real service's dialect (issue: speak the real service): an answer
-- costs its credits_charged (comments with replies: 15), answers may come
-- from the upstream's cache, and the shape of answers is sampled so that
-- a drift of the upstream's schema shows (sources/shape.go); comments
-- bought with their replies keep them.

-- +goose Up
ALTER TABLE crawl.credit_usage ADD COLUMN cached bigint NOT NULL DEFAULT 0;
COMMENT ON COLUMN crawl.credit_usage.cached IS 'Answers the upstream served from its cache (reuse.upstream_cache): 0 credits, counted in free too.';
COMMENT ON COLUMN crawl.credit_usage.billed IS 'Credits billed: 1 per billed answer, or what its credits_charged said (15 for comments with replies).';

CREATE TABLE crawl.response_keys (
    run_id   bigint NOT NULL REFERENCES crawl.runs (id) ON DELETE CASCADE,
    endpoint text   NOT NULL,
    key      text   NOT NULL,
    answers  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, endpoint, key)
);
COMMENT ON TABLE crawl.response_keys IS 'The shape of a run''s answers, sampled (the first 20 2xx answers of each endpoint per process, then 1 in 100): how many sampled answers carried each key path. crawler status and report compare it with the job''s previous run to show new and vanished keys.';
COMMENT ON COLUMN crawl.response_keys.run_id IS 'The run (crawl.runs).';
COMMENT ON COLUMN crawl.response_keys.endpoint IS 'The endpoint in the contract''s terms, e.g. /shortvideo/profile.';
COMMENT ON COLUMN crawl.response_keys.key IS 'A key path, e.g. user.secUid or aweme_list[].statistics.play_count (arrays read through their first element); the empty key counts the sampled answers.';
COMMENT ON COLUMN crawl.response_keys.answers IS 'Sampled answers that carried the key.';

ALTER TABLE photosocial.comments ADD COLUMN parent_comment_id text;
COMMENT ON COLUMN photosocial.comments.parent_comment_id IS 'For a reply (comments: {include_replies: true}), the id of the comment it answers; NULL for a top-level comment.';

-- +goose Down
ALTER TABLE photosocial.comments DROP COLUMN parent_comment_id;
DROP TABLE crawl.response_keys;
ALTER TABLE crawl.credit_usage DROP COLUMN cached;
COMMENT ON COLUMN crawl.credit_usage.billed IS 'Attempts that cost a credit.';
