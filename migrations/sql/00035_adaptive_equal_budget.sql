-- Adaptive revisits at equal budget (issue 25): what a visit costs at
-- most, the visits a run's second look admitted, and the runs whose visits
-- are still to be recorded (a run records them as they end; one killed or
-- abandoned is recorded by the next schedule of its job).

-- +goose Up
ALTER TABLE crawl.revisit_items ADD COLUMN surprise real NOT NULL DEFAULT 0;
COMMENT ON COLUMN crawl.revisit_items.surprise IS 'Lists: new entries a day the latest visit found beyond what the estimate before it foresaw (less two standard deviations of chance): a burst, a change of pace. The schedule adds the mean over the job''s lists of a kind to every list''s rate.';
ALTER TABLE crawl.revisit_plan ADD COLUMN cost_high real NOT NULL DEFAULT 0;
COMMENT ON COLUMN crawl.revisit_plan.cost_high IS 'Credits the visit costs at most unless its rate is well above the estimate (a list''s pages for a quarter more entries and two standard deviations): a visit is admitted only if the credits left cover this after the visits ranked higher.';
ALTER TABLE crawl.revisit_plan ADD COLUMN second_look boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN crawl.revisit_plan.second_look IS 'The run''s second look admitted the visit: once its frontier was done, the credits left covered it (its task, skipped for the budget, went back to pending and is visited).';

ALTER TABLE crawl.runs ADD COLUMN revisit_pending boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN crawl.runs.revisit_pending IS 'A process works or worked on the run and what it saw of the items it revisits is not all recorded in crawl.revisit_items yet (cleared once the run''s end has recorded it; a run killed or abandoned is recorded by the next schedule of its job).';
CREATE INDEX runs_revisit_pending_idx ON crawl.runs (job_name, id) WHERE revisit_pending;
COMMENT ON INDEX crawl.runs_revisit_pending_idx IS 'The runs of a job whose revisits are still to be recorded: a new run''s schedule finds them in one probe.';

-- +goose Down
DROP INDEX crawl.runs_revisit_pending_idx;
ALTER TABLE crawl.runs DROP COLUMN revisit_pending;
ALTER TABLE crawl.revisit_plan DROP COLUMN second_look;
ALTER TABLE crawl.revisit_plan DROP COLUMN cost_high;
ALTER TABLE crawl.revisit_items DROP COLUMN surprise;
