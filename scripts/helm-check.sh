#!/usr/bin/env bash
# helm lint and helm template on deploy/helm/quartermaster, then the chart test with helm on PATH
# (it compares helm's rendering with its own). Debian packages no helm, so a missing one is built
# from the Go module proxy (helm.sh/helm/v3, pinned; several minutes on two cores, once).
set -euo pipefail
cd "$(dirname "$0")/.."
helm_version=${QM_HELM_VERSION:-v3.22.0}
if ! command -v helm >/dev/null 2>&1; then
  gobin="$(go env GOPATH)/bin"
  if [ ! -x "$gobin/helm" ]; then
    echo "helm-check: building helm $helm_version (go install)"
    GOBIN="$gobin" GOFLAGS=-mod=mod go install "helm.sh/helm/v3/cmd/helm@$helm_version"
  fi
  export PATH="$gobin:$PATH"
fi
helm version --short
helm lint deploy/helm/quartermaster --set policy.content='organization: Example'
helm template qm deploy/helm/quartermaster --set policy.content='organization: Example' --set serviceMonitor.enabled=true --set prometheusRule.enabled=true >/dev/null
go test -count=1 -run '^TestHelmChart$' ./deploy/
