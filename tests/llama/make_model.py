"""Writes a tiny random-weight llama GGUF for sitegen's real-server test.

Random weights are enough: llama.cpp's timing is real (prefill slows with
length, decode costs per token, slots run in parallel), and nothing is
downloaded from a model hub. The vocabulary is SentencePiece-style: control
tokens, byte fallback, and ~8K pieces (letters, letter pairs and triples,
word-start pieces), so a word is usually several tokens.

usage: python make_model.py OUT.gguf
"""

import itertools
import string
import sys

import gguf
import numpy as np

N_EMBD = 256
N_LAYER = 4
N_HEAD = 4
N_FF = 512
N_CTX_TRAIN = 8192
N_VOCAB = 8192


def vocabulary():
    tokens = ["<unk>", "<s>", "</s>"]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [gguf.TokenType.BYTE] * 256
    letters = string.ascii_lowercase
    pieces = list(letters + string.ascii_uppercase + string.digits + string.punctuation)
    pieces += ["\u2581" + c for c in letters + string.ascii_uppercase + string.digits]
    pieces += ["".join(p) for p in itertools.product(letters, repeat=2)]
    pieces += ["\u2581" + "".join(p) for p in itertools.product(letters, repeat=2)]
    for p in itertools.product(letters, repeat=3):
        if len(tokens) + len(pieces) >= N_VOCAB:
            break
        pieces.append("".join(p))
    pieces = pieces[: N_VOCAB - len(tokens)]
    tokens += pieces
    types += [gguf.TokenType.NORMAL] * len(pieces)
    # Longer pieces win merges, as in a trained SentencePiece model.
    scores = [0.0] * 259 + [float(len(p)) - i * 1e-6 for i, p in enumerate(pieces)]
    return tokens, scores, types


def main(path):
    rng = np.random.default_rng(1234)
    w = gguf.GGUFWriter(path, "llama")
    w.add_name("sitegen-tiny-random")
    w.add_context_length(N_CTX_TRAIN)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    tokens, scores, types = vocabulary()
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    def weight(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float16)

    ones = np.ones(N_EMBD, dtype=np.float32)
    w.add_tensor("token_embd.weight", weight(N_VOCAB, N_EMBD))
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", weight(N_VOCAB, N_EMBD))
    for i in range(N_LAYER):
        w.add_tensor(f"blk.{i}.attn_norm.weight", ones)
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            w.add_tensor(f"blk.{i}.{name}.weight", weight(N_EMBD, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", ones)
        w.add_tensor(f"blk.{i}.ffn_gate.weight", weight(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_up.weight", weight(N_FF, N_EMBD))
        w.add_tensor(f"blk.{i}.ffn_down.weight", weight(N_EMBD, N_FF))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1])
