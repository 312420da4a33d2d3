-- The run lifecycle (package pipeline, runs.go): crawl.runs.

-- name: CreateRun
INSERT INTO crawl.runs (job_name, job, max_credits) VALUES (@job_name, @job, @max_credits) RETURNING id;

-- name: FinishRun
-- Records how a run ended, unless that would misstate it: "done" needs an
-- empty frontier; a stop or failure is recorded only when no other process
-- (lease owner not starting with @owner) holds a live lease on the run, and
-- never replaces "done".
UPDATE crawl.runs r SET state = @state, stop_reason = NULLIF(@reason, ''), finished_at = now()
WHERE r.id = @run_id AND (
    (@state = 'done' AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = @run_id AND t.state IN ('pending', 'leased')))
 OR (@state <> 'done' AND r.state <> 'done' AND NOT EXISTS (
        SELECT 1 FROM crawl.tasks t WHERE t.run_id = @run_id AND t.state = 'leased'
          AND t.lease_expires_at > now() AND NOT starts_with(t.lease_owner, @owner))))
RETURNING state;

-- name: RunState
SELECT state FROM crawl.runs WHERE id = @run_id;

-- name: ResumeRun
UPDATE crawl.runs SET state = 'running', stop_reason = NULL, finished_at = NULL
WHERE id = @run_id AND job_name = @job_name;

-- name: RunJobName
SELECT job_name FROM crawl.runs WHERE id = @run_id;
