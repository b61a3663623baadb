"""The page's server: the viewer's own assets and a JSON API over the runs given when it started.

What it may open is fixed when it starts: its assets (a fixed list of
names in the package) and the results files it was given. A request names
a run by its number and a row by its id, looked up in the index; nothing in
a URL or a query string is ever a path. Every answer carries a strict
Content-Security-Policy: scripts only from this server, no inline script,
no request to anywhere else.

On loopback only the loopback host names are answered (a page on another
site that points its own name at 127.0.0.1 gets nothing); on any other
address every request needs the token, which the address printed at start
carries once and a cookie carries after that.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

from ..errors import UsageError
from .figures import comparison, overview, shared_rows
from .index import RowQuery, RunIndex

__all__ = ["ASSETS", "CONTENT_SECURITY_POLICY", "LOOPBACK", "Viewer", "create_app"]

#: the assets the page loads: name -> content type; nothing else is served from the package
ASSETS = {
    "view.js": "text/javascript; charset=utf-8",
    "view.css": "text/css; charset=utf-8",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1")
COOKIE = "localjudge_view"


@dataclass
class Viewer:
    """What the server shows: the runs' indexes, and the figures computed once per version of each."""

    runs: Sequence[RunIndex]
    _cache: dict[Any, Any] = field(default_factory=dict)

    def run(self, number: int) -> RunIndex:
        if not 0 <= number < len(self.runs):
            raise LookupError(f"no run {number}")
        return self.runs[number]

    def listing(self) -> list[dict[str, Any]]:
        for index in self.runs:
            index.refresh()
        return [
            {"number": n, "name": index.name, "path": str(index.path), "rows": index.count(), "version": index.version}
            for n, index in enumerate(self.runs)
        ]

    def pairs(self) -> list[dict[str, int]]:
        """Each two runs with the row ids they share (computed once per version of the runs)."""
        key = ("pairs", "all", tuple(index.version for index in self.runs))  # one entry: older versions are dropped
        return self._cached(key, lambda: shared_rows(self.runs))

    def overview(self, number: int) -> dict[str, Any]:
        index = self.run(number)
        index.refresh()
        return self._cached(("overview", number, index.version), lambda: overview(index))

    def comparison(self, first: int, second: int) -> dict[str, Any]:
        a, b = self.run(first), self.run(second)
        a.refresh()
        b.refresh()
        key = ("compare", first, second, a.version, b.version)
        return self._cached(key, lambda: comparison(a, b))

    def reliability_png(self, number: int) -> Optional[bytes]:
        """The agreement drawn by ``agreement --plot``'s own function; None without labels or matplotlib."""
        index = self.run(number)
        index.refresh()
        return self._cached(("png", number, index.version), lambda: draw_agreement(index))

    def _cached(self, key: Any, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            stale = [k for k in self._cache if k[:2] == key[:2] or (k[0] == key[0] == "compare" and k[1:3] == key[1:3])]
            for old in stale:
                del self._cache[old]
            self._cache[key] = compute()
        return self._cache[key]


def draw_agreement(index: RunIndex) -> Optional[bytes]:
    """The reliability diagram and confusion matrix as PNG bytes (matplotlib), or None where there is nothing to draw."""
    import tempfile
    from pathlib import Path

    from .._trust.plot import plot_agreement
    from ..errors import MissingDependencyError
    from .figures import measured

    labels = index.labels_in_use()
    if not labels:
        return None
    report = measured(index.judged(), labels)
    if not report.compared:
        return None
    with tempfile.TemporaryDirectory() as folder:
        try:
            drawn = plot_agreement(report, Path(folder) / "agreement.png", title=index.name)
        except MissingDependencyError:
            return None
        return drawn.read_bytes()


def page_html() -> bytes:
    return resources.files(__package__).joinpath("assets").joinpath("view.html").read_bytes()


def asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_bytes()


def host_allowed(host_header: str, allowed: Optional[Sequence[str]]) -> bool:
    """Whether a request's Host names this server: any, where ``allowed`` is None; else one of ``allowed``."""
    if allowed is None:
        return True
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    else:
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return host in allowed


def token_given(headers: Mapping[str, str], cookies: Mapping[str, str], query: Mapping[str, str], token: str) -> bool:
    """Whether a request carries the token: a bearer header, the page's cookie, or ``?token=`` once."""
    offered = [cookies.get(COOKIE, ""), query.get("token", "")]
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        offered.append(authorization[7:].strip())
    return any(hmac.compare_digest(candidate.encode(), token.encode()) for candidate in offered if candidate)


def create_app(  # noqa: C901  route handlers nested to close over the viewer; each is small
    viewer: Viewer, *, token: Optional[str] = None, allowed_hosts: Optional[Sequence[str]] = LOOPBACK
) -> Any:
    """The Starlette app: ``/`` the page, ``/assets/NAME``, ``/api/...`` JSON; ``token`` required where given."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, RedirectResponse, Response
    from starlette.routing import Route

    def json_answer(value: Any, status: int = 200) -> Response:
        return JSONResponse(value, status_code=status)

    def guarded(handler: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            try:
                return await run_in_threadpool(handler, request)
            except LookupError as exc:
                return json_answer({"error": str(exc).strip("'\"")}, 404)
            except (UsageError, ValueError) as exc:
                return json_answer({"error": str(exc)}, 400)

        return endpoint

    def index_page(request: Request) -> Response:
        if token and request.query_params.get("token"):  # the token leaves the address bar for a cookie
            answer: Response = RedirectResponse("/", status_code=303)
            answer.set_cookie(COOKIE, token, httponly=True, samesite="strict")
            return answer
        return Response(page_html(), media_type="text/html; charset=utf-8")

    def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            raise LookupError(f"no asset {name}")
        return Response(asset(name), media_type=ASSETS[name])

    def runs(request: Request) -> Response:
        return json_answer({"runs": viewer.listing(), "pairs": viewer.pairs(), "mode": "server"})

    def run_overview(request: Request) -> Response:
        return json_answer(viewer.overview(int(request.path_params["number"])))

    def version(request: Request) -> Response:
        index = viewer.run(int(request.path_params["number"]))
        index.refresh()
        read, size = index.progress
        return json_answer({"version": index.version, "rows": index.count(), "read": read, "size": size})

    def rows(request: Request) -> Response:
        index = viewer.run(int(request.path_params["number"]))
        index.refresh()
        query = request.query_params
        page = index.page(
            RowQuery(
                filter=query.get("filter", "all"),
                search=query.get("q", "")[:500],
                sort=query.get("sort", "position"),
                descending=query.get("desc") == "1",
                offset=int(query.get("offset", "0")),
                limit=int(query.get("limit", "50")),
            )
        )
        return json_answer({"total": page.total, "rows": page.rows, "version": index.version})

    def row(request: Request) -> Response:
        index = viewer.run(int(request.path_params["number"]))
        index.refresh()
        found = index.row(request.query_params.get("id", ""))
        if found is None:
            raise LookupError("no row with that id in this run")
        return json_answer(found)

    def compare(request: Request) -> Response:
        return json_answer(viewer.comparison(int(request.path_params["first"]), int(request.path_params["second"])))

    def picture(request: Request) -> Response:
        drawn = viewer.reliability_png(int(request.path_params["number"]))
        if drawn is None:
            raise LookupError("nothing to draw: no labelled verdicts in this run")
        return Response(drawn, media_type="image/png")

    routes = [
        Route("/", guarded(index_page)),
        Route("/assets/{name}", guarded(static)),
        Route("/api/runs", guarded(runs)),
        Route("/api/runs/{number:int}", guarded(run_overview)),
        Route("/api/runs/{number:int}/version", guarded(version)),
        Route("/api/runs/{number:int}/rows", guarded(rows)),
        Route("/api/runs/{number:int}/row", guarded(row)),
        Route("/api/runs/{number:int}/agreement.png", guarded(picture)),
        Route("/api/compare/{first:int}/{second:int}", guarded(compare)),
    ]
    inner = Starlette(routes=routes)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        request = Request(scope)
        if not host_allowed(request.headers.get("host", ""), allowed_hosts):
            answer: Response = Response("unknown host", status_code=421, media_type="text/plain")
        elif request.method not in ("GET", "HEAD"):
            answer = Response("read only", status_code=405, media_type="text/plain")
        elif token and not token_given(request.headers, request.cookies, request.query_params, token):
            answer = Response(
                "this page needs its token: open the address the view command printed",
                status_code=401,
                media_type="text/plain",
            )
        else:

            async def secured(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in _LOWER]
                    headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                    message = {**message, "headers": headers}
                await send(message)

            await inner(scope, receive, secured)
            return
        for name, value in SECURITY_HEADERS.items():
            answer.headers[name] = value
        await answer(scope, receive, send)

    return app


_LOWER = {name.lower() for name in SECURITY_HEADERS}
