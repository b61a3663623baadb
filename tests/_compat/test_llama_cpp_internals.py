"""llama-cpp-python's internals the runtime drives, on the real library; without them, a loud error."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp")

from llama_cpp import _internals

from localjudge._compat.llama_cpp_internals import llama_internals, model_of
from localjudge.errors import IncompatibleDependencyError


def test_the_internals_module_is_handed_over_checked():
    assert llama_internals() is _internals


@pytest.mark.model
def test_the_model_under_a_llama_says_its_trained_context_and_bos(tiny_gguf):
    import llama_cpp

    llm = llama_cpp.Llama(model_path=str(tiny_gguf), n_ctx=256, verbose=False)
    model = model_of(llm)
    assert model.n_ctx_train() == 32768  # Gemma 3 270M's, where the Llama was opened with its own n_ctx
    assert model.add_bos_token() is True
    llm.close()


def test_a_missing_method_is_a_loud_error(monkeypatch):
    monkeypatch.delattr(_internals.LlamaContext, "get_logits_ith")
    with pytest.raises(
        IncompatibleDependencyError, match=r"llama-cpp-python \S+ is installed.*LlamaContext\.get_logits_ith"
    ):
        llama_internals()


def test_a_handle_the_constructor_no_longer_sets_is_a_loud_error(monkeypatch):
    monkeypatch.setattr(_internals.LlamaBatch, "__init__", lambda self, **kwargs: None)
    with pytest.raises(IncompatibleDependencyError, match=r"LlamaBatch\.batch \(set by its constructor\)"):
        llama_internals()


def test_a_llama_without_its_model_is_a_loud_error():
    with pytest.raises(IncompatibleDependencyError, match=r"Llama\._model"):
        model_of(object())
