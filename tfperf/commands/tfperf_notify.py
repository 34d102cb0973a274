"""Tell people what the store found: new regressions, failures, slower A/B cases and culprits,
posted to a webhook once each; a pull request's A/B as one comment that each run edits.

    TFPERF_WEBHOOK_URL=https://hooks.slack.com/... tfperf-notify webhook [--format slack|json]
        [--since 7d] [--link RUN_URL] [--ledger FILE] [--dry-run]
    GH_TOKEN=... tfperf-notify pr .perf-results/ab/<session>.json --repo OWNER/NAME --number N

`webhook` reads the findings that began within --since (default 7d) from the store (--store,
else $TFPERF_STORE_URL, else the history folder's SQLite file), leaves out those this webhook
was sent already, posts the rest as one message and only then remembers them in the store: a
post that fails is tried again next time. The URL is read from $TFPERF_WEBHOOK_URL, never from
the command line (it holds the webhook's token, and command lines are logged). A store rebuilt
each night (no team store) forgets what it sent: --ledger keeps it in a JSON-lines file that is
read first and appended to after.

Exit 0: sent, or nothing new; 2: bad input, a store or a receiver that cannot be used.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.ab import session_file
from tfperf.commands import arguments
from tfperf.ground.gh_cli import GitHubError
from tfperf.notify import messages, pr_comment, webhook
from tfperf.storage import findings, notifications, timestamps
from tfperf.storage.errors import StorageError
from tfperf.storage.files import read_json
from tfperf.storage.notifications import Sent
from tfperf.storage.results_store import ResultsStore

URL_ENV = "TFPERF_WEBHOOK_URL"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfperf-notify", description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="webhook|pr")
    hook = verbs.add_parser("webhook", help=f"post new findings to ${URL_ENV}, once each")
    arguments.add_store(hook, "where the findings are read and the sent ones remembered")
    hook.add_argument("--format", choices=messages.FORMATS, default="slack",
                      help="Slack's incoming-webhook message (default) or a generic JSON document")
    hook.add_argument("--since", type=arguments.days_ago("--since"), default="7d",
                      help="only findings that began within this many days (default 7d)")
    hook.add_argument("--kind", action="append", choices=findings.KINDS,
                      help="only these kinds of finding (repeat; default: every kind)")
    hook.add_argument("--link", metavar="URL", help="a link the message ends with (the run)")
    hook.add_argument("--ledger", type=Path, metavar="FILE",
                      help="what was sent, as JSON lines, for a store rebuilt each night")
    hook.add_argument("--dry-run", action="store_true",
                      help="print the message; send nothing, remember nothing")
    pr = verbs.add_parser("pr", help="post a pull request's A/B, or edit the comment posted")
    pr.add_argument("session", type=Path, help="the A/B session file (pytest perf/ wrote it)")
    pr.add_argument("--repo", required=True, metavar="OWNER/NAME")
    pr.add_argument("--number", required=True, type=arguments.positive_int("--number"))
    pr.add_argument("--link", metavar="URL", help="the run, linked from the comment")
    return parser


def _read_ledger(path: Path | None) -> list[Sent]:
    if path is None or not path.exists():
        return []
    try:
        return [Sent(row["finding"], row["destination"], row["kind"], timestamps.utc(row["sent"]))
                for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())
                if row]
    except (ValueError, KeyError, TypeError) as error:
        raise StorageError(f"{path} is not a tfperf-notify ledger: {error}") from None


def _write_ledger(path: Path, sent: Sequence[Sent]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as ledger:
        for row in sent:
            ledger.write(json.dumps({**vars(row), "sent": row.sent.isoformat()}) + "\n")


def _webhook(args: argparse.Namespace, store: ResultsStore, url: str) -> int:
    where = notifications.destination(url)
    notifications.remember(store.engine, _read_ledger(args.ledger))
    done = notifications.sent_to(store.engine, where)
    new = [f for f in findings.read(store.engine, timestamps.utc(args.since),
                                    tuple(args.kind or findings.KINDS)) if f.key not in done]
    if not new:
        print(f"tfperf-notify: nothing new in {store.where} since {args.since[:10]}")
        return 0
    document = messages.payload(new, args.format, args.link)
    if args.dry_run:
        print(json.dumps(document, indent=1))
        print(f"tfperf-notify: a dry run: {len(new)} findings not sent", file=sys.stderr)
        return 0
    status = webhook.post(url, document)
    now = timestamps.now()
    sent = [Sent(f.key, where, f.kind, now) for f in new]
    notifications.remember(store.engine, sent)
    if args.ledger is not None:
        _write_ledger(args.ledger, sent)
    print(f"tfperf-notify: {messages.headline(new)}: sent (HTTP {status})")
    return 0


def _pr(args: argparse.Namespace) -> int:
    data = read_json(args.session)
    session_file.validate(data, args.session)
    print(pr_comment.post_or_update(pr_comment.body(data, args.link), args.repo, args.number))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.verb == "pr":
            if args.repo.count("/") != 1 or not all(args.repo.split("/")):
                parser.error(f"argument --repo: {args.repo!r} is not OWNER/NAME")
            return _pr(args)
        url = os.environ.get(URL_ENV, "")
        if not url and not args.dry_run:
            parser.error(f"no webhook: set ${URL_ENV} to its URL (it is never an argument)")
        if url:
            try:
                webhook.check(url)
            except ValueError as error:
                parser.error(f"${URL_ENV}: {error}")
        layout, _ = arguments.fill_folders(args, parser)
        store = arguments.open_store(args, layout.history, parser, create=False)
        try:
            return _webhook(args, store, url or "dry run")
        finally:
            store.close()
    except (StorageError, webhook.WebhookError, GitHubError) as error:
        print(f"tfperf-notify: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
