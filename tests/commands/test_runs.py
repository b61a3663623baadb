"""The checks a run's plan makes before it judges anything."""

from __future__ import annotations

import json

import pytest

from localjudge._cli.commands.runs import plan_calibration
from localjudge._cli.commands.settings import JudgeSettings, WayFlags
from localjudge.errors import UsageError


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        (JudgeSettings(pairwise=True, allow_ties=True), "allow_ties= (a content-free pair is a tie by rights"),
        (JudgeSettings(ensemble_specs=("tiny",)), "ensemble= (calibrate each model on its own)"),
        (JudgeSettings(way_flags=WayFlags(calibrated=True)), "calibrated="),
    ],
)
def test_a_library_caller_is_refused_what_the_command_does_not_offer(tmp_path, settings, refused):
    data = tmp_path / "labelled.jsonl"
    data.write_text(json.dumps({"id": "1", "outputs": "4", "label": True}) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="calibrate fits one local model's verdicts") as refusal:
        plan_calibration(settings, data, label_field="label", pairwise=settings.pairwise)
    assert refused in str(refusal.value)
