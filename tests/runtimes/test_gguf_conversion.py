"""A GGUF for transformers: converted once into the cache, checked on every load, equivalent to llama.cpp."""

from __future__ import annotations

import json

import numpy as np
import pytest

from localjudge._paths import file_sha256
from localjudge._runtimes import gguf_conversion


def fake_conversion(directory, source_sha256: str, files: dict[str, bytes]) -> None:
    directory.mkdir(parents=True)
    for name, data in files.items():
        (directory / name).write_bytes(data)
    gguf_conversion._write_manifest(directory, directory / "model.gguf", source_sha256, "t", "t")


@pytest.mark.parametrize(
    "damage",
    ["flip a byte", "remove a file", "add a file", "other source", "no manifest", "garbled manifest"],
)
def test_a_damaged_conversion_is_not_intact(tmp_path, damage):
    target = tmp_path / "converted"
    fake_conversion(target, "a" * 64, {"config.json": b"{}", "model.safetensors": b"weights" * 100})
    assert gguf_conversion._intact(target, "a" * 64, full=True)
    if damage == "flip a byte":
        (target / "model.safetensors").write_bytes(b"weightz" + b"weights" * 99)
    elif damage == "remove a file":
        (target / "config.json").unlink()
    elif damage == "add a file":
        (target / "extra.py").write_text("print('hi')")
    elif damage == "no manifest":
        (target / gguf_conversion.MANIFEST).unlink()
    elif damage == "garbled manifest":
        (target / gguf_conversion.MANIFEST).write_text("{not json")
    source = "b" * 64 if damage == "other source" else "a" * 64
    assert not gguf_conversion._intact(target, source, full=False)  # what a load checks catches it too


def test_a_load_trusts_an_unchanged_stamp_and_verify_hashes_anyway(tmp_path):
    import os

    target = tmp_path / "converted"
    fake_conversion(target, "a" * 64, {"model.safetensors": b"weights" * 100})
    weights = target / "model.safetensors"
    stat = weights.stat()
    weights.write_bytes(b"weightz" + b"weights" * 99)  # same size, then the old mtime back
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert gguf_conversion._intact(target, "a" * 64, full=False)
    assert not gguf_conversion._intact(target, "a" * 64, full=True)


@pytest.fixture(scope="module")
def converted(tiny_gguf):
    pytest.importorskip("transformers")
    return gguf_conversion.converted_dir(tiny_gguf)


@pytest.mark.model
@pytest.mark.torch
def test_the_tiny_gguf_converts_once_into_a_checked_directory(tiny_gguf, converted):
    manifest = json.loads((converted / gguf_conversion.MANIFEST).read_text())
    assert manifest["source_sha256"] == file_sha256(tiny_gguf)
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(manifest["files"])
    assert converted.name == manifest["source_sha256"][:32]
    stamp = (converted / "model.safetensors").stat().st_mtime_ns
    assert gguf_conversion.converted_dir(tiny_gguf) == converted
    assert (converted / "model.safetensors").stat().st_mtime_ns == stamp  # reused, not converted again


@pytest.mark.model
@pytest.mark.torch
def test_both_engines_see_the_same_model(tiny_gguf, converted):
    """Same prompt tokens, and next-token logits that agree: the conversion kept the weights' meaning."""
    from localjudge._runtimes.llamacpp import LlamaCppRuntime
    from localjudge._runtimes.transformers import TransformersRuntime

    llama, hf = LlamaCppRuntime(tiny_gguf, n_ctx=512), TransformersRuntime(tiny_gguf, n_ctx=512)
    try:
        assert hf.model_dir == converted and hf.template_metadata["general.architecture"] == "gemma3_text"
        parts = [("<bos><start_of_turn>user\n", True), ("Is 2+2=4? Answer true or false.", False)]
        parts.append(("<end_of_turn>\n<start_of_turn>model\n", True))
        tokens = llama.prompt_tokens(parts)
        assert hf.prompt_tokens(parts) == tokens
        assert hf.vocab.n_vocab == llama.vocab.n_vocab == 262_144
        differ = [i for i, (x, y) in enumerate(zip(hf.vocab.pieces, llama.vocab.pieces, strict=True)) if x != y]
        assert len(differ) <= 1  # llama.cpp alone treats a literal "</s>" (212) as end of generation
        assert set(hf.vocab.stop_ids.tolist()) >= {1, 106}  # <eos> and <end_of_turn>
        a, b = llama.start(tokens).copy(), hf.start(tokens)
        assert np.corrcoef(a, b)[0, 1] > 0.99
        assert len(set(np.argsort(-a)[:10]) & set(np.argsort(-b)[:10])) >= 7
    finally:
        llama.close()
        hf.close()


@pytest.mark.torch
def test_a_gguf_transformers_cannot_read_is_a_load_error_that_leaves_nothing_behind(tmp_path, monkeypatch):
    gguf = pytest.importorskip("gguf")
    pytest.importorskip("transformers")
    from localjudge.errors import ModelLoadError

    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "odd.gguf"
    writer = gguf.GGUFWriter(str(path), arch="nosucharch")
    writer.add_tensor("token_embd.weight", np.zeros((64, 8), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelLoadError, match="could not convert") as info:
        gguf_conversion.converted_dir(path)
    assert "drop the hf: prefix" in str(info.value) and info.value.path == str(path)
    assert list((tmp_path / "cache" / "converted").iterdir()) == []
