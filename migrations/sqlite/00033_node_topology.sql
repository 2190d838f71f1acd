-- Node topology: how each node's GPUs are connected (NVLink islands, NUMA nodes, PCIe levels), as
-- its node agent last reported it, one JSON document per node, for placement.

-- +goose Up
CREATE TABLE node_topology (
    node     TEXT PRIMARY KEY,
    hash     TEXT NOT NULL,
    read_at  DATETIME NOT NULL,
    topology TEXT NOT NULL
);

-- +goose Down
DROP TABLE node_topology;
