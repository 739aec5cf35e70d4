"""A tiny GGUF with random weights that keeps a real model's tokenizer and chat template.

The GPU check (scripts/gpu-check.sh) carries a model to a machine that takes at most
64 MiB a call, so it cannot carry the default model (491 MB). What it checks does not
need good answers: that the CUDA backend loads, that layers offload, that a forced call
comes out valid (the grammar holds any model to it), and how fast tokens come against
llama-server's CUDA build on the same file. So this writes a Qwen 2 model of the same
shape family (`qwen2`, tied embeddings) with two small layers and random weights, and
copies the tokenizer and chat template from the real model: the prompt, the tokens and
the tool-call dialect are the default model's.

    python3 scripts/tiny_gguf.py SOURCE.gguf OUT.gguf

Needs the `gguf` and `numpy` packages (scripts/gpu-check.sh installs them in a venv).
The output is about 17 MB: the vocabulary (151,936 token embeddings, Q8_0, and the
token strings and merges) is most of it.
"""

import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
from gguf.quants import quantize

EMBED = 64
HEADS = 1
KV_HEADS = 1
FEED_FORWARD = 128
LAYERS = 2
CONTEXT = 4096
SEED = 20261129

# What the tiny model keeps of the real one: how text becomes tokens, and the prompt.
KEPT_PREFIXES = ("tokenizer.",)


def copy_field(writer, field):
    """Writes a reader's field again, with its own value type."""
    main = field.types[0]
    if main == GGUFValueType.ARRAY:
        writer.add_key_value(field.name, field.contents(), main, sub_type=field.types[-1])
    else:
        writer.add_key_value(field.name, field.contents(), main)


def random_tensor(rng, *shape):
    """Small random weights, as f32, shaped as numpy (rows last is GGUF's first dim)."""
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def write(source_path, out_path):
    source = GGUFReader(source_path)
    vocab = len(source.fields["tokenizer.ggml.tokens"].data)
    writer = GGUFWriter(out_path, "qwen2")
    writer.add_name("toolbridge tiny random qwen2 (tokenizer of the default model)")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(int(GGMLQuantizationType.Q8_0))
    for name, field in source.fields.items():
        if name.startswith(KEPT_PREFIXES):
            copy_field(writer, field)

    rng = np.random.default_rng(SEED)
    head = EMBED // HEADS
    kv = head * KV_HEADS
    embeddings = quantize(random_tensor(rng, vocab, EMBED), GGMLQuantizationType.Q8_0)
    writer.add_tensor(
        "token_embd.weight", embeddings, raw_dtype=GGMLQuantizationType.Q8_0
    )
    writer.add_tensor("output_norm.weight", np.ones(EMBED, dtype=np.float32))
    for layer in range(LAYERS):
        blk = f"blk.{layer}."
        tensors = {
            "attn_norm.weight": np.ones(EMBED, dtype=np.float32),
            "attn_q.weight": random_tensor(rng, EMBED, EMBED),
            "attn_q.bias": np.zeros(EMBED, dtype=np.float32),
            "attn_k.weight": random_tensor(rng, kv, EMBED),
            "attn_k.bias": np.zeros(kv, dtype=np.float32),
            "attn_v.weight": random_tensor(rng, kv, EMBED),
            "attn_v.bias": np.zeros(kv, dtype=np.float32),
            "attn_output.weight": random_tensor(rng, EMBED, EMBED),
            "ffn_norm.weight": np.ones(EMBED, dtype=np.float32),
            "ffn_gate.weight": random_tensor(rng, FEED_FORWARD, EMBED),
            "ffn_up.weight": random_tensor(rng, FEED_FORWARD, EMBED),
            "ffn_down.weight": random_tensor(rng, EMBED, FEED_FORWARD),
        }
        for name, data in tensors.items():
            writer.add_tensor(blk + name, data)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: tiny_gguf.py SOURCE.gguf OUT.gguf")
    write(sys.argv[1], sys.argv[2])
