"""What every command shares at its end and its start: text that is not UTF-8 is a bad call naming its flag."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._cli.commands import judging as command_judge
from localjudge._cli.commands.settings import JudgeSettings
from localjudge._cli.output import not_utf8
from localjudge.testing import ScriptedClient


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedClient:
    judge = ScriptedClient(['{"score": true}'], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **options: judge)
    return judge


def test_not_utf8_names_the_flag_and_looks_inside_the_judge_options():
    names = {"outputs": "--outputs", "system": "--system"}
    assert not_utf8({"outputs": "café", "settings": JudgeSettings(system="fair")}, names) is None
    assert not_utf8({"outputs": "caf\udce9"}, names).startswith("--outputs is not UTF-8 text: character 4 is the byte")
    assert not_utf8({"settings": JudgeSettings(system="\udcff")}, names).startswith("--system is not UTF-8 text")


@pytest.mark.parametrize(
    ("args", "stdin", "flag"),
    [
        (["--outputs", "caf\udce9"], None, "--outputs"),  # as a shell hands Python bytes that are not UTF-8
        (["--outputs", "-"], b"caf\xe9", "--outputs"),
        (["--outputs", "ok", "--system", "be fair\udce9"], None, "--system"),
    ],
)
def test_score_refuses_text_that_is_not_utf8_as_a_bad_call_naming_the_option(scripted, args, stdin, flag):
    result = CliRunner().invoke(cli.main, ["score", "--inputs", "q", *args], input=stdin)
    assert result.exit_code == 2, result.output
    assert flag in result.stderr and "UTF-8" in result.stderr and "Traceback" not in result.output
    assert scripted.requests == []
