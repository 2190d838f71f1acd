-- Where the console's simulated clock last stood on this database: one row, written when a
-- console starts and each time its clock moves, so that a console started again goes on from
-- there (a simulated clock never goes back), even when nothing else was written at that time.

-- +goose Up
CREATE TABLE sim_clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE sim_clock;
