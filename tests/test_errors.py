"""The exception tree: misuse apart from runtime failures, and context kept on each error."""

from __future__ import annotations

import builtins
import pickle
import re

import pytest

import localjudge
from localjudge import errors
from localjudge._wording import Message
from localjudge.errors import (
    AllClientsFailedError,
    BadRowError,
    ContextOverflowError,
    DuplicateIdError,
    IncompatibleDependencyError,
    InvalidEncodingError,
    InvalidTrajectoryError,
    JudgeRuntimeError,
    JudgeTimeoutError,
    LocalJudgeError,
    MalformedRowError,
    MissingDependencyError,
    MissingTemplateVariableError,
    MissingValueError,
    ModelError,
    ModelLoadError,
    ModelNotFoundError,
    ModelSpecError,
    NoCalibrationError,
    OptionError,
    OutputParseError,
    OutputPathError,
    RemoteCallError,
    RemoteConnectError,
    RemoteStatusError,
    RequestCancelledError,
    ResultsFileError,
    ResultsWriteError,
    SchemaTooLargeError,
    TruncatedOutputError,
    UnsupportedSchemaError,
    UsageError,
)

PARENTS = {
    UsageError: (LocalJudgeError, ValueError),
    MissingTemplateVariableError: (UsageError, KeyError),
    InvalidTrajectoryError: (UsageError, TypeError),
    UnsupportedSchemaError: (UsageError,),
    SchemaTooLargeError: (UnsupportedSchemaError,),
    ResultsFileError: (UsageError, OSError),
    ResultsWriteError: (LocalJudgeError, OSError),
    ModelSpecError: (UsageError,),
    OptionError: (UsageError,),
    NoCalibrationError: (OptionError,),
    OutputPathError: (OptionError,),
    BadRowError: (UsageError,),
    MalformedRowError: (BadRowError,),
    InvalidEncodingError: (BadRowError,),
    DuplicateIdError: (BadRowError,),
    MissingValueError: (BadRowError,),
    MissingDependencyError: (LocalJudgeError, ImportError),
    IncompatibleDependencyError: (MissingDependencyError,),
    JudgeRuntimeError: (LocalJudgeError,),
    ModelError: (JudgeRuntimeError,),
    ModelLoadError: (ModelError,),
    ModelNotFoundError: (ModelLoadError,),
    ContextOverflowError: (ModelError,),
    RequestCancelledError: (ModelError,),
    OutputParseError: (JudgeRuntimeError, ValueError),
    TruncatedOutputError: (OutputParseError,),
    RemoteCallError: (JudgeRuntimeError,),
    RemoteConnectError: (RemoteCallError,),
    JudgeTimeoutError: (RemoteCallError,),
    RemoteStatusError: (RemoteCallError,),
    AllClientsFailedError: (JudgeRuntimeError,),
}


@pytest.mark.parametrize(("cls", "parents"), list(PARENTS.items()), ids=lambda v: getattr(v, "__name__", ""))
def test_the_tree_is_as_drawn(cls, parents):
    for parent in parents:
        assert issubclass(cls, parent)


def test_misuse_and_runtime_failures_do_not_overlap():
    misuse = [c for c in PARENTS if issubclass(c, UsageError)]
    runtime = [c for c in PARENTS if issubclass(c, JudgeRuntimeError)]
    assert misuse and runtime
    assert not set(misuse) & set(runtime)
    assert not issubclass(MissingDependencyError, (UsageError, JudgeRuntimeError))


def test_the_docstring_draws_every_exception_in_all():
    drawn = set(re.findall(r"\b([A-Z][A-Za-z]+Error)\b", errors.__doc__ or "")) - {
        "ValueError",
        "ImportError",
        "OSError",
        "KeyError",
        "TypeError",
    }
    assert set(errors.__all__) == drawn
    assert set(errors.__all__) == {c.__name__ for c in PARENTS} | {"LocalJudgeError"}


def test_a_missing_template_variable_is_also_the_key_error_openevals_raises():
    error = errors.MissingTemplateVariableError("focus", ["inputs", "outputs"])
    assert isinstance(error, KeyError) and isinstance(error, ValueError)
    assert str(error).startswith("The prompt uses {focus} but no value was given")  # not KeyError's repr


def test_the_package_exports_the_main_exceptions():
    for name in ("LocalJudgeError", "UsageError", "JudgeRuntimeError", "OutputParseError", "TruncatedOutputError"):
        assert getattr(localjudge, name) is getattr(errors, name)


def test_missing_template_variable_message():
    err = MissingTemplateVariableError("context", ["outputs", "inputs"])
    assert err.variable == "context"
    assert err.available == ["inputs", "outputs"]
    text = str(err)
    assert "{context}" in text and "context=..." in text and "inputs, outputs" in text
    assert "{{context}}" in text, "it says how to write a literal brace"
    assert "none" in str(MissingTemplateVariableError("x"))


def test_missing_dependency_names_the_install_command():
    err = MissingDependencyError("LangChain prompts", "langchain-core", "langchain")
    assert "pip install 'localjudge[langchain]'" in str(err)
    assert "langchain-core" in str(err)
    assert "pip install numpy" in str(MissingDependencyError("x", "numpy"))
    assert isinstance(err, ImportError)


def test_runtime_errors_carry_context_and_show_the_raw_output():
    err = JudgeRuntimeError("failed", backend="llamacpp", request={"model": "m"}, raw_output='{"score": ')
    assert err.backend == "llamacpp" and err.request == {"model": "m"} and err.raw_output == '{"score": '
    assert str(err) == '[llamacpp] failed\nRaw model output: {"score": '
    assert str(JudgeRuntimeError("plain")) == "plain"


def test_long_raw_output_is_clipped_in_the_message_but_kept_whole():
    raw = "x" * 5000
    err = OutputParseError("bad", raw_output=raw)
    assert err.raw_output == raw
    assert len(str(err)) < 2200
    assert "3000 more characters" in str(err)


def test_parse_errors_keep_schema_and_hint():
    err = TruncatedOutputError("cut", raw_output="{", schema={"type": "object"}, hint="raise max_tokens")
    assert err.schema == {"type": "object"}
    assert str(err).endswith("Hint: raise max_tokens")
    assert isinstance(err, ValueError)


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (JudgeRuntimeError("x"), False),
        (ModelError("x"), True),
        (ContextOverflowError("x"), False),
        (OutputParseError("x", raw_output=""), True),
        (RemoteCallError("x"), True),
        (JudgeRuntimeError("x", retryable=True), True),
        (ModelError("x", retryable=False), False),
    ],
)
def test_retryable_flags(error, retryable):
    assert error.retryable is retryable


@pytest.mark.parametrize("status", [400, 401, 404, 408, 429, 500, 503])
def test_an_http_status_error_lets_another_client_try_whatever_the_status(status):
    err = RemoteStatusError("bad status", status_code=status, body="b")
    assert err.retryable is True  # this endpoint, or a server of the same model: the status decides (failure_policy)
    assert err.status_code == status and err.body == "b"


def test_http_status_retryable_can_be_overridden():
    assert RemoteStatusError("x", status_code=500, retryable=False).retryable is False


def test_transport_error_lists_attempts():
    err = RemoteCallError("gave up", attempts=["500", "timeout"])
    assert "attempt 1: 500" in str(err) and "attempt 2: timeout" in str(err)
    assert "attempt" not in str(RemoteCallError("gave up", attempts=["once"]))


def test_all_clients_failed_lists_every_failure_in_order():
    first, second = ModelError("crashed"), RemoteConnectError("refused")
    err = AllClientsFailedError([("local", first), ("remote", second)])
    assert err.errors == [("local", first), ("remote", second)]
    text = str(err)
    assert "All 2 judge clients failed" in text
    assert text.index("local: ModelError: crashed") < text.index("remote: RemoteConnectError: refused")


def test_model_load_error_keeps_the_path():
    err = ModelLoadError("not a GGUF", path="/tmp/x.gguf", backend="llamacpp")
    assert err.path == "/tmp/x.gguf" and err.backend == "llamacpp"


def test_unsupported_schema_error_says_where():
    err = UnsupportedSchemaError("pattern is not supported", path="/properties/a", keyword="pattern")
    assert str(err) == "pattern is not supported at /properties/a"
    assert err.keyword == "pattern"


def test_the_timeout_error_does_not_shadow_the_builtin():
    from localjudge import errors

    assert JudgeTimeoutError is not builtins.TimeoutError and not hasattr(errors, "TimeoutError")
    assert "TimeoutError" not in errors.__all__  # so ``import *`` leaves the builtin alone
    assert not isinstance(JudgeTimeoutError("x"), OSError)


def test_an_option_error_names_options_as_keywords_or_as_the_caller_names_them():
    error = OptionError("Give {prompt} or {prompt_file}, not both")
    assert error.options == ("prompt", "prompt_file")
    assert str(error) == "Give prompt= or prompt_file=, not both"
    assert error.render({"prompt": "--prompt"}) == "Give --prompt or prompt_file=, not both"
    with_a_path = OptionError("{results} {path} is the data file", path="{odd}.jsonl")
    assert with_a_path.options == ("results",)
    assert with_a_path.render({"results": "-o"}) == "-o {odd}.jsonl is the data file"


def test_a_message_names_options_by_keyword_and_keeps_the_braces_of_its_values():
    message = Message(
        "{path}: raise {n_ctx} or {max_tokens:max_tokens}, {format_instructions:format_instructions=False}; got {raw!r}",
        path="{odd}.jsonl",
        raw='{"score": tr',
    )
    assert message.options == ("n_ctx", "max_tokens", "format_instructions")
    assert str(message) == ("{odd}.jsonl: raise n_ctx= or max_tokens, format_instructions=False; got '{\"score\": tr'")
    flags = {"n_ctx": "--n-ctx", "max_tokens": "--max-tokens", "format_instructions": "--no-format-instructions"}
    assert message.render(flags) == (
        "{odd}.jsonl: raise --n-ctx or --max-tokens, --no-format-instructions; got '{\"score\": tr'"
    )
    nested = Message("{reason} Or drop {format_instructions}.", reason=Message("Raise {n_ctx}."))
    assert nested.options == ("format_instructions",)
    assert nested.render(flags) == "Raise --n-ctx. Or drop --no-format-instructions."
    assert Message("{{literal}} {n_ctx}").render(flags) == "{literal} --n-ctx"


@pytest.mark.parametrize(
    "error",
    [
        ModelLoadError(Message("load it with a larger {n_ctx} ({path})", path="/m/{x}.gguf"), path="/m/{x}.gguf"),
        UsageError(Message("load it with a larger {n_ctx} ({path})", path="/m/{x}.gguf")),
        MalformedRowError(Message("load it with a larger {n_ctx} ({path})", path="/m/{x}.gguf")),
    ],
    ids=lambda error: type(error).__name__,
)
def test_any_error_built_from_a_message_renders_both_ways(error):
    assert str(error).endswith("load it with a larger n_ctx= (/m/{x}.gguf)")
    assert error.render({"n_ctx": "--n-ctx"}).endswith("load it with a larger --n-ctx (/m/{x}.gguf)")
    assert error.args == (str(error),)  # plain text in args, for code that reads them and for pickling
    assert pickle.loads(pickle.dumps(error)).render({"n_ctx": "--n-ctx"}) == error.render({"n_ctx": "--n-ctx"})


def test_an_error_with_parts_renders_each_of_them():
    truncated = TruncatedOutputError(
        Message("stopped at {max_tokens}"), raw_output='{"a": {', hint=Message("raise {max_tokens}"), backend="x"
    )
    assert str(truncated) == '[x] stopped at max_tokens=\nRaw model output: {"a": {\nHint: raise max_tokens='
    assert truncated.message == "stopped at max_tokens=" and truncated.hint == "raise max_tokens="
    flags = {"max_tokens": "--max-tokens"}
    assert truncated.render(flags) == '[x] stopped at --max-tokens\nRaw model output: {"a": {\nHint: raise --max-tokens'
    row = MissingValueError(Message("mapped by {mapping}"), where="data.csv:3")
    assert (str(row), row.render({"mapping": "--map"})) == (
        "data.csv:3: mapped by mapping=",
        "data.csv:3: mapped by --map",
    )
    chain = AllClientsFailedError([("a", truncated), ("b", ValueError("{x}"))], backend="fallback")
    assert "a: TruncatedOutputError: [x] stopped at --max-tokens" in chain.render(flags)
    assert chain.render(flags).endswith("b: ValueError: {x}") and "max_tokens=" in str(chain)


def test_an_error_without_a_message_is_shown_as_written():
    plain = [
        UsageError('{"not": "a placeholder"} {n_ctx}'),
        ModelLoadError("{n_ctx}", path="{x}"),
        BadRowError("{odd}", where="f.jsonl:1"),
        OutputParseError("bad {json}", raw_output="{", hint="{n_ctx}"),
        MissingDependencyError("Plotting {x}", "matplotlib", "plot"),
        MissingTemplateVariableError("n_ctx"),
    ]
    for error in plain:
        assert error.render({"n_ctx": "--n-ctx", "x": "--x", "odd": "--odd", "json": "--json"}) == str(error)
    assert str(plain[0]) == '{"not": "a placeholder"} {n_ctx}'
    assert str(plain[3]) == "bad {json}\nRaw model output: {\nHint: {n_ctx}"
