"""What an error answer looks like: OpenAI's shape, and the status each failure of a judge gets."""

from __future__ import annotations

from typing import Any

from ..errors import (
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

__all__ = ["ApiError", "error_body", "invalid", "judge_failure", "unavailable"]


class ApiError(Exception):
    """An HTTP error answer in OpenAI's shape."""

    def __init__(self, status: int, message: str, *, kind: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code
        self.extra: dict[str, Any] = {}
        self.headers: dict[str, str] = {}  # sent with the answer (a busy server's Retry-After)

    def body(self) -> dict[str, Any]:
        return error_body(self.message, kind=self.kind, param=self.param, code=self.code, **self.extra)


def error_body(message: str, *, kind: str, param: str | None = None, code: str | None = None, **extra: Any) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code, **extra}}


def invalid(message: str, *, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, kind="invalid_request_error", param=param, code=code)


def unavailable(message: str, *, code: str, retry_after: int | None = None) -> ApiError:
    """A 503; ``retry_after`` (seconds) tells a client when to ask again, where asking again will help."""
    error = ApiError(503, message, kind="server_error", code=code)
    if retry_after is not None:
        error.headers["Retry-After"] = str(retry_after)
    return error


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
