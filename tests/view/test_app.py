"""The page's server, in process: what it answers, what it refuses, and the headers on every answer."""

from __future__ import annotations

import pytest
from support.results_files import answers_run

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from localjudge._view.app import CONTENT_SECURITY_POLICY, Viewer, create_app, host_allowed
from localjudge._view.sources import open_runs, read_data


@pytest.fixture
def runs(tmp_path):
    results, data = answers_run(tmp_path)
    labels, values = read_data(data)
    return open_runs([results], labels, values)


def client(runs, **options):
    return TestClient(create_app(Viewer(runs), **options), base_url="http://127.0.0.1:8765")


def test_the_api_answers_pages_rows_and_figures_with_a_strict_policy(runs):
    web = client(runs)
    page = web.get("/")
    assert page.status_code == 200 and '<script src="/assets/view.js"' in page.text
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert page.headers["x-content-type-options"] == "nosniff"
    rows = web.get("/api/runs/0/rows", params={"filter": "failed"}).json()
    assert [row["id"] for row in rows["rows"]] == ["q007", "q050", "q099"]
    assert web.get("/api/runs/0/row", params={"id": "q012"}).json()["record"]["result"]["score"] is True
    assert web.get("/api/runs/0").json()["agreement"]["compared"] == 117
    assert web.get("/api/runs/0/agreement.png").headers["content-type"] == "image/png"
    assert web.get("/api/runs/0/rows", params={"filter": "nope"}).status_code == 400
    assert web.get("/api/runs/0/rows", params={"offset": "x"}).status_code == 400
    assert web.get("/api/runs/3").status_code == 404


def test_no_path_from_a_request_is_opened(runs, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show", encoding="utf-8")
    web = client(runs)
    for path in ("/assets/../../view/app.py", "/assets/app.py", "/assets/%2e%2e%2fapp.py", f"/assets/{secret}"):
        answer = web.get(path)
        assert answer.status_code == 404 and "do not show" not in answer.text and "import" not in answer.text
    for query in ({"id": str(secret)}, {"id": "../secret.txt"}, {"path": str(secret)}):
        assert "do not show" not in web.get("/api/runs/0/row", params=query).text
    assert web.post("/api/runs").status_code == 405


def test_loopback_answers_only_its_own_host_names(runs):
    web = client(runs)
    assert web.get("/api/runs", headers={"host": "evil.example:8765"}).status_code == 421
    assert host_allowed("localhost:8765", ("localhost",)) and host_allowed("[::1]:80", ("::1",))
    assert not host_allowed("127.0.0.1.evil.example", ("127.0.0.1",))


def test_off_loopback_every_request_needs_the_token(runs):
    web = TestClient(create_app(Viewer(runs), token="s3cret", allowed_hosts=None), base_url="http://10.0.0.5:8765")
    assert web.get("/api/runs").status_code == 401
    assert web.get("/assets/view.js").status_code == 401
    assert web.get("/api/runs", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert web.get("/api/runs", headers={"authorization": "Bearer s3cret"}).status_code == 200
    opened = web.get("/?token=s3cret", follow_redirects=False)
    assert opened.status_code == 303 and opened.headers["location"] == "/"  # the token leaves the address bar
    assert "httponly" in opened.headers["set-cookie"].lower()
    assert web.get("/api/runs").status_code == 200  # the cookie carries it now
