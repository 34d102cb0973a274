"""A FAKE of the `gh` CLI (the GitHub boundary, which this machine cannot reach), for the
self-tests of tfperf-bisect's issues and tfperf-notify's pull-request comments: it keeps
issues, comments and labels in a JSON file ($FAKE_GH_STATE) and answers the few commands
tfperf.bisect.github_issue and tfperf.notify.pr_comment run, as gh does (`gh api --paginate`
prints each page's JSON array back to back; pages here hold two comments, so that a module that
reads only the first page is caught). Anything else fails, so that a command a module starts to
use is noticed here."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any


def on_path(folder: Path) -> dict[str, str]:
    """An environment whose `gh` is this fake, keeping its state in folder/gh.json."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'gh'\n"
                  f"runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')\n")
    gh.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "FAKE_GH_STATE": str(folder / "gh.json")}


def main(argv: list[str]) -> int:
    state_path = Path(os.environ["FAKE_GH_STATE"])
    state = json.loads(state_path.read_text()) if state_path.exists() else \
        {"issues": [], "labels": [], "calls": []}
    state["calls"].append(argv)
    if argv[:1] == ["api"]:
        code, out = _api(argv[1:], state)
        if code == 0:
            state_path.write_text(json.dumps(state))
            print(out)
        return code
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


def _api(argv: list[str], state: dict[str, Any]) -> tuple[int, str]:
    """`gh api [--method M] [--paginate] PATH [-F body=@FILE]` on pull requests' comments."""
    parser = argparse.ArgumentParser(prog="gh api")
    parser.add_argument("path")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--paginate", action="store_true")
    parser.add_argument("-F", "--field", action="append", default=[])
    args = parser.parse_args(argv)
    path = args.path.split("?")[0].split("/")
    if path[:3] != ["repos", "octo", "perf"]:
        print(f"gh: Not Found (HTTP 404) {args.path}", file=sys.stderr)
        return 1, ""
    fields = dict(f.split("=", 1) for f in args.field)
    body = Path(fields["body"][1:]).read_text() if fields.get("body", "").startswith("@") \
        else fields.get("body")
    comments: dict[str, list[dict[str, Any]]] = state.setdefault("pr_comments", {})
    if path[3:4] == ["issues"] and path[5:] == ["comments"]:  # one pull request's comments
        listed = comments.setdefault(path[4], [])
        if args.method == "GET":
            pages = [listed[i:i + 2] for i in range(0, len(listed), 2)] or [[]]
            return 0, "".join(json.dumps(page) for page in (pages if args.paginate
                                                            else pages[:1]))
        if args.method == "POST" and body is not None:
            made = {"id": 1000 + sum(map(len, comments.values())), "body": body,
                    "html_url": f"https://github.com/octo/perf/pull/{path[4]}#issuecomment"}
            listed.append(made)
            return 0, json.dumps(made)
    if path[3:5] == ["issues", "comments"] and args.method == "PATCH" and body is not None:
        for listed in comments.values():
            for comment in listed:
                if comment["id"] == int(path[5]):
                    comment["body"] = body
                    return 0, json.dumps(comment)
        print("gh: Not Found (HTTP 404)", file=sys.stderr)
        return 1, ""
    print(f"fake gh: api {args.method} {args.path} is not faked", file=sys.stderr)
    return 1, ""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
