-- Adaptive revisits (reuse.adaptive, README "Repeat harvests"): what each
-- item a job revisits (a profile's counters, a newest-first list) has
-- shown of its rate of change, kept per job so the night's schedule reads
-- one row per item, never the history it was learnt from; and each run's
-- schedule, read by the run's workers one row per task.

-- +goose Up
ALTER TABLE crawl.tasks ADD COLUMN new_items bigint;
COMMENT ON COLUMN crawl.tasks.new_items IS 'A newest-first list''s entries that no earlier run had stored, counted page by page when stop_at_seen or adaptive revisits read them; NULL when not counted.';

CREATE TABLE crawl.revisit_items (
    job_name      text             NOT NULL,
    kind          text             NOT NULL,
    key           text             NOT NULL,
    owner         text,
    visits        integer          NOT NULL DEFAULT 1,
    last_run      bigint           NOT NULL,
    last_visit_at timestamptz      NOT NULL,
    intervals     real[]           NOT NULL DEFAULT '{}',
    events        real[]           NOT NULL DEFAULT '{}',
    censored      boolean[]        NOT NULL DEFAULT '{}',
    rate          double precision NOT NULL,
    page_size     real,
    full_pages    integer,
    edges         bigint,
    counter       bigint,
    counter_run   bigint,
    cut           boolean          NOT NULL DEFAULT false,
    PRIMARY KEY (job_name, kind, key)
);
COMMENT ON TABLE crawl.revisit_items IS 'One row per item a job revisits (a profile, a newest-first list), updated when a run that visited it ends: the observations its change-rate estimate is made from and the estimate. Read whole by the schedule of an adaptive run (reuse.adaptive) and by crawler plan.';
COMMENT ON COLUMN crawl.revisit_items.job_name IS 'The job (crawl.runs.job_name) whose runs visited the item: each job learns its own items.';
COMMENT ON COLUMN crawl.revisit_items.kind IS 'The task kind of the item (shortvideo.profile, or a newest-first list kind).';
COMMENT ON COLUMN crawl.revisit_items.key IS 'The task key of the item (crawl.tasks.key).';
COMMENT ON COLUMN crawl.revisit_items.owner IS 'Lists: the unique id of the account whose list it is (its profile''s counter says how long the list should be).';
COMMENT ON COLUMN crawl.revisit_items.visits IS 'Visits recorded, the first included (it is not an observation of change: nothing was known before it).';
COMMENT ON COLUMN crawl.revisit_items.last_run IS 'The run of the latest visit.';
COMMENT ON COLUMN crawl.revisit_items.last_visit_at IS 'When the latest visit ended.';
COMMENT ON COLUMN crawl.revisit_items.intervals IS 'Days between consecutive visits, oldest first, the last 30.';
COMMENT ON COLUMN crawl.revisit_items.events IS 'What each of those visits saw, aligned with intervals: lists, entries no earlier run had stored; profiles, 1 if its follower or following count changed, else 0.';
COMMENT ON COLUMN crawl.revisit_items.censored IS 'Aligned with intervals: the visit''s events are only a lower bound (its walk was cut by the page limit).';
COMMENT ON COLUMN crawl.revisit_items.rate IS 'Estimated events per day (package revisit: Gamma-Poisson mean for lists, the Cho and Garcia-Molina estimator for counters), from the prior and the observations, older ones discounted.';
COMMENT ON COLUMN crawl.revisit_items.page_size IS 'Lists: entries per page, as observed.';
COMMENT ON COLUMN crawl.revisit_items.full_pages IS 'Lists: pages of the latest complete walk (one that reached the list''s end).';
COMMENT ON COLUMN crawl.revisit_items.edges IS 'Lists: entries the list should hold by what was walked: the entries of its latest complete walk plus the new ones found since.';
COMMENT ON COLUMN crawl.revisit_items.counter_run IS 'Lists: the run whose snapshot counter is; the counter is compared with edges only when it is no older than the list''s last visit.';
COMMENT ON COLUMN crawl.revisit_items.cut IS 'Lists: a run ended with its walk unfinished (budget, stop): the entries past the pages bought may be new, which stop_at_seen would never reach, so its next visit walks it whole.';
COMMENT ON COLUMN crawl.revisit_items.counter IS 'Lists: the owner profile''s counter of the list (follower_count, following_count) at its latest snapshot, when the list was last visited or its owner since.';

CREATE TABLE crawl.revisit_plan (
    run_id     bigint  NOT NULL REFERENCES crawl.runs (id) ON DELETE CASCADE,
    kind       text    NOT NULL,
    key        text    NOT NULL,
    visit      boolean NOT NULL,
    full_walk  boolean NOT NULL DEFAULT false,
    reason     text    NOT NULL,
    yield      real    NOT NULL,
    cost       real    NOT NULL,
    priority   real    NOT NULL,
    PRIMARY KEY (run_id, kind, key)
);
COMMENT ON TABLE crawl.revisit_plan IS 'An adaptive run''s schedule, made when the run is created: for each item the job has visited before, whether to visit it in this run and why. Items not listed (new ones) are visited.';
COMMENT ON COLUMN crawl.revisit_plan.run_id IS 'The run the schedule is for.';
COMMENT ON COLUMN crawl.revisit_plan.kind IS 'The item''s task kind.';
COMMENT ON COLUMN crawl.revisit_plan.key IS 'The item''s task key.';
COMMENT ON COLUMN crawl.revisit_plan.visit IS 'Whether the run visits the item (else its task ends skipped, reason adaptive: ...).';
COMMENT ON COLUMN crawl.revisit_plan.full_walk IS 'Lists: walk it to its end (its owner''s counter moved more than the entries found explain: unfollows).';
COMMENT ON COLUMN crawl.revisit_plan.reason IS 'new, max_age, full_walk, yield (visited); below_floor, budget (skipped).';
COMMENT ON COLUMN crawl.revisit_plan.yield IS 'Expected events a visit captures (new entries, or the chance a counter changed), times the importance of its seed list.';
COMMENT ON COLUMN crawl.revisit_plan.cost IS 'Expected credits of the visit.';
COMMENT ON COLUMN crawl.revisit_plan.priority IS 'Order of spending, higher first.';

ALTER TABLE crawl.runs ADD COLUMN revisit jsonb;
COMMENT ON COLUMN crawl.runs.revisit IS 'Adaptive runs: the schedule''s totals at the start (items to visit and skip, expected cost, yield and staleness left) and, once the run ended, the yield it captured.';

-- +goose Down
ALTER TABLE crawl.runs DROP COLUMN revisit;
DROP TABLE crawl.revisit_plan;
DROP TABLE crawl.revisit_items;
ALTER TABLE crawl.tasks DROP COLUMN new_items;
