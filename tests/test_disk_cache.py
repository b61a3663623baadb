"""The on-disk cache of token pieces and indexes: round trips, atomic writes, and misses on damage."""

from __future__ import annotations

import pytest

from localjudge import _disk_cache as disk_cache


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


def test_a_flipped_byte_is_a_miss_not_a_wrong_entry():
    disk_cache.store("pieces", ("m",), b"0123456789")
    path = disk_cache.entry_path("pieces", ("m",))
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # "7" becomes "6": lengths intact, content changed
    path.write_bytes(bytes(data))
    assert disk_cache.load("pieces", ("m",)) is None
    disk_cache.store("pieces", ("m",), b"0123456789")  # the rebuild overwrites it
    assert disk_cache.load("pieces", ("m",)) == b"0123456789"


@pytest.mark.parametrize("damage", [b"", b"LJC2", b"not a cache file at all", b"LJC2" + b"\x00" * 32 + b"payload"])
def test_cut_or_foreign_files_are_misses(damage):
    path = disk_cache.entry_path("index", ("m",))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage)
    assert disk_cache.load("index", ("m",)) is None


def test_a_directory_in_place_of_an_entry_leaves_no_temporary_file(tmp_path):
    path = disk_cache.entry_path("pieces", ("m",))
    path.mkdir(parents=True)
    for _ in range(3):
        disk_cache.store("pieces", ("m",), b"x" * 100_000)
    assert disk_cache.load("pieces", ("m",)) is None
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_pieces_helpers_check_the_vocabulary_size():
    disk_cache.store_pieces(("m",), [b"a", None, b"c"])
    assert disk_cache.load_pieces(("m",), 3) == [b"a", None, b"c"]
    assert disk_cache.load_pieces(("m",), 4) is None


def test_an_oversized_file_is_a_miss_without_being_read(monkeypatch):
    disk_cache.store("index", ("m",), b"x" * 100)
    monkeypatch.setattr(disk_cache, "MAX_ENTRY_BYTES", 64)
    assert disk_cache.load("index", ("m",)) is None
