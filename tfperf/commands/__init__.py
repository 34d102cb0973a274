"""The console scripts, one module each, named for its command (tfperf_gate.py is tfperf-gate),
as asv keeps its commands: each parses its arguments, calls the packages that do the work and
says what happened in one line on failure. What several commands take (a percentage, pairs, a
duration, the results store, the project's folders) is declared once in arguments.py, with the
value parsers the --perf-* options use."""
