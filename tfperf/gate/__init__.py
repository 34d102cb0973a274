"""The regression gate: statistics, rules, history, baselines, verdicts and reports."""
