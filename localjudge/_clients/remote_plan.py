"""The remote client's decisions, without I/O: a plan of calls and sleeps that a driver carries out.

:class:`RemoteBase` holds an endpoint's configuration and decides everything
(the request body, retries and backoff, ``response_format`` and answer-bound
negotiation, reading and checking the answer) in :meth:`RemoteBase.plan`, a
generator that yields what to do next: send this :class:`Call`, or
:class:`Sleep` this long; it is sent back the :class:`Reply` or
:class:`Failure` the call met. The drivers in :mod:`.remote` only do the I/O,
with httpx, so the plan is tested without sockets.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .. import _bounded_json as bounded_json
from .._text import clip
from ..errors import (
    JudgeTimeoutError,
    OutputParseError,
    RemoteCallError,
    RemoteConnectError,
    RemoteStatusError,
    UsageError,
)
from .base import ChatResponse
from .bound import BOUND_FIELD, MAX_COMPLETION_TOKENS, MAX_TOKENS, has_bound, is_max_tokens_refusal, with_bound
from .endpoint import Endpoint, Secret, resolve_api_key, safe_url
from .failure_policy import retry_endpoint
from .formats import (
    FIXED_TEMPERATURE,
    FORMATS,
    LLAMA_FORM,
    OPENAI_FORM,
    check_content,
    is_schema_rejection,
    is_temperature_rejection,
    wire_response_format,
)
from .request import check_max_tokens
from .retry import RetryPolicy, parse_retry_after

__all__ = ["Call", "Failure", "Outcome", "RemoteBase", "Reply", "Sleep", "Step", "Verdict"]

logger = logging.getLogger("localjudge._clients.remote")  # the client's one logger, wherever its decisions are made

_SECRET_HEADER_HINTS = ("auth", "key", "token", "secret", "cookie")


@dataclass
class Call:
    """One request, ready to send."""

    url: str
    headers: dict[str, str]
    content: bytes
    kind: str
    schema: dict[str, Any] | None
    form: str
    context: dict[str, Any]  # what errors carry as ``request``: the body, never headers
    temperature_added: bool  # the body's temperature is this client's default, not the caller's
    bound_added: str | None  # the field of the bound this client added (None: the caller's, or the client's setting)
    deadline: float  # seconds for the whole attempt
    read_timeout: float  # seconds to wait for the next bytes, never longer than the deadline


@dataclass
class Reply:
    status_code: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


@dataclass
class Failure:
    """No HTTP answer: ``kind`` is "connect", "timeout" or "transport"."""

    kind: str
    detail: str


@dataclass
class Sleep:
    seconds: float


Step = Union[Call, Sleep]
Outcome = Union[Reply, Failure, None]


@dataclass
class Verdict:
    """What one failed attempt means: a line for the record and how to go on."""

    note: str
    retry_here: bool
    error: type[RemoteCallError]
    extra: dict[str, Any] = field(default_factory=dict)
    retry_after: float | None = None


class RemoteBase:
    """Configuration and every decision; subclasses only do I/O."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        model: str | None = None,
        *,
        timeout: float = 120.0,
        connect_timeout: float = 10.0,
        read_timeout: float | None = None,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = 60.0,
        headers: Mapping[str, str] | None = None,
        name: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = 0.0,
    ) -> None:
        self.endpoint = Endpoint(base_url)
        # sent with requests that set none, so that a verdict does not change from call to call; None: the server's
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2
        ):
            raise UsageError(f"temperature must be a number from 0 to 2, or None, got {temperature!r}")
        self.temperature = temperature
        # sent with requests that set no bound of their own, as given; our default bound otherwise (bound.py)
        self.max_tokens = check_max_tokens(max_tokens) if max_tokens is not None else None
        self._api_key: Secret | None = resolve_api_key(api_key)
        if model is not None and (not isinstance(model, str) or not model):
            raise UsageError(f"model must be a non-empty string or None, got {model!r}")
        self.model = model
        for label, value in (
            ("timeout", timeout),
            ("connect_timeout", connect_timeout),
            ("read_timeout", read_timeout),
        ):
            if value is not None and (not isinstance(value, (int, float)) or value <= 0):
                raise UsageError(f"{label} must be a positive number of seconds, got {value!r}")
        self.timeout = float(timeout)
        self.connect_timeout = float(connect_timeout)
        self.read_timeout = float(read_timeout) if read_timeout is not None else self.timeout
        try:
            self.retry = RetryPolicy(max_retries, backoff, max_backoff, max_retry_after)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self._extra_headers = {str(k): str(v) for k, v in (headers or {}).items()}
        self._secrets = [s for s in [self._api_key] if s] + [
            Secret(v) for k, v in self._extra_headers.items() if any(h in k.lower() for h in _SECRET_HEADER_HINTS)
        ]
        host = self.endpoint.display.split("://", 1)[1].split("/", 1)[0]
        self.name = name or f"openai:{model or 'default'}@{host}"
        self._settings: dict[str, Any] = dict(  # the keywords that build a twin (.aio)
            base_url=base_url,
            model=model,
            timeout=timeout,
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            max_retry_after=max_retry_after,
            headers=headers,
            name=name,
            max_tokens=max_tokens,
            temperature=temperature,
        )

    # -- what the caller can see ------------------------------------------------

    def cache_identity(self) -> dict[str, Any]:
        """Who answers, for the result cache: the endpoint and the model (never the key)."""
        return {
            "engine": "openai-compatible",
            "base_url": self.base_url,
            "model": self.model,
            "temperature": self.temperature,
        }

    @property
    def base_url(self) -> str:
        return self.endpoint.display

    @property
    def response_format_form(self) -> str:
        """The schema form this endpoint is known to take: "json_schema" or "json_object+schema"."""
        return str(FORMATS.get(self.endpoint.base_url))

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r}, api_key={key})"

    # -- building the request ----------------------------------------------------

    def _build(self, request: Mapping[str, Any]) -> Call:
        body = dict(request)
        extra_headers = body.pop("extra_headers", None) or {}
        extra_body = body.pop("extra_body", None) or {}
        deadline = body.pop("timeout", None)
        if body.pop("extra_query", None):
            raise UsageError("extra_query is not supported; put query parameters in base_url")
        if body.pop("stream", None):
            raise UsageError("stream=True is not supported by the judge clients; they return one ChatCompletion")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise UsageError("messages must be a non-empty list of chat messages")
        form = FORMATS.get(self.endpoint.base_url)
        kind, schema, wire = wire_response_format(body.pop("response_format", None), form)
        body = {k: v for k, v in body.items() if v is not None}
        # The model this client was configured with wins: a fallback chain or a
        # spec resolver passes one request to several clients, each its own model.
        model = self.model or body.get("model")
        if model:
            body["model"] = model
        if wire is not None:
            body["response_format"] = wire
        body.update(extra_body)
        bound_added = None
        if self.max_tokens is not None and not has_bound(body):
            body["max_tokens"] = self.max_tokens
        else:  # bounded by the caller, or else by us (bound.py), in the field this endpoint and model take
            body, bound_added = with_bound(body, BOUND_FIELD.get(self._model_key(body.get("model"))))
        temperature_added = (
            "temperature" not in body
            and self.temperature is not None
            and not FIXED_TEMPERATURE.get(self._model_key(body.get("model")))
        )
        if temperature_added:
            body["temperature"] = self.temperature
        try:
            content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise UsageError(f"The request cannot be sent as JSON: {exc}") from None
        headers = {"Content-Type": "application/json", "Accept": "application/json", **self._extra_headers}
        headers.update({str(k): str(v) for k, v in extra_headers.items()})
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key.reveal()}"
        if deadline is not None and (not isinstance(deadline, (int, float)) or deadline <= 0):
            raise UsageError(f"timeout must be a positive number of seconds, got {deadline!r}")
        return Call(
            url=self.endpoint.chat_url,
            headers=headers,
            content=content,
            kind=kind,
            schema=schema,
            form=form,
            context={"url": self.base_url, **body},
            temperature_added=temperature_added,
            bound_added=bound_added,
            deadline=float(deadline) if deadline is not None else self.timeout,
            read_timeout=min(self.read_timeout, float(deadline) if deadline is not None else self.timeout),
        )

    def _model_key(self, model: object) -> str:
        return f"{self.endpoint.base_url}#{model or ''}"

    # -- the decisions -----------------------------------------------------------

    def plan(self, request: Mapping[str, Any]) -> Generator[Step, Outcome, ChatResponse]:
        """Yield each step of one completion; the driver sends back each step's outcome."""
        call = self._build(request)
        attempts: list[str] = []
        adjusted: set[str] = set()  # each way of meeting the server is tried once
        retries = 0
        while True:  # each pass uses up a retry, or one adjustment
            outcome = yield call
            if isinstance(outcome, Reply) and 200 <= outcome.status_code < 300:
                try:
                    return self._read(call, outcome)
                except Malformed as exc:
                    verdict = Verdict(str(exc), retry_here=exc.retry_here, error=RemoteCallError)
            elif isinstance(outcome, Reply):
                text = self._clean(outcome.body)
                note = self._adjust(call, outcome.status_code, text, adjusted)
                if note is not None:
                    attempts.append(note)
                    call = self._build(request)
                    continue
                verdict = self._status_verdict(outcome, text)
            elif isinstance(outcome, Failure):
                error = {"connect": RemoteConnectError, "timeout": JudgeTimeoutError}.get(outcome.kind, RemoteCallError)
                verdict = Verdict(self._redact(outcome.detail), retry_here=True, error=error)
            else:  # pragma: no cover - a driver bug
                raise RuntimeError(f"unexpected outcome {outcome!r}")

            attempts.append(self._redact(verdict.note))
            if not verdict.retry_here or retries >= self.retry.max_retries:
                raise self._give_up(call, attempts, verdict)
            delay = self.retry.delay(retries, verdict.retry_after)
            attempts[-1] += f" (retrying in {delay:.2f} s)"
            logger.info("%s attempt %d failed: %s", self.base_url, len(attempts), attempts[-1])
            retries += 1
            yield Sleep(delay)

    def _adjust(self, call: Call, status: int, text: str, adjusted: set[str]) -> str | None:
        """What to change before sending again, when a refusal says how to meet this server; None when none does.

        Each change is remembered for the endpoint (or its model), so later calls start with it.
        """
        model = self._model_key(call.context.get("model"))
        if "format" not in adjusted and call.kind == "json_schema" and call.form == OPENAI_FORM:
            if is_schema_rejection(status, text):
                adjusted.add("format")
                FORMATS.set(self.endpoint.base_url, LLAMA_FORM)
                logger.info("%s takes json_object+schema, not json_schema; switching for this endpoint", self.base_url)
                return (
                    f"HTTP {status}: the server rejects response_format json_schema; "
                    "sending json_object with the schema instead"
                )
        if "bound" not in adjusted and call.bound_added == MAX_TOKENS and is_max_tokens_refusal(status, text):
            adjusted.add("bound")
            BOUND_FIELD.set(model, MAX_COMPLETION_TOKENS)
            logger.info("%s takes max_completion_tokens for this model; switching", self.base_url)
            return (
                f"HTTP {status}: the model takes max_completion_tokens, not max_tokens; "
                "sending the bound as max_completion_tokens"
            )
        if "temperature" not in adjusted and call.temperature_added and is_temperature_rejection(status, text):
            adjusted.add("temperature")
            FIXED_TEMPERATURE.set(model, True)
            logger.warning(
                "%s refuses temperature %s for this model; its verdicts may now vary from call to call",
                self.base_url,
                self.temperature,
            )
            return f"HTTP {status}: the model takes no temperature but its own; sending the request without one"
        return None

    def _status_verdict(self, reply: Reply, text: str) -> Verdict:
        status = reply.status_code
        note = f"HTTP {status} {reply.reason}".rstrip()
        extra: dict[str, Any] = {"status_code": status, "body": text}
        if 300 <= status < 400:
            location = reply.headers.get("location")
            where = f" to {safe_url(location)}" if location else ""
            note += f": redirect{where} not followed; set base_url to the address the server expects"
            return Verdict(note, retry_here=False, error=RemoteStatusError, extra=extra)
        if text:
            note += f": {clip(text, 300)}"
        retry = retry_endpoint(status)
        retry_after = parse_retry_after(reply.headers) if retry else None
        return Verdict(note, retry_here=retry, error=RemoteStatusError, extra=extra, retry_after=retry_after)

    def _give_up(self, call: Call, attempts: list[str], verdict: Verdict) -> RemoteCallError:
        count = len(attempts)
        message = f"POST {safe_url(call.url)} failed after {count} attempt{'s' * (count != 1)}: {attempts[-1]}"
        # Another client may well succeed where this one failed, whatever the status (failure_policy).
        return verdict.error(
            message,
            attempts=attempts,
            backend=self.name,
            request=call.context,
            retryable=True,
            **verdict.extra,
        )

    def _read(self, call: Call, reply: Reply) -> ChatResponse:
        # A server that echoes the key anywhere in its answer must not pass it on.
        text = self._redact(reply.body.decode("utf-8", errors="replace"))
        try:
            data = bounded_json.loads(text)
        except json.JSONDecodeError as exc:
            looks_cut = text.lstrip().startswith(("{", "["))
            what = "a cut-off JSON document" if looks_cut else "not JSON"
            hint = "" if looks_cut else "; is base_url the API root (usually ending in /v1)?"
            raise Malformed(
                f"HTTP {reply.status_code} body is {what} ({exc.msg} at character {exc.pos}): "
                f"{clip(text, 200)!r}{hint}",
                retry_here=True,
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            detail = data.get("error") if isinstance(data, dict) and data.get("error") else clip(text, 200)
            raise Malformed(
                f"HTTP {reply.status_code} answer is not a chat completion (no choices): {detail}",
                retry_here=False,
            )
        completion = ChatResponse(data)
        choice = completion.choices[0]
        message = choice.get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        try:
            check_content(content, call.kind, call.schema, finish_reason=choice.get("finish_reason"), backend=self.name)
        except OutputParseError as exc:
            exc.request = call.context
            raise
        return completion

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = secret.redact(text)
        return text

    def _clean(self, body: bytes) -> str:
        return clip(self._redact(body.decode("utf-8", errors="replace")).strip(), 2000)


class Malformed(Exception):
    def __init__(self, message: str, *, retry_here: bool) -> None:
        super().__init__(message)
        self.retry_here = retry_here
