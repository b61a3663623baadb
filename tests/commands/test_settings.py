"""JudgeSettings' fingerprint: what a results file's records are stamped with, so a resumed run knows its judge."""

from __future__ import annotations

from dataclasses import replace

from localjudge._cli.commands.settings import JudgeSettings
from localjudge._specs import ModelOptions


def test_the_fingerprint_follows_what_shapes_a_verdict_and_not_how_fast_it_comes(tmp_path):
    base = JudgeSettings(model_spec="tiny")
    same = [
        base.with_parallel_for(4),
        replace(base, model_options=ModelOptions.of({"n_threads": 1, "timeout": 5.0})),
        JudgeSettings(model_spec="tiny"),
    ]
    assert {settings.fingerprint() for settings in same} == {base.fingerprint()}
    others = [
        replace(base, model_spec="default"),
        replace(base, reasoning=True),
        replace(base, choices=(0.0, 1.0)),
        replace(base, model_options=ModelOptions.of({"temperature": 0.7})),
        replace(base, system="Be strict."),
    ]
    assert len({settings.fingerprint() for settings in [base, *others]}) == 1 + len(others)


def test_a_file_option_is_fingerprinted_by_its_contents_not_its_name(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Is {outputs} right?", encoding="utf-8")
    here = JudgeSettings(prompt_file=prompt).fingerprint()
    assert JudgeSettings(prompt_file=tmp_path / "." / "prompt.txt").fingerprint() == here  # named another way
    prompt.write_text("Is {outputs} wrong?", encoding="utf-8")
    assert JudgeSettings(prompt_file=prompt).fingerprint() != here


def test_a_refit_that_ships_is_another_judge(tmp_path, monkeypatch):
    """The default ways use the fits that ship; a release that refits one must not resume an older run's rows."""
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "pair-weights.json").write_text('{"checks": 2.0, "gain": 1.0}', encoding="utf-8")
    monkeypatch.setattr("localjudge._trust.fit.SHIPPED", shipped)
    before = JudgeSettings(model_spec="tiny").fingerprint()
    (shipped / "pair-weights.json").write_text('{"checks": 1.5, "gain": 1.0}', encoding="utf-8")
    assert JudgeSettings(model_spec="tiny").fingerprint() != before


def test_the_way_is_kept_once_the_flags_as_given_apart_from_it():
    from dataclasses import fields

    from localjudge._cli.commands.settings import WayFlags

    flag_names = {f.name for f in fields(WayFlags)}
    assert not flag_names & {f.name for f in fields(JudgeSettings)}  # no flag also a field of its own
    plain = JudgeSettings(model_spec="tiny")
    flagged = replace(plain, way_flags=WayFlags(calibrated=True))
    assert flagged.fingerprint() != plain.fingerprint()  # a flag shapes the verdict, so names another judge


def test_way_flags_add_to_a_way_and_refuse_two_pair_methods():
    import pytest

    from localjudge._cli.commands.settings import WayFlags
    from localjudge._judges.ways import WAYS, Way
    from localjudge.errors import OptionError

    assert WayFlags().added_to(WAYS["plain"]) == WAYS["plain"] and WayFlags().given() == {}
    flags = WayFlags(checklist=True, on_disagreement="probabilities")
    assert flags.given() == {"checklist": True, "on_disagreement": "probabilities"}
    assert flags.added_to(Way()) == WAYS["checklist"]
    assert WayFlags(likelihood=True).added_to(Way()).pairs == "likelihood"
    with pytest.raises(OptionError, match="does not go with"):
        WayFlags(pointwise=True, likelihood=True).added_to(Way())
    settings = JudgeSettings(way=WAYS["plain"], way_flags=WayFlags(calibrated=True))
    assert settings.judging_way() == Way(calibrated=True)  # the way named, with what the flags add
