"""``localjudge serve``: any judge behind an OpenAI-compatible HTTP API, with the in-process guarantees.

Tools that speak OpenAI's API (the openai SDK, OpenEvals, promptfoo, DeepEval)
reach a local judge through it. Unlike servers that accept a schema and may
ignore it, every JSON answer is decoded under the schema's grammar and
checked here again: the reply is schema-valid JSON, or an error in OpenAI's
shape that says what went wrong (with the model's raw text when it wrote
some). Requests run in worker threads, so a local model with ``parallel``
sequences decodes concurrent requests side by side; beyond that they queue.

Hostile or careless clients are bounded: a client that hangs up cancels
its generation at the next decode step, a connection whose headers have not
arrived within ``Limits.header_seconds`` is closed (slow clients do not hold
slots, and ``/health`` keeps answering), requests past
``Limits.max_in_flight`` get a 503 at once, and a SIGTERM lets what is in
flight finish within the grace period and answers the rest with a 503, all in
OpenAI's shape.

The decisions (what a request may ask, what an error looks like) are plain
functions; :func:`create_app` wires them into a Starlette app, and
:func:`run` serves it with uvicorn.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import bounded_json
from .cancellation import Cancel, cancellable
from .clients.base import call_create, read_response_format
from .clients.formats import check_answer
from .clients.request import HONOURED_FIELDS, IGNORED_FIELDS, SCORE_REPLY_FIELD
from .errors import (
    AllClientsFailedError,
    ContextOverflowError,
    JudgeRuntimeError,
    OutputParseError,
    RequestCancelledError,
    SchemaTooLargeError,
    TruncatedOutputError,
    UnsupportedSchemaError,
    UsageError,
)

__all__ = ["ApiError", "InFlight", "Limits", "check_request", "create_app", "error_body", "run"]

SERVER_KEY_ENV = "LOCALJUDGE_SERVER_KEY"


@dataclass(frozen=True)
class Limits:
    """What one request may ask: its body's size, and the tokens it may have written."""

    max_body_bytes: int = 1 << 20
    max_tokens: int = 4096
    body_seconds: float = 30.0  # to receive the whole body
    header_seconds: float = 10.0  # to receive a request's line and headers, on a new or a kept-alive connection
    max_in_flight: int = 64  # chat requests being judged or queued; one more is a 503 at once


class ApiError(Exception):
    """An HTTP error answer in OpenAI's shape."""

    def __init__(self, status: int, message: str, *, kind: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code
        self.extra: dict[str, Any] = {}

    def body(self) -> dict[str, Any]:
        return error_body(self.message, kind=self.kind, param=self.param, code=self.code, **self.extra)


def error_body(message: str, *, kind: str, param: str | None = None, code: str | None = None, **extra: Any) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code, **extra}}


def invalid(message: str, *, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, kind="invalid_request_error", param=param, code=code)


#: the fields a request may carry: OpenAI's wire fields the judges know, and ``score_reply`` (our one
#: extension: a reply's log-probabilities); never the SDK-only ``extra_*``, which a remote judge would merge
#: into its own request past every limit here
WIRE_FIELDS = (HONOURED_FIELDS | IGNORED_FIELDS | {SCORE_REPLY_FIELD}) - {
    "extra_body",
    "extra_headers",
    "extra_query",
    "timeout",
}


def check_request(body: Any, limits: Limits) -> dict[str, Any]:
    """The request to hand the judge, or an :class:`ApiError` for what it may not ask."""
    if not isinstance(body, dict):
        raise invalid("The request body must be a JSON object")
    unknown = sorted(set(body) - WIRE_FIELDS)
    if unknown:
        raise invalid(f"Unsupported request fields: {', '.join(unknown)}", param=unknown[0])
    if not isinstance(body.get(SCORE_REPLY_FIELD, False), bool):
        raise invalid(f"{SCORE_REPLY_FIELD} must be true or false", param=SCORE_REPLY_FIELD)
    if body.get("stream"):
        raise invalid("stream is not supported: the judge answers with one complete response", param="stream")
    if body.get("n") not in (None, 1):
        raise invalid("n must be 1: the judge gives one answer per request", param="n")
    for name in ("max_tokens", "max_completion_tokens"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise invalid(f"{name} must be a positive integer, got {value!r}", param=name)
        if isinstance(value, int) and value > limits.max_tokens:
            raise invalid(f"{name} is {value}; this server allows at most {limits.max_tokens}", param=name)
    response_format = body.get("response_format")
    if response_format is not None:
        kind = response_format.get("type") if isinstance(response_format, Mapping) else None
        if kind not in ("text", "json_object", "json_schema"):
            raise invalid(
                f"response_format type {kind!r} is not supported: use text, json_object or json_schema",
                param="response_format",
            )
        try:
            read_response_format(response_format)
        except UsageError as exc:
            raise invalid(str(exc), param="response_format") from None
    return dict(body)


def judge_failure(exc: BaseException) -> ApiError:
    """What a judge's failure looks like to the caller: their mistake (400) or the model's (422, 500)."""
    if isinstance(exc, AllClientsFailedError) and exc.errors:
        answers = [error for _, error in exc.errors if isinstance(error, OutputParseError)]
        if len(answers) == len(exc.errors):  # every client answered, none with what was asked: the answer's fault
            error = judge_failure(answers[-1])
            error.message = str(exc)
            return error
    if isinstance(exc, UnsupportedSchemaError):
        code = "schema_too_large" if isinstance(exc, SchemaTooLargeError) else "unsupported_schema_keyword"
        return invalid(str(exc), param="response_format", code=code)
    if isinstance(exc, UsageError):
        return invalid(str(exc), param=exc.param)
    if isinstance(exc, RequestCancelledError):
        return unavailable(exc.message, code="cancelled")
    if isinstance(exc, ContextOverflowError):  # the caller can ask for less, as OpenAI's 400 says
        return invalid(exc.message, param="max_tokens", code="context_length_exceeded")
    if isinstance(exc, OutputParseError):
        code = "output_truncated" if isinstance(exc, TruncatedOutputError) else "output_invalid"
        error = ApiError(422, exc.message, kind="invalid_response_error", code=code)
        error.extra["raw_output"] = exc.raw_output
        return error
    if isinstance(exc, JudgeRuntimeError):
        return ApiError(500, exc.message, kind="server_error", code=type(exc).__name__)
    return ApiError(500, f"The judge failed: {type(exc).__name__}", kind="server_error", code=type(exc).__name__)


def unavailable(message: str, *, code: str) -> ApiError:
    return ApiError(503, message, kind="server_error", code=code)


class InFlight:
    """The chat requests being judged, each with its cancel token, so that a stopping server can answer them all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._tokens: set[Cancel] = set()
        self.stopping = False
        self.answered_while_stopping = 0
        self.cancelled_at_stop = 0

    def admit(self) -> Cancel:
        """A new request's token; a 503 while stopping, or when ``limit`` are in flight already."""
        with self._lock:
            if self.stopping:
                raise unavailable("The server is stopping and takes no new requests", code="shutting_down")
            if len(self._tokens) >= self.limit:
                raise unavailable(f"The server is busy: {self.limit} requests in flight; retry later", code="busy")
            token = Cancel()
            self._tokens.add(token)
            return token

    def finish(self, token: Cancel, failure: BaseException | None) -> None:
        """A request answered: with its verdict (``failure`` None), a 503 for its cancellation, or another error."""
        with self._lock:
            self._tokens.discard(token)
            if self.stopping:
                self.answered_while_stopping += failure is None
                self.cancelled_at_stop += isinstance(failure, RequestCancelledError)

    def stop(self) -> int:
        """Take no more requests; how many are in flight. No lock: a signal handler calls it."""
        self.stopping = True
        return len(self._tokens)

    def cancel_all(self, reason: str) -> None:
        """Cancel every request still in flight; each then answers 503."""
        with self._lock:
            tokens = list(self._tokens)
        for token in tokens:
            token.set(reason)


def checked_answer(request: Mapping[str, Any], response: Any, backend: str) -> dict[str, Any]:
    """The judge's answer as a dict, if it is what the request asked for; else the error saying how it is not.

    A JSON answer is sent as the object alone (a judge behind a fallback may
    have wrapped it in prose or a code fence), so a caller's ``json.loads``
    of the content always works.
    """
    answer = dict(response.model_dump() if hasattr(response, "model_dump") else response)
    kind, value = check_answer(request, answer, backend=backend)
    if kind not in ("text", "scored"):  # a scored reply's figures are in its logprobs, its content empty
        choice = dict(answer["choices"][0])
        choice["message"] = {**dict(choice["message"]), "content": json.dumps(value, ensure_ascii=False)}
        answer["choices"] = [choice, *answer["choices"][1:]]
    return answer


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
        return JSONResponse(error.body(), status_code=error.status)

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
                body = await _read_body(request, limits.max_body_bytes)
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
    app.state.in_flight = in_flight
    return app


async def _cancel_on_disconnect(request: Any, token: Cancel) -> None:
    """Set ``token`` when the client hangs up (its body already read, the next message says so)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            token.set("the client disconnected")
            return


def run(app: Any, listening: Any, *, limits: Limits = Limits(), graceful_timeout: float = 30.0) -> None:  # noqa: C901  uvicorn subclasses nested to close over this server's state; each method is small
    """Serve ``app`` (from :func:`create_app`) on the socket ``listening`` until SIGINT or SIGTERM.

    On the signal the server stops accepting; requests in flight get
    ``graceful_timeout`` seconds to finish, then each one left is cancelled
    at its next decode step and answered with a 503, a little before uvicorn
    would drop them with bare 500s. A second signal cancels them at once
    (503s still); only a third lets uvicorn drop whatever is left.
    """
    import uvicorn
    from uvicorn.protocols.http.h11_impl import H11Protocol

    in_flight: InFlight = app.state.in_flight

    class HeaderDeadline(H11Protocol):
        """h11, closing a connection whose next request line and headers take over ``header_seconds`` to arrive."""

        deadline: Any = None
        awaited: Any = None  # the request cycle current when the deadline was set

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.deadline is not None and self.cycle is not self.awaited:  # a whole request has arrived
                self.disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def arm(self) -> None:
            self.disarm()
            if self.cycle is not None and not self.cycle.response_complete:
                return  # a pipelined request already arrived whole and runs; its end arms the deadline again
            self.awaited = self.cycle
            self.deadline = self.loop.call_later(limits.header_seconds, self.late)

        def disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def late(self) -> None:
            self.deadline = None
            if self.cycle is self.awaited and not self.transport.is_closing():
                self.transport.close()

    def wind_down(count: int) -> None:  # on a thread of its own: a signal handler must not print or wait
        print(f"stopping: {count} request(s) in flight get up to {graceful_timeout:g} s to finish", file=sys.stderr)
        sys.stderr.flush()
        threading.Event().wait(graceful_timeout)
        in_flight.cancel_all("the server is stopping")

    signals = 0

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            nonlocal signals
            signals += 1
            if signals == 1:
                threading.Thread(target=wind_down, args=(in_flight.stop(),), daemon=True).start()
            elif signals == 2:  # stop now, still answering each request: uvicorn's forced exit would 500 them
                cancel = threading.Thread(target=in_flight.cancel_all, args=("the server is stopping now",))
                cancel.start()
                return
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        http=HeaderDeadline,
        log_level="warning",
        # uvicorn's own deadline comes after ours, so that every request left is ours to answer (a 503)
        timeout_graceful_shutdown=int(graceful_timeout) + 10,
        limit_concurrency=512,  # connections, well under the usual 1,024 descriptors; requests: max_in_flight
    )
    Server(config).run(sockets=[listening])


async def _read_body(request: Any, limit: int) -> bytes:
    """The body, refused (413) past ``limit`` bytes without reading the rest."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"The request body is over {limit} bytes", kind="invalid_request_error", code="too_large")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(
                413, f"The request body is over {limit} bytes", kind="invalid_request_error", code="too_large"
            )
        chunks.append(chunk)
    return b"".join(chunks)
