#!/usr/bin/env python3
"""Writes a tiny random-weight Llama model folder that `vllm serve` loads.

    python make_model.py OUT_DIR [--seed 0]

Nothing is downloaded: the byte-level BPE tokenizer is trained here on text
generated from a fixed word list, and the weights are drawn from a seeded
generator. The same seed gives the same bytes (weights, tokenizer, config).

The model: LlamaForCausalLM, 4 layers, hidden 256, 4 heads (2 KV heads),
intermediate 512, vocab 4096, bfloat16, max_position_embeddings 4096 (about
5M parameters). Its chat template's generation prompt ends with "<think>\\n",
and "<think>" / "</think>" are added tokens, so `--reasoning-parser
deepseek_r1` applies: every output token before "</think>" is reasoning.
Random weights give near-uniform logits: at temperature 1 the output is a
random token walk (no loops; at temperature 0 it loops); "</s>" (EOS) comes
up about once in 4096 tokens, so use `ignore_eos` where a test needs exact
lengths. "</think>" is made likelier, about 1 in 10 sampled tokens
(--think-end-prob): the last layer's MLP bias puts a constant into hidden
dimension 0 and only the "</think>" row of lm_head reads it, so at
temperature 1 a chat answer has a few reasoning tokens, then content (which
may hold further "</think>" texts).

Needs torch, safetensors and tokenizers (all installed by install.sh).
"""
import argparse
import json
import math
import os
import random

VOCAB = 4096
HIDDEN = 256
LAYERS = 4
HEADS = 4
KV_HEADS = 2
INTERMEDIATE = 512
MAX_POS = 4096

SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]
# Added (not "special") so they survive detokenization and the reasoning
# parser finds them by id, as in DeepSeek-R1's own tokenizer.
ADDED = ["<think>", "</think>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"]

# Starts with the BOS like Llama's and DeepSeek-R1's templates: vLLM renders a
# chat prompt with no special tokens added, so the template must bring it.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if message['content'] is string %}{% set content = message['content'] %}"
    "{% else %}{% set content = message['content'] | map(attribute='text') | join('') %}{% endif %}"
    "<|{{ message['role'] }}|>\n{{ content }}<|end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n<think>\n{% endif %}"
)

WORDS = (
    "the of and to in is that it was for on are as with his they at be this from "
    "have or by one had not but what all were when we there can an your which their "
    "said if do will each about how up out them then she many some so these would other "
    "into has more her two like him see time could no make than first been its who now "
    "people my made over did down only way find use may water long little very after "
    "words called just where most know get through back much before go good new write "
    "our used me man too any day same right look think also around another came come "
    "work three word must because does part even place well such here take why things "
    "help put years different away again off went old number great tell men say small "
    "every found still between name should home big give air line set own under read "
    "last never us left end along while might next sound below saw something thought "
    "both few those always looked show large often together asked house world going "
    "want school important until form food keep children feet land side without boy "
    "once animals life enough took sometimes four head above kind began almost live "
    "page got earth need far hand high year mother light parts country father let night "
    "following picture being study second eyes soon times story boys since white days "
    "ever paper hard near sentence better best across during today others however sure "
    "means knew try told young miles sun ways thing whole hear example heard several "
    "change answer room sea against top turned learn point city play toward five using "
    "himself usually server token latency throughput request stream model cache prompt "
    "benchmark queue batch decode prefill memory block sequence context window length"
).split()


def corpus(rng: random.Random, sentences: int) -> list[str]:
    # Made-up words from syllables widen the corpus so that BPE learns the
    # whole vocabulary (the word list alone runs out of merges).
    syl = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"]
    made = ["".join(rng.choice(syl) for _ in range(rng.randint(2, 4))) for _ in range(3000)]
    out = []
    for _ in range(sentences):
        n = rng.randint(4, 18)
        words = [rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(made) for _ in range(n)]
        s = " ".join(words).capitalize()
        s += rng.choice([".", ".", ".", "?", "!", ",", ";"])
        if rng.random() < 0.2:
            s += " " + str(rng.randint(0, 99999))
        out.append(s)
    return out


def tokenizer_files(out: str, seed: int) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - len(ADDED),
        min_frequency=2,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(random.Random(seed), 60000), trainer=trainer)
    tok.add_tokens([_added(t) for t in ADDED])
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    tok.save(os.path.join(out, "tokenizer.json"))
    n = tok.get_vocab_size(with_added_tokens=True)
    assert n == VOCAB, n
    cfg = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "add_bos_token": True,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": MAX_POS,
        "chat_template": CHAT_TEMPLATE,
    }
    _json(os.path.join(out, "tokenizer_config.json"), cfg)
    _json(
        os.path.join(out, "special_tokens_map.json"),
        {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"},
    )
    return {t: tok.token_to_id(t) for t in SPECIAL + ADDED}


def _added(t):
    from tokenizers import AddedToken

    return AddedToken(t, special=False, normalized=False, single_word=False, lstrip=False, rstrip=False)


def _json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


def weights(out: str, seed: int, think_end: int, think_end_prob: float) -> int:
    import torch
    from safetensors.torch import save_file

    g = torch.Generator().manual_seed(seed)
    head = HIDDEN // HEADS

    def normal(*shape):
        return (torch.randn(*shape, generator=g) * 0.02).to(torch.bfloat16)

    def ones(n):
        return torch.ones(n, dtype=torch.bfloat16)

    t = {"model.embed_tokens.weight": normal(VOCAB, HIDDEN)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        t[p + "self_attn.q_proj.weight"] = normal(HEADS * head, HIDDEN)
        t[p + "self_attn.k_proj.weight"] = normal(KV_HEADS * head, HIDDEN)
        t[p + "self_attn.v_proj.weight"] = normal(KV_HEADS * head, HIDDEN)
        t[p + "self_attn.o_proj.weight"] = normal(HIDDEN, HEADS * head)
        t[p + "mlp.gate_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        t[p + "mlp.up_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        t[p + "mlp.down_proj.weight"] = normal(HIDDEN, INTERMEDIATE)
        t[p + "mlp.gate_proj.bias"] = torch.zeros(INTERMEDIATE, dtype=torch.bfloat16)
        t[p + "mlp.up_proj.bias"] = torch.zeros(INTERMEDIATE, dtype=torch.bfloat16)
        down_bias = torch.zeros(HIDDEN, dtype=torch.bfloat16)
        if i == LAYERS - 1:
            # Hidden dimension 0 ends at ~10 against ~0.05 elsewhere, so after
            # the final RMSNorm it is ~sqrt(HIDDEN) = 16 whatever the context.
            down_bias[0] = 10.0
        t[p + "mlp.down_proj.bias"] = down_bias
        t[p + "input_layernorm.weight"] = ones(HIDDEN)
        t[p + "post_attention_layernorm.weight"] = ones(HIDDEN)
    t["model.norm.weight"] = ones(HIDDEN)
    lm_head = normal(VOCAB, HIDDEN)
    lm_head[:, 0] = 0.0
    if think_end_prob > 0:
        # logit(</think>) ~ 16 * w against ~0 for the other VOCAB-1 tokens.
        logit = math.log(think_end_prob * (VOCAB - 1) / (1 - think_end_prob))
        lm_head[think_end, 0] = logit / math.sqrt(HIDDEN)
    t["lm_head.weight"] = lm_head
    save_file(t, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    return sum(v.numel() for v in t.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--think-end-prob",
        type=float,
        default=0.1,
        help="chance that a sampled token (temperature 1) is </think>; 0 leaves it at ~1/4096",
    )
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    ids = tokenizer_files(a.out_dir, a.seed)
    params = weights(a.out_dir, a.seed, ids["</think>"], a.think_end_prob)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": VOCAB,
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HIDDEN // HEADS,
        "hidden_act": "silu",
        "max_position_embeddings": MAX_POS,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "attention_bias": False,
        "mlp_bias": True,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "bos_token_id": ids["<s>"],
        "eos_token_id": ids["</s>"],
        "pad_token_id": ids["<pad>"],
        "initializer_range": 0.02,
        "use_cache": True,
    }
    _json(os.path.join(a.out_dir, "config.json"), config)
    _json(
        os.path.join(a.out_dir, "generation_config.json"),
        {"bos_token_id": ids["<s>"], "eos_token_id": ids["</s>"], "pad_token_id": ids["<pad>"]},
    )
    print(
        f"wrote {a.out_dir}: {params} parameters, seed {a.seed}, "
        f"think-end-prob {a.think_end_prob}, token ids {ids}"
    )


if __name__ == "__main__":
    main()
