"""Calibration files: written whole, read back as they were, and refused with advice when damaged."""

from __future__ import annotations

import json

import pytest

from localjudge._trust.calibration_file import calibration_path, read_calibration, write_calibration
from localjudge._trust.correction import Correction, Fit, Validation
from localjudge.errors import UsageError


def _fit() -> Fit:
    validation = Validation(0.3, 0.1, 0.6, 0.7, 5)
    return Fit(
        ("true", "false"),
        40,
        (0.8, 0.2),
        {"contextual": validation},
        "contextual",
        Correction(("true", "false"), (0.8, 0.2), 1.5),
    )


def test_a_written_calibration_reads_back(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    path = calibration_path("abc")
    assert path == tmp_path / "calibration" / "abc.json"
    write_calibration(path, _fit(), {"model": "default"})
    stored = read_calibration(path)
    assert stored.correction == Correction(("true", "false"), (0.8, 0.2), 1.5)
    assert (stored.chosen, stored.rows, stored.about) == ("contextual", 40, {"model": "default"})
    assert stored.validations == {"contextual": Validation(0.3, 0.1, 0.6, 0.7, 5)}
    assert not list(path.parent.glob("*.partial"))


def test_a_fit_that_kept_nothing_reads_back_as_no_correction(tmp_path):
    fit = _fit()
    write_calibration(tmp_path / "c.json", Fit(fit.classes, 40, None, fit.validations, None, None), {})
    stored = read_calibration(tmp_path / "c.json")
    assert stored.correction is None and stored.validations == fit.validations


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: "{not json", "not JSON"),
        (lambda d: {**d, "format": 99}, "not a format 1 calibration"),
        (lambda d: {**d, "classes": ["true"]}, "classes must be"),
        (lambda d: {**d, "classes": ["true", "true"]}, "classes repeat"),
        (lambda d: {**d, "classes": ["A", "B"]}, "class 'A' is not the JSON text of a verdict"),
        (lambda d: {**d, "classes": ["[1]", "true"]}, "is not the JSON text"),
        (lambda d: json.dumps(d).replace('"rows": ', '"rows": ' + "9" * 5000), "not JSON: a value JSON cannot hold"),
        (lambda d: {**d, "temperature": 10**400}, "temperature must be"),
        (lambda d: {**d, "temperature": 1e9}, "temperature must be"),
        (lambda d: {**d, "temperature": float("nan")}, "temperature must be"),
        (lambda d: {**d, "prior": [0.0, 1.0]}, "prior must hold"),
        (lambda d: {**d, "prior": [0.5]}, "prior must hold"),
        (lambda d: {**d, "rows": -1}, "rows must be"),
        (lambda d: {**d, "validations": {"x": {"before_ece": 1}}}, "figures of 'x'"),
        (lambda d: {**d, "validations": [1, 2]}, "validations must map"),
        (
            lambda d: {**d, "validations": {"x": {**vars(Validation(0.3, 0.1, 0.6, 0.7, 5)), "after_ece": "low"}}},
            "figures of 'x'",
        ),
        (lambda d: {**d, "chosen": "magic"}, "chosen must be one of"),
        (lambda d: {**d, "chosen": "temperature"}, "temperature has no prior"),
        (lambda d: "[" * 100_000, "not JSON"),
        (lambda d: "x" * (2 << 20), "over"),
        (lambda d: b"\xff\xfe{}", "not JSON"),
    ],
)
def test_a_damaged_file_is_refused_with_advice(tmp_path, change, why):
    path = tmp_path / "c.json"
    write_calibration(path, _fit(), {})
    changed = change(json.loads(path.read_text()))
    if isinstance(changed, bytes):
        path.write_bytes(changed)
    else:
        path.write_text(changed if isinstance(changed, str) else json.dumps(changed))
    with pytest.raises(UsageError, match="damaged") as caught:
        read_calibration(path)
    assert why in str(caught.value) and "run localjudge calibrate again" in str(caught.value)


def test_an_unreadable_path_is_an_error_that_names_it(tmp_path):
    with pytest.raises(UsageError, match=f"cannot read the calibration file {tmp_path}"):
        read_calibration(tmp_path)  # a directory
