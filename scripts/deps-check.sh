#!/usr/bin/env bash
# The dependency rules: each third-party SDK has exactly one importing package, the domain imports
# only the standard library and CEL, and commands/reports/bot stay free of chat SDKs and storage.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
fail=0
# importers PATTERN ALLOWED_REGEX: every package importing PATTERN directly must match ALLOWED_REGEX.
importers() {
  local dep=$1 allowed=$2
  go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... | while read -r pkg imports; do
    for i in $imports; do
      case "$i" in "$dep"|"$dep"/*)
        if ! [[ "$pkg" =~ $allowed ]]; then echo "dependency rule: $pkg imports $i (only $allowed may)"; echo x >> /tmp/qm-deps-fail.$$; fi;;
      esac
    done
  done
}
rm -f /tmp/qm-deps-fail.$$
importers github.com/slack-go/slack "^$mod/bot/slack(/|$)"
importers github.com/bwmarrin/discordgo "^$mod/bot/discord(/|$)"
importers github.com/NVIDIA/go-nvml "^$mod/agent/nvml(/|$)"
importers github.com/go-co-op/gocron "^$mod/internal/schedule(/|$)"
importers github.com/jmoiron/sqlx "^$mod/internal/store(/|$)"
importers github.com/lib/pq "^$mod/internal/store(/|$)"
importers modernc.org/sqlite "^$mod/internal/store(/|$)"
importers github.com/pressly/goose "^$mod/internal/store(/|$)"
importers github.com/coreos/go-oidc "^$mod/internal/oidc(/|$)"
importers k8s.io/client-go "^$mod/internal/kube(/|$)"
# The domain: standard library, CEL and the policy only.
for pkg in $mod/internal/qm $mod/internal/policy; do
  go list -f '{{join .Imports "\n"}}' "$pkg" | while read -r i; do
    case "$i" in
      *.*/*) case "$i" in
        $mod/internal/policy|github.com/google/cel-go/*|gopkg.in/yaml.v3) ;;
        *) echo "dependency rule: $pkg imports $i (the domain imports only the standard library, CEL and the policy)"; echo x >> /tmp/qm-deps-fail.$$;;
      esac;;
    esac
  done
done
# commands, reports and bot never import a chat SDK, the store or the agent.
for pkg in $(go list ./commands/... ./reports/... ./bot 2>/dev/null); do
  go list -f '{{join .Imports "\n"}}' "$pkg" | while read -r i; do
    case "$i" in
      github.com/slack-go/*|github.com/bwmarrin/*|github.com/jmoiron/*|github.com/coreos/*|github.com/NVIDIA/*|$mod/internal/store*|$mod/agent*|$mod/commands*)
        if [ "$pkg" != "$mod/commands" ] || [[ "$i" != $mod/commands* ]]; then
          echo "dependency rule: $pkg imports $i"; echo x >> /tmp/qm-deps-fail.$$; fi;;
    esac
  done
done
# agent never imports the store.
for pkg in $(go list ./agent/... 2>/dev/null); do
  if go list -deps "$pkg" | grep -q "^$mod/internal/store"; then echo "dependency rule: $pkg depends on the store"; echo x >> /tmp/qm-deps-fail.$$; fi
done
if [ -f /tmp/qm-deps-fail.$$ ]; then rm -f /tmp/qm-deps-fail.$$; exit 1; fi
echo "dependency rules hold"
