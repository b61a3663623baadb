"""``localjudge report``: the page and its data in one HTML file, for someone who has nothing installed.

The file is the served page (:mod:`.app`'s assets) with its stylesheet,
its script and its data inlined. The data sits in a ``<script
type="application/json">`` element, which a browser never runs, with
``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e`` and ``\\u0026``, so
no text from a results file can close the element. A Content-Security-Policy
in the file allows only its own script and stylesheet (by their sha256) and
images inlined as data, and no request to anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from .._datasets.results_file import replace_atomically
from .app import draw_agreement
from .figures import comparison, overview
from .index import RowQuery, RunIndex

__all__ = ["REPORT_ROWS", "is_report", "report_data", "report_html", "safe_json", "write_report"]

#: rows of each run a report holds whole; past this the file would be too big to open (the page says so)
REPORT_ROWS = 20000


def safe_json(value: Any) -> str:
    """JSON that cannot end the script element it sits in, nor start a comment or a tag there."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def report_data(runs: Sequence[RunIndex], *, pictures: bool = True, limit: int = REPORT_ROWS) -> dict[str, Any]:
    """Every view's data: each run's overview, rows and records (up to ``limit``), and each pair of runs compared."""
    found: dict[str, Any] = {"runs": [], "comparisons": {}}
    for index in runs:
        index.read_all()
        rows: list[dict[str, Any]] = []
        while len(rows) < limit:
            page = index.page(RowQuery(offset=len(rows), limit=min(500, limit - len(rows))))
            rows += page.rows
            if len(page.rows) < 500:
                break
        details = {row["id"]: index.row(row["id"]) for row in rows}
        figures = overview(index)
        figures["report_rows"] = len(rows)
        picture = draw_agreement(index) if pictures else None
        found["runs"].append(
            {
                "overview": figures,
                "rows": rows,
                "details": details,
                "picture": None if picture is None else "data:image/png;base64," + base64.b64encode(picture).decode(),
            }
        )
    for first in range(len(runs)):
        for second in range(len(runs)):
            if first != second:
                found["comparisons"][f"{first}/{second}"] = comparison(runs[first], runs[second])
    return found


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def report_html(data: dict[str, Any], *, title: str = "localjudge report") -> str:
    """The page with its assets and ``data`` inlined, and a policy that lets nothing else run or load."""
    script, style = _asset("view.js"), _asset("view.css")
    if "</script" in script.lower() or "</style" in style.lower():  # would end its element early
        raise AssertionError("an asset closes its own element")
    policy = (
        f"default-src 'none'; script-src {_digest(script)}; style-src {_digest(style)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    page = _asset("view.html")
    page = page.replace(
        '<meta charset="utf-8">',
        f'<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy" content="{policy}">',
    )
    page = page.replace("<title>localjudge view</title>", f"<title>{_escape(title)}</title>")
    page = page.replace('<link rel="stylesheet" href="/assets/view.css">', f"<style>{style}</style>")
    page = page.replace(
        '<script src="/assets/view.js" defer></script>',
        f'<script type="application/json" id="localjudge-data">{safe_json(data)}</script>\n<script>{script}</script>',
    )
    return page


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def is_report(path: Path) -> bool:
    """Whether ``path`` holds a report this module wrote (its title and its data's element say so)."""
    with Path(path).open("rb") as handle:
        head = handle.read(1 << 14)
    return b"<title>localjudge report: " in head and b'<meta http-equiv="Content-Security-Policy"' in head


def write_report(runs: Sequence[RunIndex], target: Path, *, limit: int = REPORT_ROWS) -> Path:
    """The report of ``runs`` written to ``target`` (atomically), each run's first ``limit`` rows held whole."""
    title = "localjudge report: " + ", ".join(index.name for index in runs)
    html = report_html(report_data(runs, limit=limit), title=title)
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(target, lambda out: out.write(html))
    return target
