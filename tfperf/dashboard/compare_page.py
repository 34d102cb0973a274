"""Any two measured sessions compared, case by case: compare.html lets the reader choose them
(or takes them from its address: compare.html#a=SESSION&b=SESSION) and shows B/A of each case
both ran, slowest first, with their geometric mean.

The site opens from a folder, where a page may not fetch() files: each session's examples/s are
a script of their own (sessions/<session>.js), loaded when chosen, so a year of sessions costs
the page nothing until it is read."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tfperf.dashboard.html_text import slug
from tfperf.dashboard.site_data import SiteData

PAGE = "compare.html"

COMPARE_JS = """
const sessions = window.TFPERF_SESSIONS;  // newest first
const loaded = {};
const pick = {a: document.getElementById("a"), b: document.getElementById("b")};
window.tfperfSession = (id, rates) => { loaded[id] = rates; render(); };

function load(id) {
  if (!id || loaded[id] || document.getElementById("load-" + id)) return;
  const tag = document.createElement("script");
  tag.id = "load-" + id;
  tag.src = "sessions/" + sessions.find(s => s.id === id).file + ".js";
  document.body.appendChild(tag);
}

function cell(row, text, numeric) {
  const td = row.insertCell();
  td.textContent = text;
  if (numeric) td.className = "n";
  return td;
}

function render() {
  const a = pick.a.value, b = pick.b.value;
  history.replaceState(null, "", "#a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b));
  const table = document.getElementById("compared");
  const said = document.getElementById("summary");
  load(a); load(b);
  if (!loaded[a] || !loaded[b]) { said.textContent = "loading..."; return; }
  const both = Object.keys(loaded[b]).filter(c => c in loaded[a]);
  const rows = both.map(c => [c, loaded[a][c], loaded[b][c], loaded[b][c] / loaded[a][c]])
    .sort((x, y) => x[3] - y[3]);
  table.querySelectorAll("tr.case").forEach(r => r.remove());
  for (const [c, ra, rb, ratio] of rows) {
    const row = table.insertRow();
    row.className = "case";
    const link = document.createElement("a");
    link.href = "cases/" + c.replace(/[^A-Za-z0-9_.-]+/g, "_") + ".html";
    link.textContent = c;
    cell(row, "", false).appendChild(link);
    cell(row, ra.toFixed(1), true); cell(row, rb.toFixed(1), true);
    const r = cell(row, ratio.toFixed(3), true);
    if (ratio < 0.97) r.classList.add("bad");
  }
  const mean = Math.exp(rows.reduce((s, r) => s + Math.log(r[3]), 0) / Math.max(rows.length, 1));
  const onlyA = Object.keys(loaded[a]).length - both.length;
  const onlyB = Object.keys(loaded[b]).length - both.length;
  said.textContent = rows.length + " cases in both, B/A geometric mean " + mean.toFixed(3) +
    "; " + onlyA + " only in A, " + onlyB + " only in B.";
}

for (const which of ["a", "b"]) {
  for (const s of sessions) {
    const option = document.createElement("option");
    option.value = s.id;
    option.textContent = s.when + " UTC, " + s.machine + ", " + s.id + " (" + s.cases + " cases)";
    pick[which].appendChild(option);
  }
  pick[which].addEventListener("change", render);
}
const asked = new URLSearchParams(location.hash.slice(1));
const newest = sessions[0];
const before = newest && sessions.find(s => s.machine === newest.machine && s.id !== newest.id);
pick.b.value = asked.get("b") || (newest ? newest.id : "");
pick.a.value = asked.get("a") || (before ? before.id : pick.b.value);
if (sessions.length) render();
"""


@dataclass(frozen=True)
class Session:
    id: str
    when: str
    machine: str
    rates: dict[str, float]  # examples/s by case


def sessions(data: SiteData) -> list[Session]:
    """Every measured session with its cases' examples/s, newest first."""
    rates: dict[str, dict[str, float]] = defaultdict(dict)
    seen: dict[str, tuple[str, str]] = {}
    for case, points in data.runs.items():
        for p in points:
            rates[p.session][case] = p.examples_per_sec
            if p.session not in seen:  # formatted once a session, not once a run
                seen[p.session] = (p.when.strftime("%Y-%m-%d %H:%M"), p.machine_key)
    found = [Session(id_, *seen[id_], rates[id_]) for id_ in rates]
    return sorted(found, key=lambda s: (s.when, s.id), reverse=True)


def previous(found: list[Session]) -> dict[str, str]:
    """Each session's previous one on the same machine (what a run's compare link pairs it
    with)."""
    before: dict[str, str] = {}
    last: dict[str, str] = {}
    for session in reversed(found):
        if session.machine in last:
            before[session.id] = last[session.machine]
        last[session.machine] = session.id
    return before


def write(site: Path, found: list[Session]) -> None:
    """compare.js, the sessions' list and one script of examples/s a session."""
    folder = site / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    for session in found:
        (folder / f"{slug(session.id)}.js").write_text(
            f"tfperfSession({json.dumps(session.id)}, {json.dumps(session.rates)});\n",
            encoding="utf-8")
    listed = [{"id": s.id, "file": slug(s.id), "when": s.when, "machine": s.machine,
               "cases": len(s.rates)} for s in found]
    (site / "static" / "sessions.js").write_text(
        f"window.TFPERF_SESSIONS = {json.dumps(listed)};\n", encoding="utf-8")
    (site / "static" / "compare.js").write_text(COMPARE_JS, encoding="utf-8")


def body() -> str:
    return ("<p>Two measured sessions, case by case: B/A of each case both ran, slowest first "
            "(below 0.97 in red). The address keeps the choice: a link to it compares the same "
            "two.</p><label>A <select id=\"a\"></select></label><br>"
            "<label>B <select id=\"b\"></select></label>"
            "<p id=\"summary\"></p><table id=\"compared\"><tr><th>case</th><th>A examples/s</th>"
            "<th>B examples/s</th><th>B/A</th></tr></table>"
            "<script src=\"static/sessions.js\"></script><script src=\"static/compare.js\">"
            "</script>")
