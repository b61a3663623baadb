"""The HTML report: one file, its data inlined so that no text from a results file can leave its element."""

from __future__ import annotations

import json
import re

from support.results_files import HOSTILE, answer, answers_run, describe_judge, write_results

from localjudge._view.index import RunIndex
from localjudge._view.report import report_data, report_html, safe_json, write_report
from localjudge._view.sources import read_data

DATA_BLOCK = re.compile(r'<script type="application/json" id="localjudge-data">(.*?)</script>', re.S)


def test_safe_json_cannot_close_its_element_and_reads_back_the_same():
    value = {"text": HOSTILE, "amp": "a & b <!--"}
    text = safe_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == value


def test_the_report_holds_every_view_and_hostile_text_only_inside_its_data(tmp_path):
    (tmp_path / "b").mkdir()
    first, data = answers_run(tmp_path)
    second, _ = answers_run(tmp_path / "b", flip=["q005"])
    labels, values = read_data(data)
    runs = [RunIndex(path, labels=labels, values=values) for path in (first, second)]
    html = write_report(runs, tmp_path / "report.html").read_text(encoding="utf-8")
    (block,) = DATA_BLOCK.findall(html)
    data_read = json.loads(block)
    assert [run["overview"]["rows"] for run in data_read["runs"]] == [120, 120]
    assert data_read["comparisons"]["0/1"]["changed_count"] == 1
    assert data_read["runs"][0]["details"]["q003"]["values"]["outputs"] == HOSTILE[3]
    assert data_read["runs"][0]["picture"].startswith("data:image/png;base64,")
    outside = html.replace(block, "")
    assert "__pwned" not in outside  # no hostile text outside the data block
    assert html.count("<script") == 2  # the data and the page's own script, nothing else
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in policy and "'unsafe-inline'" not in policy
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # nothing fetched from anywhere


def test_a_five_megabyte_row_is_kept_whole(tmp_path):
    huge = "x" * (5 << 20)
    path = write_results(tmp_path / "big.results.jsonl", [answer("big", True, 0.9, comment=huge)])
    data = report_data([RunIndex(path)], pictures=False)
    assert data["runs"][0]["details"]["big"]["record"]["result"]["comment"] == huge
    assert len(data["runs"][0]["rows"][0]["excerpt"]) < 300  # the table shows an excerpt
    assert len(report_html(data)) > 5 << 20


def test_the_report_inlines_the_judge_described_beside_the_results_as_data_only(tmp_path):
    path = write_results(tmp_path / "data.results.jsonl", [{**answer("a", True, 0.9), "seconds": 0.25}])
    describe_judge(path, prompt="Judge {outputs}. " + HOSTILE[4])
    html = report_html(report_data([RunIndex(path)], pictures=False))
    (block,) = DATA_BLOCK.findall(html)
    (judge,) = json.loads(block)["runs"][0]["overview"]["judges"]
    assert judge["asked"][0]["prompt"] == "Judge {outputs}. " + HOSTILE[4]
    assert judge["models"][0]["sha256"] == "a5" * 32
    assert "__pwned" not in html.replace(block, "") and html.count("<script") == 2
