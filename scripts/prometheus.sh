#!/usr/bin/env bash
# What tests/observability needs: Debian's `prometheus` package, which provides /usr/bin/prometheus
# and /usr/bin/promtool. Installed with apt-get only (no binary is ever downloaded from elsewhere),
# without recommends, and without letting the package start its own service: the tests start their
# own Prometheus on a free loopback port with a scratch TSDB, and nothing may be left on :9090.
# Idempotent: does nothing when both binaries are there. Outside CI it installs what it can and
# always exits 0 (the tests then skip with a reason); under CI=true a missing binary is an error.
set -u

ci=false
[ "${CI:-}" = "true" ] && ci=true
say() { echo "prometheus: $*" >&2; }
have() { [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; }

if ! have; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing Debian's prometheus package with apt-get"
    # invoke-rc.d asks policy-rc.d whether a package may start its service; 101 = no. A policy
    # already in place (Docker images ship one) is left as it is.
    policy=/usr/sbin/policy-rc.d
    made_policy=false
    if [ ! -e "$policy" ]; then
      printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && made_policy=true
    fi
    { apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; } >/dev/null \
      || say "apt-get install prometheus failed"
    $made_policy && rm -f "$policy"
    # Should a service have started anyway (systemd ignores policy-rc.d on some hosts), stop it.
    if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
      say "stopping the prometheus service the package started"
      systemctl stop prometheus >/dev/null 2>&1 || true
      systemctl disable prometheus >/dev/null 2>&1 || true
    fi
  else
    say "prometheus is missing and apt-get cannot be used here (needs root)"
  fi
fi

if ! have; then
  say "prometheus/promtool are not installed (/usr/bin/prometheus, /usr/bin/promtool)"
  if $ci; then
    say "ERROR: the Prometheus tests' dependency is missing (CI=true)"
    exit 1
  fi
  say "tests/observability will be skipped"
fi
exit 0
