#!/usr/bin/env bash
# Start the services the tests use when they are down: PostgreSQL (127.0.0.1:5432, database
# `test`) and Redis (127.0.0.1:6379). Outside CI a service that cannot be started only makes
# its tests skip with a reason; under CI=true that is an error.
set -u
fail=0

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! port_open 6379; then
  if command -v redis-server >/dev/null; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null || fail=1
  else
    echo "services: redis-server is not installed" >&2; fail=1
  fi
fi

if ! port_open 5432; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || fail=1
  else
    echo "services: PostgreSQL is not installed" >&2; fail=1
  fi
fi

for _ in $(seq 1 50); do
  port_open 6379 && port_open 5432 && exit 0
  sleep 0.2
done
if [ "${CI:-}" = "true" ] || [ "$fail" = 1 ]; then
  echo "services: PostgreSQL or Redis is not reachable" >&2
  [ "${CI:-}" = "true" ] && exit 1
fi
exit 0
