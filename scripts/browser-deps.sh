#!/usr/bin/env bash
# What the browser tests (tests/e2e/browser/) need beyond the Python test extras:
#   - Debian's chromium (/usr/bin/chromium), driven by Playwright for Python with executable_path;
#     `playwright install` is never run (it downloads a browser build);
#   - prebid-universal-creative 1.17.2 from npm, unpacked under .cache/npm/ (its dist/load-cookie.html);
#   - prebid.js 11.36.0 from npm, unpacked under .cache/npm/, and from it two bundles built offline by
#     concatenating the package's prebuilt dist/chunks inside its bundle-template.txt
#     (scripts/build_prebid_bundle.py): .cache/npm/prebid-11.36.0-pbs.js holding only
#     prebidServerBidAdapter, and .cache/npm/prebid-11.36.0-pbs-tcf.js adding consentManagementTcf
#     (the TCF CMP client; without tcfControl, which would block bidders in the browser and hide what
#     the server does).
# Idempotent: does nothing when all are there. Outside CI it installs what it can and always exits 0
# (the tests then skip with a reason); under CI=true anything missing that cannot be installed is an error.
set -u
cd "$(dirname "$0")/.." || exit 1

PUC_VERSION=1.17.2
PUC_DIR=.cache/npm/prebid-universal-creative-$PUC_VERSION
PBJS_VERSION=11.36.0
PBJS_DIR=.cache/npm/prebid.js-$PBJS_VERSION
PBJS_BUNDLE=.cache/npm/prebid-$PBJS_VERSION-pbs.js
PBJS_MODULES=prebidServerBidAdapter
PBJS_TCF_BUNDLE=.cache/npm/prebid-$PBJS_VERSION-pbs-tcf.js
PBJS_TCF_MODULES="prebidServerBidAdapter consentManagementTcf"
ci=false
[ "${CI:-}" = "true" ] && ci=true
fail=0

say() { echo "browser-deps: $*" >&2; }

# --- chromium (apt) -------------------------------------------------------------------------
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing chromium with apt-get"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null \
      || say "apt-get install chromium failed"
  else
    say "chromium is missing and apt-get cannot be used here (needs root)"
  fi
  [ -x /usr/bin/chromium ] || { say "chromium is not installed (/usr/bin/chromium)"; fail=1; }
fi

# --- prebid-universal-creative (npm pack, unpacked) ----------------------------------------
if [ ! -f "$PUC_DIR/package/dist/load-cookie.html" ]; then
  if command -v npm >/dev/null; then
    say "fetching prebid-universal-creative@$PUC_VERSION with npm pack"
    mkdir -p .cache/npm
    tarball=.cache/npm/prebid-universal-creative-$PUC_VERSION.tgz
    if [ ! -s "$tarball" ]; then
      (cd .cache/npm && npm pack --silent "prebid-universal-creative@$PUC_VERSION" >/dev/null) \
        || say "npm pack prebid-universal-creative@$PUC_VERSION failed"
    fi
    if [ -s "$tarball" ]; then
      rm -rf "$PUC_DIR.tmp" && mkdir -p "$PUC_DIR.tmp" \
        && tar -xzf "$tarball" -C "$PUC_DIR.tmp" \
        && rm -rf "$PUC_DIR" && mv "$PUC_DIR.tmp" "$PUC_DIR" \
        || say "cannot unpack $tarball"
    fi
  else
    say "npm is not installed; cannot fetch prebid-universal-creative"
  fi
  [ -f "$PUC_DIR/package/dist/load-cookie.html" ] \
    || { say "prebid-universal-creative is missing ($PUC_DIR/package/dist/load-cookie.html)"; fail=1; }
fi

# --- prebid.js (npm pack, unpacked) and its bundles ------------------------------------------
if [ ! -s "$PBJS_BUNDLE" ] || [ ! -s "$PBJS_TCF_BUNDLE" ]; then
  if [ ! -f "$PBJS_DIR/package/dist/chunks/dependencies.json" ]; then
    mkdir -p .cache/npm
    tarball=.cache/npm/prebid.js-$PBJS_VERSION.tgz
    if [ ! -s "$tarball" ]; then
      if command -v npm >/dev/null; then
        say "fetching prebid.js@$PBJS_VERSION with npm pack"
        (cd .cache/npm && npm pack --silent "prebid.js@$PBJS_VERSION" >/dev/null) \
          || say "npm pack prebid.js@$PBJS_VERSION failed"
      else
        say "npm is not installed; cannot fetch prebid.js"
      fi
    fi
    if [ -s "$tarball" ]; then
      rm -rf "$PBJS_DIR.tmp" && mkdir -p "$PBJS_DIR.tmp" \
        && tar -xzf "$tarball" -C "$PBJS_DIR.tmp" \
        && rm -rf "$PBJS_DIR" && mv "$PBJS_DIR.tmp" "$PBJS_DIR" \
        || { say "cannot unpack $tarball (removed; the next run fetches it again)"; rm -rf "$tarball" "$PBJS_DIR.tmp"; }
    fi
  fi
  # Route A of shared/reference/real-clients-and-performance.md §1.2: what `gulp bundle` does, offline.
  build_bundle() {  # build_bundle OUT MODULE... (only when OUT is missing)
    local out=$1
    shift
    [ -s "$out" ] && return 0
    if [ -f "$PBJS_DIR/package/dist/chunks/dependencies.json" ]; then
      local python=python3
      [ -x .venv/bin/python ] && python=.venv/bin/python
      "$python" scripts/build_prebid_bundle.py --package "$PBJS_DIR/package" --out "$out" "$@" \
        || say "building $out failed"
    fi
    [ -s "$out" ] || { say "the Prebid.js bundle is missing ($out)"; fail=1; }
  }
  build_bundle "$PBJS_BUNDLE" $PBJS_MODULES
  build_bundle "$PBJS_TCF_BUNDLE" $PBJS_TCF_MODULES
fi

if [ "$fail" = 1 ]; then
  if $ci; then
    say "ERROR: browser test dependencies are missing (CI=true)"
    exit 1
  fi
  say "browser tests will be skipped"
fi
exit 0
