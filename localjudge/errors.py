"""Every exception localjudge raises, in one tree.

Misuse (the caller can fix the call) is kept apart from runtime failures (the
model, its output or the transport failed), so callers can catch one without
hiding the other::

    LocalJudgeError
    ├── UsageError (ValueError)            a bad argument; fix the call
    │   ├── OptionError                    options that do not fit together (named so a CLI can show its flags)
    │   │   ├── NoCalibrationError         a calibration asked for and none fitted for this judge
    │   │   └── OutputPathError            an output that would overwrite an input, another output or a file not ours
    │   ├── MissingTemplateVariableError   a {placeholder} has no value (also a KeyError, as in OpenEvals)
    │   ├── InvalidTrajectoryError (TypeError)  a trajectory's message or tool call is malformed
    │   ├── UnsupportedSchemaError         a schema keyword cannot be enforced
    │   │   └── SchemaTooLargeError        a bound past the decoder's limits
    │   ├── ModelSpecError                 a model spec that names nothing usable
    │   ├── ResultsFileError (OSError)     a results file that cannot be written, or another run writes it
    │   └── BadRowError                    a dataset row that cannot be judged as it is
    │       ├── MalformedRowError          not JSON, or not an object
    │       ├── InvalidEncodingError       not UTF-8
    │       ├── DuplicateIdError           an id an earlier row has
    │       └── MissingValueError          a mapped column absent or empty
    ├── ResultsWriteError (OSError)        results not written during a run: a full disk, a folder removed
    ├── MissingDependencyError (ImportError)  an optional extra is not installed
    │   └── IncompatibleDependencyError    installed, but without the internals localjudge relies on
    └── JudgeRuntimeError                  the judge ran and something failed
        ├── ModelError                     a local model could not load or run
        │   ├── ModelLoadError             missing, truncated or non-GGUF file
        │   │   └── ModelNotFoundError     nothing at the path given: the caller can fix it (exit 2)
        │   ├── ContextOverflowError       prompt + max_tokens exceed n_ctx
        │   └── RequestCancelledError      its caller hung up, or the server is stopping
        ├── OutputParseError (ValueError)  output invalid or off-schema; keeps raw text
        │   └── TruncatedOutputError       generation stopped at max_tokens
        ├── RemoteCallError                a remote endpoint failed
        │   ├── RemoteConnectError / JudgeTimeoutError
        │   └── RemoteStatusError          a non-2xx answer after retries
        └── AllClientsFailedError          every client of a fallback chain failed

A message may name options. Built from a :class:`~localjudge._wording.Message`, it names each by
its keyword: ``str()`` shows ``n_ctx=``, and ``render(names)`` shows it as the
caller names it, so that a command line shows its flags (``--n-ctx``)
without this package knowing them. Any other message is shown as written.

Runtime errors carry context: ``backend`` (which client), ``request`` (what was
asked, with secrets removed) and ``raw_output`` (what the model said, when it
said anything). Their ``retryable`` flag tells a fallback chain whether the
next client may succeed where this one failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._text import clip
from ._wording import Message, shown

__all__ = [
    "AllClientsFailedError",
    "BadRowError",
    "ContextOverflowError",
    "DuplicateIdError",
    "IncompatibleDependencyError",
    "InvalidEncodingError",
    "InvalidTrajectoryError",
    "JudgeRuntimeError",
    "JudgeTimeoutError",
    "LocalJudgeError",
    "MalformedRowError",
    "MissingDependencyError",
    "MissingTemplateVariableError",
    "MissingValueError",
    "ModelError",
    "ModelLoadError",
    "ModelNotFoundError",
    "ModelSpecError",
    "NoCalibrationError",
    "OptionError",
    "OutputParseError",
    "OutputPathError",
    "RemoteCallError",
    "RemoteConnectError",
    "RemoteStatusError",
    "RequestCancelledError",
    "ResultsFileError",
    "ResultsWriteError",
    "SchemaTooLargeError",
    "TruncatedOutputError",
    "UnsupportedSchemaError",
    "UsageError",
]


class LocalJudgeError(Exception):
    """Root of the tree: ``except LocalJudgeError`` catches everything we raise.

    ``args`` hold the message as a keyword-naming string; ``wording`` keeps
    the :class:`Message` it came from, if one, for :meth:`render`.
    ``exchanges``: the requests sent and answers read before it was raised,
    where the caller kept them (:func:`~localjudge._judges.plan.keeping_exchanges`).
    """

    exchanges: list[dict[str, Any]] | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*(str(arg) if isinstance(arg, Message) else arg for arg in args))
        self.wording: str | Message | None = args[0] if len(args) == 1 else None

    def render(self, names: Mapping[str, str]) -> str:
        """The message with each option it names shown as ``names`` says (a command line's flags)."""
        return self.wording.render(names) if isinstance(self.wording, Message) else Exception.__str__(self)

    def headline(self, names: Mapping[str, str]) -> str:
        """The message alone, options named as ``names`` say: a record keeps the backend and raw output apart."""
        return self.render(names)

    def __str__(self) -> str:
        return self.render({})


class UsageError(LocalJudgeError, ValueError):
    """The call itself is wrong; the message says what to change, and ``param`` which request field, if one."""

    def __init__(self, *args: Any, param: str | None = None) -> None:
        super().__init__(*args)
        self.param = param


class OptionError(UsageError):
    """Options given together that do not fit, or one that needs another.

    ``template`` names each option as a ``{placeholder}`` holding its
    keyword name (``{prompt_file}``), as a :class:`Message` does; other
    placeholders take the ``values`` given (a path, which may hold braces of
    its own).
    """

    def __init__(self, template: str, **values: Any) -> None:
        message = Message(template, **values)
        self.template, self.values, self.options = template, values, message.options
        super().__init__(message)


class NoCalibrationError(OptionError):
    """A calibration was asked for and none was fitted for this judge (a damaged one is another error)."""


class OutputPathError(OptionError):
    """Planned outputs that would overwrite what the caller gave (:mod:`localjudge._output_plan`), all named.

    ``refusals`` holds one message per output refused, each naming both paths of its clash.
    """

    def __init__(self, refusals: Sequence[Message]) -> None:
        self.refusals = list(refusals)
        parts = {f"refusal{number}": message for number, message in enumerate(self.refusals)}
        super().__init__("; ".join(f"{{{name}}}" for name in parts), **parts)


class MissingTemplateVariableError(UsageError, KeyError):
    """Also a ``KeyError``: OpenEvals raises one, and code written for it catches one."""

    def __init__(self, variable: str, available: Sequence[str] = ()) -> None:
        self.variable = variable
        self.available = sorted(available)
        given = ", ".join(self.available) or "none"
        super().__init__(
            f"The prompt uses {{{variable}}} but no value was given for it "
            f"(values given: {given}). Give it one (a row's {variable!r} field or column, or {variable}=... "
            f"when calling the evaluator), or remove the placeholder (write {{{{{variable}}}}} for a literal brace)."
        )

    def __str__(self) -> str:  # the message as written, not KeyError's repr of it
        return str(self.args[0])


class InvalidTrajectoryError(UsageError, TypeError):
    """A trajectory (an agent's messages) that cannot be shown to a judge; the message says which item and why.

    Also a ``TypeError``: OpenEvals raises a ``ValueError`` or a ``TypeError``
    for a malformed trajectory, depending on the fault, and code written for
    it catches either.
    """


class BadRowError(UsageError):
    """One row of a dataset cannot be judged as it is; in a run it is that row's error, not the run's."""

    def __init__(self, message: str | Message, *, where: str = "") -> None:
        self.where = where  # "data.jsonl:12"
        super().__init__(Message("{where}: {message}", where=where, message=message) if where else message)


class MalformedRowError(BadRowError):
    pass


class InvalidEncodingError(BadRowError):
    pass


class DuplicateIdError(BadRowError):
    pass


class MissingValueError(BadRowError):
    pass


class UnsupportedSchemaError(UsageError):
    def __init__(self, message: str, *, path: str = "", keyword: str = "") -> None:
        self.path = path
        self.keyword = keyword
        where = f" at {path}" if path else ""
        super().__init__(f"{message}{where}")


class SchemaTooLargeError(UnsupportedSchemaError):
    """A schema whose token index would outgrow the decoder's limits; refused before anything is built."""

    def __init__(
        self, message: str, *, path: str, keyword: str, limit: int | None = None, value: int | None = None
    ) -> None:
        self.limit = limit
        self.value = value
        super().__init__(message, path=path, keyword=keyword)


class ResultsFileError(UsageError, OSError):
    """A results file that cannot be written (permissions, a full disk, a symlink), or that another run holds."""


class ResultsWriteError(LocalJudgeError, OSError):
    """Results that could not be written during a run: a full disk, a folder removed, an I/O error.

    A run-time failure (exit 1), not a bad call: the path was fine when the run began.
    """


class ModelSpecError(UsageError):
    """A ``--model``/``model=`` value that resolves to nothing usable."""


class MissingDependencyError(LocalJudgeError, ImportError):
    def __init__(self, feature: str | Message, package: str, extra: str | None = None) -> None:
        self.feature = str(feature)
        self.package = package
        self.extra = extra
        install = f"pip install 'localjudge[{extra}]'" if extra else f"pip install {package}"
        super().__init__(
            Message(
                "{feature} needs the package {package!r}, which is not installed. Run: {install}",
                feature=feature,
                package=package,
                install=install,
            )
        )


class IncompatibleDependencyError(MissingDependencyError):
    """An installed library lacks an internal that localjudge relies on (see :mod:`localjudge._compat`)."""

    def __init__(self, library: str, found: str, tested: str, *, missing: str, needed_for: str) -> None:
        self.feature, self.package, self.extra = needed_for, library, None
        self.found, self.tested, self.missing = found, tested, missing
        LocalJudgeError.__init__(
            self,
            f"{library} {found} is installed, but it has no {missing}, which localjudge relies on "
            f"({needed_for}). localjudge is tested with {library}{tested}. Run: pip install '{library}{tested}'",
        )


class JudgeRuntimeError(LocalJudgeError):
    """The judge ran and failed; carries what is known about the failure."""

    retryable: bool = False

    def __init__(
        self,
        message: str | Message,
        *,
        backend: str | None = None,
        request: dict[str, Any] | None = None,
        raw_output: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = str(message)
        self.backend = backend
        self.request = request
        self.raw_output = raw_output
        if retryable is not None:
            self.retryable = retryable

    def render(self, names: Mapping[str, str]) -> str:
        text = self._message(names)
        if self.backend:
            text = f"[{self.backend}] {text}"
        if self.raw_output is not None:
            text += f"\nRaw model output: {clip(self.raw_output, 2000)}"
        return text

    def headline(self, names: Mapping[str, str]) -> str:
        return self._message(names)

    def _message(self, names: Mapping[str, str]) -> str:
        return super().render(names)


class ModelError(JudgeRuntimeError):
    """A local model failed to load or to run. The next client may do better."""

    retryable = True


class ModelLoadError(ModelError):
    def __init__(self, message: str, *, path: str | None = None, **context: Any) -> None:
        self.path = path
        super().__init__(message, **context)


class ModelNotFoundError(ModelLoadError):
    """No model at the path given: a mistake of the caller's, though a fallback chain's next model may serve."""


class ContextOverflowError(ModelError):
    retryable = False


class RequestCancelledError(ModelError):
    """The generation was ended between two decode steps: nobody waits for its answer any more."""

    retryable = False


class OutputParseError(JudgeRuntimeError, ValueError):
    """The model answered, but not with what the schema asks for."""

    retryable = True

    def __init__(
        self,
        message: str | Message,
        *,
        raw_output: str,
        schema: dict[str, Any] | None = None,
        hint: str | Message | None = None,
        **context: Any,
    ) -> None:
        self.schema = schema
        self.hint = None if hint is None else str(hint)
        self.hint_wording = hint
        super().__init__(message, raw_output=raw_output, **context)

    def render(self, names: Mapping[str, str]) -> str:
        text = super().render(names)
        if self.hint_wording:
            text += f"\nHint: {shown(self.hint_wording, names)}"
        return text


class TruncatedOutputError(OutputParseError):
    """Generation hit ``max_tokens``: never treated as a score."""


class RemoteCallError(JudgeRuntimeError):
    """A remote call failed. ``attempts`` lists what happened at each try."""

    retryable = True

    def __init__(self, message: str, *, attempts: Sequence[str] = (), **context: Any) -> None:
        self.attempts = list(attempts)
        super().__init__(message, **context)

    def render(self, names: Mapping[str, str]) -> str:
        text = super().render(names)
        if len(self.attempts) > 1:
            text += "".join(f"\n  attempt {i}: {a}" for i, a in enumerate(self.attempts, 1))
        return text


class RemoteConnectError(RemoteCallError):
    """No connection to a remote endpoint (refused, unresolvable, reset before an answer)."""


class JudgeTimeoutError(RemoteCallError):
    """A remote endpoint gave no answer in time (not the builtin ``TimeoutError``, an ``OSError``)."""


class RemoteStatusError(RemoteCallError):
    def __init__(self, message: str, *, status_code: int, body: str = "", **context: Any) -> None:
        self.status_code = status_code
        self.body = body
        # Another client may accept what this endpoint refused; whether to retry this one, or another
        # server of the same model, is the status's to say (clients.failure_policy).
        context.setdefault("retryable", True)
        super().__init__(message, **context)


class AllClientsFailedError(JudgeRuntimeError):
    """Every client of a fallback chain failed; ``errors`` holds each failure in order."""

    def __init__(self, errors: Sequence[tuple[str, BaseException]], **context: Any) -> None:
        self.errors = list(errors)
        super().__init__(self._message({}), **context)

    def _message(self, names: Mapping[str, str]) -> str:
        lines = "".join(
            f"\n  {name}: {type(err).__name__}: {clip(_rendered(err, names), 300)}" for name, err in self.errors
        )
        return f"All {len(self.errors)} judge clients failed:{lines}"


def _rendered(error: BaseException, names: Mapping[str, str]) -> str:
    return error.render(names) if isinstance(error, LocalJudgeError) else str(error)
