"""A tiny transformers model with seeded random weights, built offline in about a second.

It knows nothing, so every valid JSON answer it gives is the constraint's
doing, not the model's: that is what the tests that use it check.
"""

from __future__ import annotations

from pathlib import Path

CORPUS = [
    "What is 2+2? The answer is 4.",
    '{"reasoning": "The answer is correct.", "score": true}',
    "Judge whether the answer is correct. Thus, the score should be: false.",
    "Ünïcödé façade — 数字 ok",
]
TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
N_CTX = 256


def build_tiny_model(directory: Path, chat_template: str | None = TEMPLATE) -> Path:
    """A byte-level BPE tokenizer trained on CORPUS and a 2-layer Llama with seeded random weights."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS * 4, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    if chat_template is not None:
        fast.chat_template = chat_template
    fast.save_pretrained(directory)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=N_CTX,
        bos_token_id=0,
        eos_token_id=1,
    )
    LlamaForCausalLM(config).save_pretrained(directory)
    return directory
