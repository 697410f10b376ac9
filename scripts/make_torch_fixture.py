#!/usr/bin/env python3
"""Fixtures for tests/it/torch_params/: `.params` files written by PyTorch itself, as the course's code
writes them (`torch.save(model.state_dict(), path)`), plus the logits and greedy answers PyTorch
computes with them, and a set of broken files for the error messages.

Run by hand where PyTorch is installed (pip install torch numpy safetensors); CI only reads the
committed files:

    python3 scripts/make_torch_fixture.py      # writes tests/fixtures/torch/

The models are scripts/parity.py's GPT (our PyTorch definition of the A5 model, whose state_dict
names are the course's): vocab 20, block 16, 2 layers, 2 heads, width 16, every parameter moved
away from its initial value so that biases, LayerNorm gains, positions and w2 all matter. The
expected logits are computed in float64 from the float32 values that were saved.
"""

import json
import os
import sys
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from parity import GPT  # noqa: E402  (our definition of the model)

OUT = os.path.join(HERE, "..", "tests", "fixtures", "torch")
SIZES = dict(vocab_size=20, block_size=16, n_layer=2, n_head=2, n_embd=16)
# The broken files use an even smaller model: nothing in them is run.
SMALL = dict(vocab_size=20, block_size=8, n_layer=1, n_head=2, n_embd=8)


def perturbed(variant, sizes, seed):
    """A float32 GPT whose every parameter is random (N(0, 0.3), LayerNorm gains around 1)."""
    torch.manual_seed(seed)
    model = GPT(variant, **sizes)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln1.weight") or name.endswith("ln2.weight") or name == "ln_f.weight":
                p.copy_(1.0 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))
    return model.eval()


def max_context(variant, block):
    # The synthesizer's w2 has block - 1 columns, so it sees at most block - 1 positions.
    return block if variant == "vanilla" else block - 1


@torch.no_grad()
def greedy(model, ids, steps, context):
    """argmax decoding, the context cropped to the last `context` positions; also the smallest gap
    between the best and second-best logit (a near tie could flip between f32 and f64)."""
    x = torch.tensor([ids], dtype=torch.long)
    gap = float("inf")
    for _ in range(steps):
        last = model(x[:, -context:])[0][0, -1]
        top = torch.topk(last, 2).values
        gap = min(gap, float(top[0] - top[1]))
        x = torch.cat([x, last.argmax().view(1, 1)], dim=1)
    return x[0].tolist()[len(ids):], gap


def save(obj, name):
    path = os.path.join(OUT, name)
    torch.save(obj, path)
    return path


def good(variant, seed):
    model = perturbed(variant, SIZES, seed)
    path = save(model.state_dict(), f"{variant}.params")
    # The reference answer: the saved float32 values, computed in float64.
    ref = GPT(variant, **SIZES).to(torch.float64).eval()
    ref.load_state_dict(model.state_dict(), strict=True)
    g = torch.Generator().manual_seed(seed + 1)
    b, t = 2, 13
    x = torch.randint(0, SIZES["vocab_size"], (b, t), generator=g)
    with torch.no_grad():
        logits = ref(x)[0]
    prompt = [2, 7, 1, 12, 5]
    steps = 20  # 25 positions in all: past the block, so the context crop is exercised
    answer, gap = greedy(ref, prompt, steps, max_context(variant, SIZES["block_size"]))
    assert gap > 1e-3, f"{variant}: a near tie ({gap:.2e}) in greedy decoding; pick another seed"
    out = {
        "variant": variant,
        "config": SIZES,
        "torch": torch.__version__,
        "b": b,
        "t": t,
        "x": x.reshape(-1).tolist(),
        "logits": [float(f"{v:.12g}") for v in logits.reshape(-1).tolist()],
        "prompt": prompt,
        "steps": steps,
        "greedy": answer,
        "greedy_min_gap": gap,
    }
    with open(os.path.join(OUT, f"{variant}_expected.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"{variant}: {os.path.getsize(path)} bytes, greedy {answer} (smallest top-2 gap {gap:.3f})")


def broken():
    sd = perturbed("vanilla", SMALL, 7).state_dict()

    def variant_of(**changes):
        d = dict(sd)
        for k, v in changes.items():
            if v is None:
                del d[k]
            else:
                d[k] = v
        return d

    # A training checkpoint wrapping the state_dict, and a whole pickled model: both common.
    save({"epoch": 3, "model": sd}, "bad_wrapped.params")
    save(perturbed("vanilla", SMALL, 7), "bad_whole_model.params")
    save(perturbed("vanilla", SMALL, 7).half().state_dict(), "bad_half.params")
    save(variant_of(**{"blocks.0.attn.proj.weight": torch.zeros(8, 4)}), "bad_shape.params")
    d = variant_of(**{"ln_f.bias": None})
    d["blocks.0.attn.rope.freqs"] = torch.zeros(4)
    save(d, "bad_names.params")
    # A transposed view: torch.save keeps its strides (an ordinary state_dict never has one).
    save(variant_of(**{"blocks.0.attn.proj.weight": sd["blocks.0.attn.proj.weight"].t()}),
         "bad_strided.params")
    nan = sd["head.weight"].clone()
    nan[3, 5] = float("nan")
    save(variant_of(**{"head.weight": nan}), "bad_nan.params")
    # Two tensors sharing one storage at different offsets: must load (ln_f = 0, 0.5, ..., 7.5).
    buf = torch.arange(16, dtype=torch.float32) * 0.5
    save(variant_of(**{"ln_f.weight": buf[:8], "ln_f.bias": buf[8:]}), "views.params")
    # A zip that torch did not write.
    with zipfile.ZipFile(os.path.join(OUT, "bad_no_pickle.params"), "w") as z:
        z.writestr("model/version", "3\n")
        z.writestr("model/data/0", b"\0" * 16)


def main():
    os.makedirs(OUT, exist_ok=True)
    good("vanilla", 11)
    good("synthesizer", 12)
    broken()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
