#!/usr/bin/env bash
# Confirm and place the change points of every case that tonight's follow session ran
# (follow-nightly.yml): `tfperf-bisect changes` over the cases of the session files written
# since .perf-results/follow-started, each change point once (one a kept bisection answered is
# not bisected again). Tonight's bisection reports are copied to .perf-results/follow-reports/,
# which the issue job reads: the runner keeps earlier nights' reports, which have their issues.
set -euo pipefail
marker=.perf-results/follow-started
if [ ! -e "$marker" ]; then echo "no follow session tonight: no change point to answer"; exit 0; fi
mapfile -t sessions < <(find .perf-results/history/results -name '[0-9]*.json' -newer "$marker" 2>/dev/null | sort)
if [ ${#sessions[@]} -eq 0 ]; then echo "tonight's follow session kept no runs"; exit 0; fi
mapfile -t cases < <(.venv/bin/python -c '
import json, sys
print("\n".join(sorted({run["case_id"] for path in sys.argv[1:]
                        for run in json.load(open(path))["runs"]})))' "${sessions[@]}")
if [ ${#cases[@]} -eq 0 ]; then echo "tonight's follow session ran no case"; exit 0; fi
status=0
.venv/bin/tfperf-bisect changes "${cases[@]}" --package "tensorflow[and-cuda]" --budget 2h \
  -- --perf-tier=nightly -m gpu || status=$?
mkdir -p .perf-results/follow-reports
find .perf-results/reports/bisect -name bisect.json -newer "$marker" 2>/dev/null | while read -r report; do
  cp -r "$(dirname "$report")" .perf-results/follow-reports/
done
exit "$status"
