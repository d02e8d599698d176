#!/usr/bin/env bash
# make fuzz: the fuzz suite (tests/fuzz) with random examples, pass after pass, for FUZZ_SECONDS
# (default 600). Stops at the first finding (hypothesis prints the failing input and a
# @reproduce_failure line; it is also kept in .cache/hypothesis and replayed first next time).
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-600}
examples=${HBS_FUZZ_EXAMPLES:-2000}
end=$((SECONDS + seconds))
passes=0
while [ "$SECONDS" -lt "$end" ]; do
  passes=$((passes + 1))
  echo "fuzz: pass $passes ($examples examples per test, ${SECONDS}s of ${seconds}s)"
  if ! HBS_FUZZ_PROFILE=fuzz HBS_FUZZ_EXAMPLES=$examples .venv/bin/python -m pytest -q -p no:cacheprovider tests/fuzz; then
    echo "fuzz: finding in pass $passes after ${SECONDS}s"
    exit 1
  fi
done
echo "fuzz: $passes passes in ${SECONDS}s, no finding"
