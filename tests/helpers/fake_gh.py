"""A FAKE of the `gh` CLI (the GitHub boundary, which this machine cannot reach), for the
self-tests of tfperf-bisect's issues: it keeps issues, comments and labels in a JSON file
($FAKE_GH_STATE) and answers the few commands tfperf.bisect.github_issue runs, as gh does.
Anything else fails, so that a command the module starts to use is noticed here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    state_path = Path(os.environ["FAKE_GH_STATE"])
    state = json.loads(state_path.read_text()) if state_path.exists() else \
        {"issues": [], "labels": [], "calls": []}
    state["calls"].append(argv)
    parser = argparse.ArgumentParser(prog="gh")
    parser.add_argument("noun")
    parser.add_argument("verb")
    parser.add_argument("target", nargs="?")
    for option in ("--repo", "--state", "--label", "--limit", "--json", "--title", "--body-file",
                   "--color", "--description"):
        parser.add_argument(option)
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    if args.repo != "octo/perf":
        print(f"HTTP 404: Not Found (repository {args.repo})", file=sys.stderr)
        return 1
    out = ""
    if (args.noun, args.verb) == ("issue", "list"):
        out = json.dumps([{"number": i["number"], "title": i["title"]} for i in state["issues"]
                          if i["state"] == "open" and args.label in i["labels"]])
    elif (args.noun, args.verb) == ("issue", "create"):
        if args.label not in state["labels"]:
            print(f"could not add label: '{args.label}' not found", file=sys.stderr)
            return 1
        number = len(state["issues"]) + 1
        state["issues"].append({"number": number, "title": args.title, "state": "open",
                                "labels": [args.label], "body": Path(args.body_file).read_text(),
                                "comments": []})
        out = f"https://github.com/octo/perf/issues/{number}"
    elif (args.noun, args.verb) == ("issue", "comment"):
        issue = state["issues"][int(args.target) - 1]
        issue["comments"].append(Path(args.body_file).read_text())
    elif (args.noun, args.verb) == ("label", "create"):
        if args.target not in state["labels"]:
            state["labels"].append(args.target)
    else:
        print(f"fake gh: {args.noun} {args.verb} is not faked", file=sys.stderr)
        return 1
    state_path.write_text(json.dumps(state))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
