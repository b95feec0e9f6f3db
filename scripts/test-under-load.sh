#!/usr/bin/env bash
# Runs the whole test suite while another process keeps every core busy, to
# show that no assertion depends on an idle machine. Needs stress-ng
# (apt-get install stress-ng) and, for the full suite, what .ci/run installs.
#
# usage: scripts/test-under-load.sh [cargo test arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || { echo "stress-ng is not installed (apt-get install stress-ng)" >&2; exit 2; }
cargo test --no-run --quiet "$@"   # compile first: the load is for the tests, not the compiler
stress-ng --cpu "$(nproc)" --timeout 3600s --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null || true' EXIT
echo "stress-ng holds $(nproc) cores (pid $hog); running cargo test" >&2
cargo test "$@"
