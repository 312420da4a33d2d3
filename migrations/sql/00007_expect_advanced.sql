-- A page's commit is one pipelined batch in an implicit transaction (one
-- round trip, no BEGIN/COMMIT). Its first statement advances the task under
-- the worker's fencing token and must abort the batch when it matched no
-- row (lease lost, or the page already committed by an earlier attempt):
-- plain SQL cannot raise, so this function does.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION crawl.expect_advanced(n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF n <> 1 THEN
        RAISE EXCEPTION 'task not advanced (% rows)', n USING ERRCODE = 'CR001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION crawl.expect_advanced(bigint);
