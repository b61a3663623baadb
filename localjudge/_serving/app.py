"""The Starlette app: its routes, the key check, and a chat request judged in a worker thread."""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import sys
from typing import Any

from .. import _bounded_json as bounded_json
from .._cancellation import Cancel, cancellable
from .._clients.base import call_create
from ..errors import RequestCancelledError
from .api_errors import ApiError, invalid, judge_failure
from .limits import InFlight, Limits
from .validation import check_request, checked_answer, read_body

__all__ = ["authorised", "create_app"]


def authorised(header: str | None, key: str | None) -> bool:
    """No key: anyone; else ``Authorization: Bearer KEY``, compared in constant time."""
    if not key:
        return True
    scheme, _, given = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), key.encode())


def create_app(client: Any, *, model_id: str, api_key: str | None = None, limits: Limits = Limits()) -> Any:  # noqa: C901  route handlers nested to close over the client; each is small
    """The Starlette app serving ``client`` (any ModelClient) as ``model_id``; ``app.state.in_flight`` its requests."""
    import anyio
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def fail(error: ApiError) -> JSONResponse:
        return JSONResponse(error.body(), status_code=error.status, headers=error.headers or None)

    def guarded(handler: Any) -> Any:
        @functools.wraps(handler)
        async def endpoint(request: Request) -> JSONResponse:
            if not authorised(request.headers.get("authorization"), api_key):
                return fail(ApiError(401, "A valid API key is needed (Authorization: Bearer ...)",
                                     kind="invalid_request_error", code="invalid_api_key"))  # fmt: skip
            try:
                return await handler(request)
            except ApiError as error:
                return fail(error)
            except Exception as exc:  # whatever the judge raised: an answer in OpenAI's shape, never a bare 500
                return fail(judge_failure(exc))

        return endpoint

    async def health(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "model": model_id})

    @guarded
    async def models(_: Request) -> JSONResponse:
        entry = {"id": model_id, "object": "model", "created": 0, "owned_by": "localjudge"}
        return JSONResponse({"object": "list", "data": [entry]})

    @guarded
    async def chat_completions(request: Request) -> JSONResponse:
        try:
            with anyio.fail_after(limits.body_seconds):  # a body trickled in byte by byte does not hold a worker
                body = await read_body(request, limits.max_body_bytes)
        except TimeoutError:
            raise ApiError(408, f"The request body did not arrive within {limits.body_seconds:g} s",
                           kind="invalid_request_error", code="timeout") from None  # fmt: skip
        try:
            parsed = bounded_json.loads(body, allow_nan=False)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise invalid(f"The request body is not JSON: {type(exc).__name__}: {exc}"[:500]) from None
        judge_request = check_request(parsed, limits)
        judge_request.pop("model", None)  # one model here, whatever the caller calls it
        token = in_flight.admit()

        def judge() -> dict[str, Any]:
            with cancellable(token):
                return checked_answer(judge_request, call_create(client, judge_request), model_id)

        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as watching:
                watching.start_soon(_cancel_on_disconnect, request, token)
                try:
                    answer = await anyio.to_thread.run_sync(judge)
                except Exception as exc:  # raised after the group, not wrapped in an ExceptionGroup
                    failure = exc
                watching.cancel_scope.cancel()
        finally:
            in_flight.finish(token, failure)
        if isinstance(failure, RequestCancelledError) and not in_flight.stopping:
            print(f"cancelled a request: {token.reason}", file=sys.stderr, flush=True)
        if failure is not None:
            raise failure
        return JSONResponse({**answer, "model": model_id})

    in_flight = InFlight(limits.max_in_flight)

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> Any:
        yield
        close = getattr(client, "close", None)  # a clean shutdown frees the model
        if callable(close):
            close()
        note = (
            f"{in_flight.answered_while_stopping} request(s) in flight answered, "
            f"{in_flight.cancelled_at_stop} cancelled with a 503 at the end of the grace period"
        )
        print(f"stopped serving {model_id}: {note}; model closed", file=sys.stderr, flush=True)

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        status = getattr(exc, "status_code", 404)
        message = f"{request.method} {request.url.path} is not served here"
        return fail(ApiError(status, message, kind="invalid_request_error", code="not_found"))

    app = Starlette(
        exception_handlers={404: not_found, 405: not_found},
        routes=[
            Route("/health", health),
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        ],
        lifespan=lifespan,
    )
    # "/v1/models/" is not served: no redirect to an address built from the request's Host header
    app.router.redirect_slashes = False
    app.state.in_flight = in_flight
    return app


async def _cancel_on_disconnect(request: Any, token: Cancel) -> None:
    """Set ``token`` when the client hangs up (its body already read, the next message says so)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            token.set("the client disconnected")
            return
