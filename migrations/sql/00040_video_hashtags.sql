-- The hashtags a video carries: the real service's videos list them in
-- cha_list (issue 25, finding 9); the contract's carry none.

-- +goose Up
CREATE TABLE shortvideo.video_hashtags (
    video_id       text   NOT NULL REFERENCES shortvideo.videos (video_id),
    name           text   NOT NULL REFERENCES shortvideo.hashtags (name),
    first_seen_run bigint NOT NULL REFERENCES crawl.runs (id),
    last_seen_run  bigint NOT NULL REFERENCES crawl.runs (id),
    PRIMARY KEY (video_id, name)
);
CREATE INDEX video_hashtags_name_idx ON shortvideo.video_hashtags (name);
CREATE INDEX video_hashtags_last_seen_run_idx ON shortvideo.video_hashtags (last_seen_run);
COMMENT ON TABLE shortvideo.video_hashtags IS 'Link: the video carried the hashtag (its cha_list), in any list that showed it. A hashtag a video no longer carries keeps its row; its last_seen_run stops moving.';
COMMENT ON COLUMN shortvideo.video_hashtags.video_id IS 'The video (shortvideo.videos).';
COMMENT ON COLUMN shortvideo.video_hashtags.name IS 'The hashtag (shortvideo.hashtags), as cha_list[].cha_name, without #.';
COMMENT ON COLUMN shortvideo.video_hashtags.first_seen_run IS 'First run that saw the video carry the hashtag.';
COMMENT ON COLUMN shortvideo.video_hashtags.last_seen_run IS 'Latest run that saw the video carry the hashtag.';

-- +goose Down
DROP TABLE shortvideo.video_hashtags;
