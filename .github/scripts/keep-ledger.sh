#!/usr/bin/env bash
# Keep what tfperf-notify sent (perf-history/notified.jsonl) on the perf-history branch, which
# keep-history.sh checked out into perf-history/: a night without a team store rebuilds its
# store from the kept files, and this file is all it remembers of earlier nights' posts.
set -euo pipefail
if [ ! -f perf-history/notified.jsonl ]; then
  echo "nothing posted yet"
  exit 0
fi
git -C perf-history add notified.jsonl
if git -C perf-history diff --cached --quiet; then
  echo "nothing new posted"
  exit 0
fi
git -C perf-history commit -qm "notified $(date -u +%Y%m%dT%H%M%SZ) (run ${GITHUB_RUN_ID:-local})"
git -C perf-history push origin perf-history
