#!/usr/bin/env bash
# Confirm and place the change points of every case that tonight's follow session ran
# (follow-nightly.yml): `tfperf-bisect changes` over the cases of the session files written
# since .perf-results/follow-started, a case at a time, each change point once (one a kept
# bisection answered is not bisected again). Each case's new bisection reports are copied to
# .perf-results/follow-reports/ as soon as it ends, for the issue job: the runner keeps its
# workspace, so earlier nights' reports (and nightly.yml's) stay out of it. The marker is gone
# when this ends, so that no later night reads tonight's files as its own.
set -euo pipefail
marker=.perf-results/follow-started
reports=.perf-results/follow-reports
rm -rf "$reports"
mkdir -p "$reports"
if [ ! -e "$marker" ]; then echo "no follow session tonight: no change point to answer"; exit 0; fi
trap 'rm -f "$marker"' EXIT
sessions=()
if [ -d .perf-results/history/results ]; then
  mapfile -t sessions < <(find .perf-results/history/results -name '[0-9]*.json' -newer "$marker" | sort)
fi
if [ ${#sessions[@]} -eq 0 ]; then echo "tonight's follow session kept no runs"; exit 0; fi
listed=$(.venv/bin/python -c '
import json, sys
print("\n".join(sorted({run["case_id"] for path in sys.argv[1:]
                        for run in json.load(open(path))["runs"]})))' "${sessions[@]}")
mapfile -t cases < <(printf '%s\n' "$listed" | grep -v '^$' || true)
if [ ${#cases[@]} -eq 0 ]; then echo "tonight's follow session ran no case"; exit 0; fi
status=0
for case in "${cases[@]}"; do
  .venv/bin/tfperf-bisect changes "$case" --package "tensorflow[and-cuda]" --budget 1h \
    -- --perf-tier=nightly -m gpu || status=$?
  if [ -d .perf-results/reports/bisect ]; then
    find .perf-results/reports/bisect -name bisect.json -newer "$marker" | while read -r report; do
      cp -r "$(dirname "$report")" "$reports/"
    done
  fi
done
exit "$status"
