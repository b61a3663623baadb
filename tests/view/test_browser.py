"""``localjudge view`` as a user meets it: the command on a free port, a real headless Chromium on its page.

Each test opens a kind of page, works it (filters, pages, a row, two runs
side by side, a run that grows), and checks that no hostile row ran any
script and that the page asked nothing of any server but its own. The
screenshots land in build/view-screenshots/ (docs/view.png, which README.md and docs/view.md show, is one of them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.browser import chromium_path
from support.process_helpers import die_with_parent
from support.results_files import HOSTILE, answer, answers_run, describe_judge, write_results

from localjudge._datasets.results_file import ResultsFile

pytestmark = pytest.mark.browser
playwright_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (the dev extra)")
expect = playwright_api.expect

SHOTS = Path(__file__).resolve().parents[2] / "build" / "view-screenshots"
HUGE = "5 MB: " + "x" * (5 << 20)
JUDGE_PROMPT = "Is {outputs} right? " + HOSTILE[1]  # the judge's prompt, shown as text like any row's


#: an agent's run, as `batch --trajectory` judges it: its messages and a tool call, with the tool's hostile answer
TRAJECTORY = [
    {"role": "user", "content": "Book me a flight to Paris on Friday."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": "search_flights", "arguments": '{"to": "PAR"}'}}],
    },
    {"role": "tool", "content": "3 flights found. " + HOSTILE[0]},
    {"role": "assistant", "content": "Booked the 9:00 flight to Paris."},
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, Path, Path]:
    folder = tmp_path_factory.mktemp("runs")
    (folder / "second").mkdir()
    first, data = answers_run(folder)
    describe_judge(first, prompt=JUDGE_PROMPT)
    second, _ = answers_run(folder / "second", flip=["q005", "q010", "q015"])
    out = ResultsFile(second).open()
    out.append(answer("huge", True, 0.9, comment=HUGE))
    out.close()
    agent = write_results(folder / "agent.results.jsonl", [answer("t001", True, 0.9, way="plain")])
    with data.open("a", encoding="utf-8") as rows:  # its row beside the others, as one labels file gives them all
        rows.write(json.dumps({"id": "t001", "inputs": "Book a flight", "outputs": TRAJECTORY, "label": True}) + "\n")
    return first, second, data, agent


@pytest.fixture(scope="module")
def server(runs) -> Iterator[str]:
    """``localjudge view`` on port 0, as typed; its address read from what it prints."""
    first, second, data, agent = runs
    command = [
        sys.executable,
        "-m",
        "localjudge._cli",
        "view",
        str(first),
        str(second),
        str(agent),
        "--labels",
        str(data),
    ]
    process = subprocess.Popen([*command, "--port", "0"], stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)
    try:
        address = None
        deadline = time.monotonic() + 60
        while address is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                pytest.fail(f"localjudge view exited with {process.returncode}")
            found = re.search(r"on (http://127\.0\.0\.1:\d+/)", line)
            address = found.group(1) if found else None
        assert address, "localjudge view never printed its address"
        yield address
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser():
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


class Watched:
    """A page whose requests, dialogs and errors are kept for the test to check."""

    def __init__(self, browser, origin: str) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.origin = origin
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def check_nothing_ran_and_nothing_left(self) -> None:
        assert self.page.evaluate("window.__pwned") is None  # no hostile payload ran
        assert self.dialogs == [] and self.errors == []
        assert [url for url in self.requests if not url.startswith(self.origin)] == []

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=name != "overview")


@pytest.fixture
def watched(browser, server):
    page = Watched(browser, server)
    yield page
    page.page.close()


def test_the_overview_and_its_rows_filter_search_and_page(watched, server):
    page = watched.page
    started = time.monotonic()
    page.goto(server + "#/run/0")
    page.wait_for_selector("#rows tr >> nth=1")
    print(f"\nfirst page shown in {time.monotonic() - started:.2f} s")
    assert "rows 1–50 of 120" in page.inner_text("#table")
    # the figures come after the rows (kappa's interval is resampled): on a busy machine that takes a while
    expect(page.locator("#overview")).to_contain_text("Against the labels", timeout=60_000)
    expect(page.locator("#overview")).to_contain_text("0.803 (95% interval 0.722 to 0.865)")
    expect(page.locator("#overview")).to_contain_text("gemma-3-270m-q4_k_m.gguf")  # the judge, described beside
    assert JUDGE_PROMPT in page.inner_text("#overview")
    page.wait_for_selector("img.plot")
    watched.shot("overview")
    page.get_by_role("button", name="Failed", exact=True).click()
    expect(page.locator("#table")).to_contain_text("rows 1–3 of 3")
    assert [cell.inner_text() for cell in page.query_selector_all("#rows tr td:nth-child(2)")] == [
        "q007",
        "q050",
        "q099",
    ]
    page.get_by_role("button", name="All", exact=True).click()
    expect(page.locator("#table")).to_contain_text("rows 1–50 of 120")
    page.fill("input[type=search]", "question 77")
    page.press("input[type=search]", "Enter")
    expect(page.locator("#table")).to_contain_text("rows 1–1 of 1")
    page.fill("input[type=search]", "")
    page.press("input[type=search]", "Enter")
    expect(page.locator("#table")).to_contain_text("of 120")
    page.get_by_role("button", name="next →").click()
    expect(page.locator("#table")).to_contain_text("rows 51–100 of 120")
    page.select_option("select", "confidence")
    page.wait_for_url(re.compile("sort=confidence"))
    watched.check_nothing_ran_and_nothing_left()


def test_a_hostile_row_is_shown_as_text_and_runs_nothing(watched, server):
    page = watched.page
    page.goto(server + "#/run/0")
    page.wait_for_selector("#rows tr >> nth=1")
    page.click("text=q003")
    page.wait_for_selector("text=What was judged")
    shown = page.inner_text("main")
    assert HOSTILE[3] in shown  # </textarea><script>... as its own characters
    assert "Request 1 of 1" in shown and f"Is this right? {HOSTILE[3]}" in shown  # the request sent, as text
    watched.shot("row-exchanges")
    page.goto(server + "#/run/0/row?id=q050")  # a failed row: its error and the raw output
    page.wait_for_selector("text=The model's raw output")
    assert HOSTILE[1] in page.inner_text("main")
    watched.shot("row")
    page.goto(server + "#/run/0/row?id=" + "../../../etc/passwd")
    page.wait_for_selector("text=Could not show this")
    watched.check_nothing_ran_and_nothing_left()


def test_a_five_megabyte_row_opens_and_the_page_stays_usable(watched, server):
    page = watched.page
    page.goto(server + "#/run/1/row?id=huge")
    page.wait_for_selector("text=show all")
    page.click("text=← the run")
    page.wait_for_selector("#rows tr >> nth=1")
    watched.check_nothing_ran_and_nothing_left()


def test_a_trajectory_row_shows_each_message_and_tool_call_as_text(watched, server):
    page = watched.page
    page.goto(server + "#/run/2/row?id=t001")
    page.wait_for_selector("text=outputs (a trajectory)")
    shown = page.inner_text("main")
    assert "search_flights" in shown and "tool calls" in shown.lower()
    assert "Booked the 9:00 flight to Paris." in shown and HOSTILE[0] in shown  # the tool's answer, as text
    watched.shot("trajectory")
    watched.check_nothing_ran_and_nothing_left()


def test_two_runs_side_by_side(watched, server):
    page = watched.page
    page.goto(server + "#/compare/0/1")
    page.wait_for_selector("#changed")
    text = page.inner_text("main")
    assert "verdicts that changed\n3" in text.replace("\t", "\n")
    assert "McNemar's exact test" in text
    assert [cell.inner_text() for cell in page.query_selector_all("#changed tr td:first-child")] == [
        "q005",
        "q010",
        "q015",
    ]
    watched.shot("compare")
    watched.check_nothing_ran_and_nothing_left()


def test_runs_that_share_no_row_are_not_offered_side_by_side(watched, server):
    page = watched.page
    page.goto(server + "#/")
    page.wait_for_selector("#comparisons li >> nth=2")
    offered = page.locator("#comparisons a")
    expect(offered).to_have_count(1)  # the two runs of one set; the agent's run shares no row with either
    assert offered.get_attribute("href") == "#/compare/0/1"
    assert page.inner_text("#comparisons").count("no row id in common") == 2
    watched.shot("runs")
    page.goto(server + "#/compare/0/2")
    expect(page.locator("#no-shared-rows")).to_contain_text("no row id in common")
    assert page.locator("#changed").count() == 0
    watched.check_nothing_ran_and_nothing_left()


def test_a_run_in_progress_is_followed(watched, server, runs):
    page = watched.page
    page.goto(server + "#/run/0")
    page.wait_for_selector("#rows tr >> nth=1")
    out = ResultsFile(runs[0]).open()
    try:
        out.append(answer("late-row", True, 0.9, comment="written while the page was open"))
    finally:
        out.close()
    expect(page.locator("#table")).to_contain_text("of 121", timeout=10000)
    watched.check_nothing_ran_and_nothing_left()


def test_the_report_opens_from_disk_with_every_view_and_no_network(browser, runs, tmp_path):
    first, _, data, _ = runs
    target = tmp_path / "report.html"
    subprocess.run(
        [sys.executable, "-m", "localjudge._cli", "report", str(first), "--labels", str(data), "-o", str(target)],
        check=True,
        env={**os.environ},
    )
    watched = Watched(browser, target.as_uri())
    page = watched.page
    page.goto(target.as_uri() + "#/run/0")
    page.wait_for_selector("#rows tr >> nth=1")
    expect(page.locator("#overview")).to_contain_text("Against the labels")
    expect(page.locator("#overview")).to_contain_text("a5a5a5a5")  # the model file's checksum, inlined
    page.get_by_role("button", name="Wrong against the label", exact=True).click()
    expect(page.locator("#table")).to_contain_text("of 23")
    page.goto(target.as_uri() + "#/run/0/row?id=q003")
    page.wait_for_selector("text=What was judged")
    assert HOSTILE[3] in page.inner_text("main")
    watched.shot("report-row")
    watched.check_nothing_ran_and_nothing_left()
    page.close()


def test_a_report_of_fewer_rows_than_the_run_says_so_and_counts_them_all(browser, runs, tmp_path):
    first, _, data, _ = runs
    target = tmp_path / "short.html"
    command = ["report", str(first), "--labels", str(data), "--rows", "50", "-o", str(target)]
    made = subprocess.run(
        [sys.executable, "-m", "localjudge._cli", *command],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "the report holds the first 50 whole" in made.stderr
    watched = Watched(browser, target.as_uri())
    watched.page.goto(target.as_uri() + "#/run/0")
    watched.page.wait_for_selector("#rows tr >> nth=1")
    expect(watched.page.locator("#overview")).to_contain_text("50 (the first; the figures count every row)")
    expect(watched.page.locator("#overview")).to_contain_text("rows compared117")  # every judged row measured
    held = re.compile(r"holds the first 50 of the run's 12[01] rows whole")  # 121 once a test above adds a row
    expect(watched.page.locator("#report-cap")).to_contain_text(held)
    watched.page.get_by_role("button", name="Failed", exact=True).click()
    pager = watched.page.locator("#table .pages")
    expect(pager).to_have_text("rows 1–2 of 2")  # q007 and q050: the 50 held, as it says
    watched.shot("report-capped")
    watched.check_nothing_ran_and_nothing_left()
    watched.page.close()
