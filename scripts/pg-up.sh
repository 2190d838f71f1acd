#!/usr/bin/env bash
# pg-up.sh makes sure the PostgreSQL the tests use is running on this host: 127.0.0.1:5432, user
# postgres without a password over TCP, database "test" (storetest.DefaultPostgresDSN).
#
# If the server answers already, it only checks the login and the database. Otherwise it starts the
# Debian cluster found under /etc/postgresql, or, on a machine without PostgreSQL, installs Debian's
# postgresql package first (root only). If the stock pg_hba.conf asks a TCP login from 127.0.0.1 for
# a password, it puts one "host all all 127.0.0.1/32 trust" line ahead of the others and reloads.
#
# Running it again changes nothing. Parallel runs take turns on a lock file.
set -euo pipefail

host=127.0.0.1
port=${QM_PG_PORT:-5432}
db=${QM_PG_DATABASE:-test}
wait_s=${QM_PG_WAIT:-60}
lockfile=${QM_PG_LOCK:-${TMPDIR:-/tmp}/qm-pg-up.lock}

say() { echo "pg-up: $*"; }
die() { echo "pg-up: $*" >&2; exit 1; }

exec 9>"$lockfile"
flock -w 300 9 || die "another pg-up holds $lockfile"

ready() { pg_isready -q -h "$host" -p "$port" >/dev/null 2>&1; }
psql_tcp() { psql -X -w -q -h "$host" -p "$port" -U postgres "$@"; }
can_login() { psql_tcp -d postgres -Atc 'SELECT 1' >/dev/null 2>&1; }

# cluster prints "VERSION main" for the newest Debian cluster, or nothing.
cluster() {
  [ -d /etc/postgresql ] || return 0
  local v
  v=$(find /etc/postgresql -mindepth 2 -maxdepth 2 -name main -type d 2>/dev/null | awk -F/ '{print $4}' | sort -V | tail -n 1)
  [ -n "$v" ] && echo "$v main"
  return 0
}

start_cluster() {
  local c
  c=$(cluster)
  [ -n "$c" ] || die "no PostgreSQL cluster under /etc/postgresql"
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not answering on $host:$port; starting cluster $c needs root"
  say "starting cluster $c"
  # shellcheck disable=SC2086
  pg_ctlcluster --skip-systemctl-redirect $c start || ready || die "pg_ctlcluster $c start failed"
}

# --- server ------------------------------------------------------------------------------------
if ! command -v pg_isready >/dev/null 2>&1 || { ! ready && [ -z "$(cluster)" ]; }; then
  [ "$(id -u)" -eq 0 ] || die "PostgreSQL is not installed; run as root to install Debian's postgresql package"
  say "installing postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

if ! ready; then
  start_cluster
fi

for _ in $(seq "$wait_s"); do
  ready && break
  sleep 1
done
ready || die "PostgreSQL did not answer on $host:$port within ${wait_s}s"

# --- login over TCP without a password ---------------------------------------------------------
if ! can_login; then
  c=$(cluster)
  [ -n "$c" ] || die "cannot log in as postgres on $host:$port, and no Debian cluster to fix"
  [ "$(id -u)" -eq 0 ] || die "cannot log in as postgres on $host:$port without a password; fixing pg_hba.conf needs root"
  hba=/etc/postgresql/${c% *}/main/pg_hba.conf
  line="host all all 127.0.0.1/32 trust"
  if ! grep -qxF "$line" "$hba"; then
    say "trusting TCP logins from 127.0.0.1 in $hba"
    # The first matching line wins, so the trust line goes before every other rule.
    tmp=$(mktemp)
    awk -v line="$line" '!done && $0 !~ /^[[:space:]]*(#|$)/ { print line; done = 1 } { print } END { if (!done) print line }' "$hba" >"$tmp"
    cat "$tmp" >"$hba"
    rm -f "$tmp"
  fi
  # shellcheck disable=SC2086
  pg_ctlcluster --skip-systemctl-redirect $c reload
  for _ in $(seq 10); do
    can_login && break
    sleep 1
  done
  can_login || die "still cannot log in as postgres on $host:$port"
fi

# --- the test database -------------------------------------------------------------------------
if [ "$(psql_tcp -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
  say "creating database $db"
  psql_tcp -d postgres -c "CREATE DATABASE \"$db\"" >/dev/null
fi

say "PostgreSQL is up: postgres://postgres@$host:$port/$db?sslmode=disable"
