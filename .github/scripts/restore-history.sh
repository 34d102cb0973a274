#!/usr/bin/env bash
# Restore earlier nights' session files and the hypothesis database from the perf-history
# branch into .perf-results/. GH_TOKEN, if set, authenticates this fetch only (a private
# repository's). Exit 0 with nothing restored only when the branch does not exist yet; any
# other failure (authentication, network) fails, so that a night is never gated against an
# empty past by mistake. tests/real/test_workflows.py runs it against real repositories.
set -euo pipefail
if [ -n "${GH_TOKEN:-}" ]; then
  basic=$(printf 'x-access-token:%s' "$GH_TOKEN" | base64 -w0)
  # In git's environment (GIT_CONFIG_COUNT, git 2.31+), never on its command line, which any
  # process on the runner can read and a log may keep.
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraheader \
    GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic"
fi
mkdir -p .perf-results/history
set +e
git ls-remote --exit-code --heads origin perf-history > /dev/null
found=$?
set -e
if [ "$found" = 2 ]; then
  echo "no perf-history branch yet: the first night starts it"
  exit 0
elif [ "$found" != 0 ]; then
  echo "cannot read the perf-history branch (git ls-remote exit $found): check the token's" \
       "contents: read permission" >&2
  exit 1
fi
git fetch --depth=1 origin perf-history
for folder in results ab; do
  target=.perf-results/history
  [ "$folder" = ab ] && target=.perf-results
  if git cat-file -e "FETCH_HEAD:$folder" 2>/dev/null; then
    git archive FETCH_HEAD "$folder" | tar -x -C "$target"
  fi
done
if git cat-file -e FETCH_HEAD:hypothesis 2>/dev/null; then
  git archive FETCH_HEAD hypothesis | tar -x -C .perf-results
fi
echo "restored $(find .perf-results/history/results -name '*.json' | wc -l) session files"
