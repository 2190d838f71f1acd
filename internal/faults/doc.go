// Package faults holds the tests that run the built quartermaster binary as a process and break
// what it depends on: kill -9 in the middle of provisioning on the real Slurm test cluster, a
// PostgreSQL server restarted under load, three replicas on one database with Slack redeliveries,
// and a database that accepts connections and never answers. After every fault the test itself
// checks, from the database and from squeue, that no lease, job or notice was lost, doubled or
// left behind. docs/reliability.md lists each promise and the test that checks it.
//
// The quick tests run with every `go test`; the long fault runs are built with the faults tag:
//
//	make test-faults    (go test -tags faults ./internal/faults/)
package faults
