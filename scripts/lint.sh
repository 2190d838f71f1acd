#!/usr/bin/env bash
# gofmt, go vet, staticcheck and the dependency rules of docs/architecture.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
out=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$out" ]; then echo "gofmt: these files need formatting:"; echo "$out"; fail=1; fi
go vet ./... || fail=1
if ! command -v staticcheck >/dev/null 2>&1; then
  GOBIN="$(go env GOPATH)/bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2 >/dev/null 2>&1 || true
  export PATH="$(go env GOPATH)/bin:$PATH"
fi
if command -v staticcheck >/dev/null 2>&1; then staticcheck ./... || fail=1; else echo "staticcheck: not installable here; skipped"; fi
bash scripts/deps-check.sh || fail=1
exit $fail
