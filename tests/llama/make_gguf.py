"""Writes a small llama-architecture GGUF model with random weights: the model llama.cpp's
decode runs in the llama tests and the decode benchmark, made here so that nothing is
downloaded. The vocabulary is SentencePiece's (tokenizer.ggml.model "llama"): <unk>, <s>,
</s>, the 256 byte tokens <0x00>..<0xFF>, then whole words, so any text tokenizes.
  usage: make_gguf.py OUT [--layers N] [--embd N] [--heads N] [--ff N] [--words N] [--seed N]
Weights are f16 (norms f32), drawn from a seeded generator: the same arguments write the
same file; a model of 8 layers 512 wide takes a few seconds."""
import argparse
import math
import random
import struct
import sys

GGUF_VERSION = 3
ALIGNMENT = 32
# gguf value types (gguf.h's enum gguf_type)
U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
# ggml tensor types
T_F32, T_F16 = 0, 1
# llama_token_type
NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6


def gstr(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gstr(key) + struct.pack("<I", vtype)
    if vtype == STRING:
        return out + gstr(value)
    if vtype == ARRAY:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == STRING:
            return out + b"".join(gstr(s) for s in items)
        fmt = {F32: "f", I32: "i", U32: "I"}[etype]
        return out + struct.pack("<%d%s" % (len(items), fmt), *items)
    fmt = {U32: "I", I32: "i", F32: "f", BOOL: "?"}[vtype]
    return out + struct.pack("<" + fmt, value)


def vocabulary(words):
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [UNKNOWN, CONTROL, CONTROL] + [BYTE] * 256
    letters = "abcdefghijklmnopqrstuvwxyz"
    normal = ["\u2581"] + list(letters) + ["\u2581" + c for c in letters]
    n = 0
    while len(normal) < words:  # two- and three-letter words, in a fixed order
        a, b = divmod(n, 26)
        normal.append("\u2581" + letters[a % 26] + letters[b] + ("" if a < 26 else letters[a // 26 % 26]))
        n += 1
    tokens += normal[:words]
    types += [NORMAL] * min(words, len(normal))
    scores = [0.0] * 259 + [-float(i) for i in range(len(tokens) - 259)]
    return tokens, scores, types


def f16_weights(rng, n, scale):
    """n random halves of magnitude in [scale/2, scale), either sign: random bytes whose
    exponent bits are set a byte at a time (fast enough for a model of millions)."""
    exp = math.floor(math.log2(scale)) - 1 + 15  # the biased exponent of scale / 2
    high = bytes((b & 0x83) | (exp << 2) for b in range(256))
    raw = bytearray(rng.randbytes(2 * n))
    raw[1::2] = raw[1::2].translate(high)
    return bytes(raw)


def tensors(a, n_vocab, rng):
    """(name, dims (ne0 first), type, data) in the order llama.cpp's loader names them."""
    e, ff, kv_dim = a.embd, a.ff, a.embd // a.heads * a.kv_heads
    ones = struct.pack("<%df" % e, *([1.0] * e))
    out = [("token_embd.weight", [e, n_vocab], T_F16, f16_weights(rng, e * n_vocab, 0.5))]
    for i in range(a.layers):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", [e], T_F32, ones),
            (p + "attn_q.weight", [e, e], T_F16, f16_weights(rng, e * e, 0.2)),
            (p + "attn_k.weight", [e, kv_dim], T_F16, f16_weights(rng, e * kv_dim, 0.2)),
            (p + "attn_v.weight", [e, kv_dim], T_F16, f16_weights(rng, e * kv_dim, 0.2)),
            (p + "attn_output.weight", [e, e], T_F16, f16_weights(rng, e * e, 0.2)),
            (p + "ffn_norm.weight", [e], T_F32, ones),
            (p + "ffn_gate.weight", [e, ff], T_F16, f16_weights(rng, e * ff, 0.2)),
            (p + "ffn_up.weight", [e, ff], T_F16, f16_weights(rng, e * ff, 0.2)),
            (p + "ffn_down.weight", [ff, e], T_F16, f16_weights(rng, ff * e, 0.2)),
        ]
    out += [("output_norm.weight", [e], T_F32, ones),
            ("output.weight", [e, n_vocab], T_F16, f16_weights(rng, e * n_vocab, 0.5))]
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=0, help="default: --heads")
    p.add_argument("--ff", type=int, default=128)
    p.add_argument("--words", type=int, default=61)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    if a.embd % a.heads or (a.embd // a.heads) % 2 or a.heads % a.kv_heads:
        sys.exit("make_gguf: --embd must split into --heads heads of an even size, "
                 "--heads into --kv-heads groups")
    rng = random.Random(a.seed)
    tokens, scores, types = vocabulary(a.words)
    meta = [
        kv("general.architecture", STRING, "llama"),
        kv("general.name", STRING, "fbcount-test-llama"),
        kv("general.alignment", U32, ALIGNMENT),
        kv("llama.context_length", U32, a.ctx),
        kv("llama.embedding_length", U32, a.embd),
        kv("llama.block_count", U32, a.layers),
        kv("llama.feed_forward_length", U32, a.ff),
        kv("llama.attention.head_count", U32, a.heads),
        kv("llama.attention.head_count_kv", U32, a.kv_heads),
        kv("llama.rope.dimension_count", U32, a.embd // a.heads),
        kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        kv("llama.vocab_size", U32, len(tokens)),
        kv("tokenizer.ggml.model", STRING, "llama"),
        kv("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        kv("tokenizer.ggml.scores", ARRAY, (F32, scores)),
        kv("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        kv("tokenizer.ggml.unknown_token_id", U32, 0),
        kv("tokenizer.ggml.bos_token_id", U32, 1),
        kv("tokenizer.ggml.eos_token_id", U32, 2),
        kv("tokenizer.ggml.add_bos_token", BOOL, True),
        kv("tokenizer.ggml.add_eos_token", BOOL, False),
    ]
    ts = tensors(a, len(tokens), rng)
    infos, offset = [], 0
    for name, dims, ttype, data in ts:
        infos.append(gstr(name) + struct.pack("<I", len(dims)) +
                     struct.pack("<%dQ" % len(dims), *dims) + struct.pack("<IQ", ttype, offset))
        offset += (len(data) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    head = b"GGUF" + struct.pack("<IQQ", GGUF_VERSION, len(ts), len(meta)) + b"".join(meta) + \
        b"".join(infos)
    with open(a.out, "wb") as f:
        f.write(head + b"\0" * (-len(head) % ALIGNMENT))
        for _, _, _, data in ts:
            f.write(data + b"\0" * (-len(data) % ALIGNMENT))


if __name__ == "__main__":
    main()
