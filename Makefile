# Quartermaster: `make run` starts the console on the embedded default, `make test` runs every test.
GO      ?= go
PKGS    ?= ./...
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: run build test test-short test-faults lint bench fuzz helm-check

run:
	$(GO) run ./cmd/quartermaster console

# build stamps the binaries with the version (git describe) and commit; `quartermaster version` shows them.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
build:
	$(GO) build -ldflags "-X github.com/acme/quartermaster/internal/buildinfo.version=$(VERSION) -X github.com/acme/quartermaster/internal/buildinfo.commit=$(COMMIT)" -o bin/ ./cmd/...

# test runs every test against the real services the project starts itself.
test:
	bash scripts/test.sh

# test-faults runs the long fault tests (docs/reliability.md): kill -9 during provisioning on Slurm
# (Slack commands, and Discord commands deferred),
# PostgreSQL restarted under load, three replicas with redeliveries, the agent's service
# unreachable. They need PostgreSQL (scripts/pg-up.sh) and the Slurm test cluster (make slurm-up).
test-faults:
	$(GO) test -tags faults -count=1 -timeout 15m -v -run 'OnSlurm|UnderLoad|Unreachable' ./internal/faults/

test-short:
	$(GO) test -short $(PKGS)

lint:
	bash scripts/lint.sh

bench:
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh

# helm-check runs helm lint and helm template on the chart (building helm once if it is missing).
helm-check:
	bash scripts/helm-check.sh

# slurm-up starts a one-node Slurm test cluster on this host (root; state in .slurm/); source .slurm/env.
.PHONY: slurm-up slurm-down
slurm-up:
	bash scripts/slurm-up.sh

# slurm-down stops exactly the daemons slurm-up started.
slurm-down:
	bash scripts/slurm-down.sh
