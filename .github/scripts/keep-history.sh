#!/usr/bin/env bash
# Append tonight's session files (measured and A/B) and the hypothesis database, downloaded
# into tonight/ and tonight-ab/, to the perf-history branch, checked out into perf-history/.
# Files already kept are never replaced. Run by nightly.yml's keep-history job.
set -euo pipefail
git config user.name "tfperf nightly"
git config user.email "tfperf-nightly@users.noreply.github.com"
if git ls-remote --exit-code --heads origin perf-history > /dev/null; then
  git fetch --depth=1 origin perf-history
  git worktree add -B perf-history perf-history FETCH_HEAD
else
  git worktree add --detach perf-history
  git -C perf-history switch --orphan perf-history  # the first night: an empty branch
fi
mkdir -p perf-history/results perf-history/ab
kept=0
for file in tonight/history/results/*.json tonight-ab/ab/*.json; do
  [ -e "$file" ] || continue
  case "$file" in tonight-ab/*) to=perf-history/ab ;; *) to=perf-history/results ;; esac
  cp -n "$file" "$to/"
  kept=$((kept + 1))
done
if [ -d tonight/hypothesis ]; then
  rm -rf perf-history/hypothesis && cp -r tonight/hypothesis perf-history/hypothesis
fi
if [ "$kept" = 0 ]; then
  echo "no results tonight"
  exit 0
fi
git -C perf-history add -A
git -C perf-history commit -qm "nightly results $(date -u +%Y%m%dT%H%M%SZ) (run ${GITHUB_RUN_ID:-local})"
git -C perf-history push origin perf-history
