"""grammars/ is current, and its regex and GBNF accept exactly the valid answers, the verdict decoded first."""

from __future__ import annotations

import ctypes
import json
import re
from pathlib import Path

import pytest

from localjudge._decoding.grammars import DEFAULT_VARIANTS, grammar_files, regex_to_gbnf
from localjudge._prompts.parsing import validate
from localjudge._prompts.schema import default_output_schema

GRAMMARS_DIR = Path(__file__).resolve().parents[2] / "grammars"

VALID = {
    "boolean": [
        '{"score":true,"reasoning":"Fine. Thus, the score should be: true."}',
        '{"score":false,"reasoning":""}',
        '{"score":false,"reasoning":"quote \\" and \\\\ and 名将"}',
    ],
    "boolean-no-reasoning": ['{"score":true}', '{"score":false}'],
    "continuous": [
        '{"score":0.75,"reasoning":"ok"}',
        '{"score":1,"reasoning":"ok"}',
        '{"score":0,"reasoning":"ok"}',
        '{"score":1.0,"reasoning":"ok"}',
    ],
    "continuous-no-reasoning": ['{"score":0.123456}', '{"score":1.000}'],
    "choices": ['{"score":0.5,"reasoning":"ok"}', '{"score":1.0,"reasoning":"ok"}', '{"score":0.0,"reasoning":"x"}'],
    "choices-no-reasoning": ['{"score":0.0}'],
}
INVALID = {
    "boolean": [
        '{"score":"true","reasoning":"ok"}',
        '{"reasoning":"ok","score":true}',  # the request's order: a local judge decodes the verdict first
        '{"score":true,"reasoning":"ok"',
        '{"score":true,"reasoning":"ok"} ',
        '{"score":true,"reasoning":"line\nbreak"}',
        '{"score":true,"reasoning":"ok","x":1}',
        '{ "score":true,"reasoning":"ok"}',
    ],
    "boolean-no-reasoning": ['{"score":1}', '{"score":null}'],
    "continuous": [
        '{"score":1.5,"reasoning":"ok"}',
        '{"score":-0.1,"reasoning":"ok"}',
        '{"score":2,"reasoning":"ok"}',
        '{"score":1.01,"reasoning":"ok"}',
        '{"score":0.1234567,"reasoning":"ok"}',
    ],
    "continuous-no-reasoning": ['{"score":true}', '{"score":.5}'],
    "choices": ['{"score":0.25,"reasoning":"ok"}', '{"score":2.0,"reasoning":"ok"}'],
    "choices-no-reasoning": ['{"score":0.7}', '{"score":"0.5"}'],
}


def _read(name: str) -> str:
    return (GRAMMARS_DIR / name).read_text(encoding="utf-8")


def test_grammars_dir_is_current():
    stale = [name for name, text in grammar_files() if not (GRAMMARS_DIR / name).is_file() or _read(name) != text]
    assert not stale, f"grammars/ is out of date ({', '.join(stale)}): run `make grammars`"
    index = json.loads(_read("schemas.json"))
    assert index == {stem: default_output_schema(**args)[0] for stem, args in DEFAULT_VARIANTS.items()}


@pytest.mark.parametrize("variant", list(DEFAULT_VARIANTS))
def test_regex_accepts_valid_and_rejects_invalid(variant):
    regex = _read(f"{variant}.regex").rstrip("\n")
    schema = json.loads(_read("schemas.json"))[variant]
    for text in VALID[variant]:
        assert re.fullmatch(regex, text), text
        assert validate(json.loads(text), schema) is None, text  # and the schema agrees
    for text in INVALID[variant]:
        assert not re.fullmatch(regex, text), text


@pytest.mark.parametrize(
    ("regex", "gbnf"),
    [
        (r"a(b|cd)*e{2,3}f?", 'root ::= "a" ("b" | "cd")* "e"{2,3} "f"?'),
        (r'[^"\\\x00-\x1f]+', 'root ::= [^"\\\\\\x00-\\x1F]+'),
        (r"x{2,}[0-9]{4}", 'root ::= "x"{2,} [0-9]{4}'),
        (r'\{"k":"\]"\}', 'root ::= "{\\"k\\":\\"]\\"}"'),
    ],
)
def test_regex_to_gbnf_translation(regex, gbnf):
    assert regex_to_gbnf(regex) == gbnf


class _GrammarChecker:
    """Runs llama.cpp's own grammar sampler over an instance's tokens."""

    def __init__(self, gguf: Path) -> None:
        import llama_cpp

        self.lib = llama_cpp
        self.llama = llama_cpp.Llama(str(gguf), vocab_only=True, verbose=False)
        self.vocab = llama_cpp.llama_model_get_vocab(self.llama.model)

    def accepts(self, gbnf: str, text: str) -> bool:
        lib = self.lib
        sampler = lib.llama_sampler_init_grammar(self.vocab, gbnf.encode(), b"root")
        assert sampler, "llama.cpp could not parse the grammar"
        try:
            tokens = self.llama.tokenize(text.encode(), add_bos=False, special=False)
            for token in [*tokens, self.llama.token_eos()]:
                data = (lib.llama_token_data * 1)(lib.llama_token_data(token, 0.0, 0.0))
                array = lib.llama_token_data_array(data, 1, -1, False)
                lib.llama_sampler_apply(sampler, ctypes.byref(array))
                if data[0].logit == float("-inf"):
                    return False
                if token != self.llama.token_eos():
                    lib.llama_sampler_accept(sampler, token)
            return True
        finally:
            lib.llama_sampler_free(sampler)


@pytest.fixture(scope="module")
def grammar_checker(tiny_gguf):
    return _GrammarChecker(tiny_gguf)


@pytest.mark.model
@pytest.mark.parametrize("variant", list(DEFAULT_VARIANTS))
def test_gbnf_accepts_valid_and_rejects_invalid_in_llama_cpp(grammar_checker, variant):
    gbnf = _read(f"{variant}.gbnf")
    for text in VALID[variant]:
        assert grammar_checker.accepts(gbnf, text), text
    for text in INVALID[variant]:
        assert not grammar_checker.accepts(gbnf, text), text
