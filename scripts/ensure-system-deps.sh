#!/usr/bin/env bash
# Installs the system packages the tests need, from Debian's archive, when they are missing:
#   postgresql   (the PostgreSQL backend tests start a throwaway server from it)
#   nats-server  (the NATS bus tests start a throwaway server from it)
# Idempotent: a no-op when everything is present. Skips quietly when not root or without apt-get
# (the tests that need a missing server then skip themselves and say so).
set -euo pipefail

have_postgres() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1
}
have_nats() {
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ]
}

missing=()
have_postgres || missing+=(postgresql)
have_nats || missing+=(nats-server)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-system-deps: missing ${missing[*]} (not root or no apt-get; tests needing them will skip)" >&2
  exit 0
fi

echo "ensure-system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The Debian package starts a cluster on 5432 and nats on 4222; the tests start their own
# servers on free ports, so the packaged services are stopped where a service manager exists.
if command -v pg_ctlcluster >/dev/null 2>&1; then
  for conf in /etc/postgresql/*/*; do
    [ -d "$conf" ] || continue
    version=$(basename "$(dirname "$conf")")
    cluster=$(basename "$conf")
    pg_ctlcluster "$version" "$cluster" stop >/dev/null 2>&1 || true
  done
fi
exit 0
