-- The page archive (job file `archive: true`): every fetched page's body,
-- compressed, with the request it answered and where in its task it was, so
-- `crawler replay --run ID` can rebuild the run's rows without buying them
-- again. Written in the page's own commit batch (pipeline Frontier.Commit).
--
-- The run and task ids are plain columns, not foreign keys (see 00006).

-- +goose Up
CREATE TABLE crawl.pages (
    run_id     bigint      NOT NULL,
    task_id    bigint      NOT NULL,
    page       integer     NOT NULL,
    cursor     text        NOT NULL,
    items      bigint      NOT NULL,
    endpoint   text        NOT NULL,
    query      text        NOT NULL,
    body       bytea       NOT NULL,
    body_bytes integer     NOT NULL,
    fetched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, task_id, page)
);
COMMENT ON TABLE crawl.pages IS 'The page archive of runs whose job sets archive: true: one row per committed page (or object), its body as received (the API key already redacted), zstd-compressed. crawler replay --run ID maps these again with no request upstream.';
COMMENT ON COLUMN crawl.pages.run_id IS 'The run (crawl.runs.id).';
COMMENT ON COLUMN crawl.pages.task_id IS 'The task (crawl.tasks.id) the page belongs to.';
COMMENT ON COLUMN crawl.pages.page IS 'Pages of the task committed before this one (0: its first page, or the object).';
COMMENT ON COLUMN crawl.pages.cursor IS 'The cursor the page was fetched with ('''': the first page).';
COMMENT ON COLUMN crawl.pages.items IS 'Entries of the task''s earlier pages (ranks of this page continue from it).';
COMMENT ON COLUMN crawl.pages.endpoint IS 'The endpoint in the spec''s terms, e.g. /shortvideo/user/followers (without the configured prefix).';
COMMENT ON COLUMN crawl.pages.query IS 'The request''s query string as sent (parameters sorted by name, URL-encoded).';
COMMENT ON COLUMN crawl.pages.body IS 'The 2xx body, zstd-compressed (the key redacted by the client before anything stored it).';
COMMENT ON COLUMN crawl.pages.body_bytes IS 'The body''s size before compression, bytes.';
COMMENT ON COLUMN crawl.pages.fetched_at IS 'When the page was committed.';

-- +goose Down
DROP TABLE crawl.pages;
