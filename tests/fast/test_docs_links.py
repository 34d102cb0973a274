"""The documentation holds together: every relative link resolves, and no page narrates the
repository's own work sessions ("stop N"); what changed when is the changelog's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
STOP = re.compile(r"\bstop \d+", re.I)


def linked_pages() -> list[Path]:
    pages = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "benchmarks" / "README.md"]
    pages += sorted((ROOT / "docs").rglob("*.md"))
    pages += sorted((ROOT / "benchmarks" / "results").glob("*.md"))
    return [page for page in pages if page.exists()]


def relative_links(text: str) -> list[str]:
    """The link targets outside code blocks that point into the repository."""
    targets = LINK.findall(FENCE.sub("", text))
    return [t for t in targets if not t.startswith(("http://", "https://", "mailto:", "#"))]


@pytest.mark.parametrize("page", linked_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    missing = [target for target in relative_links(page.read_text(encoding="utf-8"))
               if not (page.parent / target.split("#", 1)[0]).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to what does not exist: {missing}"


def test_no_page_of_the_docs_or_the_readme_says_stop_n() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = {str(page.relative_to(ROOT)): STOP.findall(page.read_text(encoding="utf-8"))
             for page in pages}
    assert not {page: hits for page, hits in found.items() if hits}


def test_the_link_reader_sees_links_and_skips_code_and_the_web() -> None:
    text = ("[a](docs/a.md) [b](docs/b.md#part) [web](https://example.org) [here](#top)\n"
            "```bash\n[not](in/code.md)\n```\n")
    assert relative_links(text) == ["docs/a.md", "docs/b.md#part"]
    assert STOP.search(" ".join(["Stop", "73"])) and not STOP.search("stops at 16 pairs")
