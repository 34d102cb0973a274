"""Every `--perf-*` option: declared and parsed here, once, into typed settings. Each module
declares one group of options and parses them; a bad value raises ValueError with one line
that names the option, the value and what is valid, before any case runs. The consumers get
the settings they use, never pytest's config."""
