#!/usr/bin/env bash
# What single sign-on adds to each chat command: the door's link and groups lookups
# (docs/benchmarks.md, "Single sign-on").
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'BenchmarkDoor' -benchtime 3000x -count 2 ./internal/oidc/
