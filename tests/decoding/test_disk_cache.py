"""The on-disk cache of token pieces and indexes: round trips, atomic writes, and misses on damage."""

from __future__ import annotations

import pytest

from localjudge.decoding import disk_cache


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))


def test_pieces_round_trip_keeps_none_and_empty_apart():
    pieces = [None, b"", b"a", b"\xff\x00", None, "é".encode()]
    decoded = disk_cache.decode_pieces(disk_cache.encode_pieces(pieces))
    assert decoded == pieces


def test_damaged_pieces_entry_is_rejected():
    data = disk_cache.encode_pieces([b"abc", b"de"])
    with pytest.raises(ValueError):
        disk_cache.decode_pieces(data[:-1])


def test_store_and_load_are_keyed_by_every_part(tmp_path):
    assert disk_cache.load("index", ("m", "r")) is None
    disk_cache.store("index", ("m", "r"), b"payload")
    assert disk_cache.load("index", ("m", "r")) == b"payload"
    assert disk_cache.load("index", ("m", "r2")) is None
    assert disk_cache.load("pieces", ("m", "r")) is None
    assert not [p for p in (tmp_path / "decoding").iterdir() if p.name.startswith(".tmp-")]
