#!/usr/bin/env python3
"""Trajectory fixtures for tests/it/trajectory.rs (like llm.c's test_gpt2): 20 training steps of the tiny
parity checkpoints in PyTorch, exactly as the reference trainer (CS224N A5 trainer.py) runs them.

    python3 scripts/trajectory.py      # needs torch, safetensors, numpy; writes tests/fixtures/trajectory/

Per variant it starts from tests/fixtures/parity/<variant>.safetensors (vocab 20, block 16, 2 layers,
2 heads, width 16, deliberately non-default weights) with dropout 0 and does what trainer.py does per
batch: forward, zero_grad, backward, clip_grad_norm_(1.0), AdamW.step() with betas (0.9, 0.95),
eps 1e-8 and the reference's name-based groups (weight decay 0.1 unless the name contains "bias"
or "LayerNorm.weight": the GPT names its LayerNorms ln1/ln2/ln_f, so their weights ARE decayed, as
are the synthesizer's w2 and b2), then counts (y >= 0).sum() tokens (every position, PAD included)
and sets the next learning rate: linear warmup, then the cosine over (warmup, final), floored at
0.1x and not clamped at progress 1. The optimizer starts at config.learning_rate, so step 0 runs at
the full rate (not at lr_at(0) = 0).

The batches (B 2, T from 9 to 15 varying per step, about a fifth of the targets PAD = 0, one row
with a padded tail) and the schedule (warmup over the first ~2.5 steps' tokens, final_tokens ~15
steps' tokens, so the 20 steps cross the warmup, the cosine, the 0.1 floor and the rise past
progress 1) are in <variant>.json with, per step, the loss (before that step's update), the learning
rate that step used and the gradient norm before clipping; the weights after the 20 steps are
<variant>_final.safetensors (float32).

The fixture is computed in float32, as our trainer computes. The same run in float64 is in the JSON
too (`float64`), with how far float32 alone moves PyTorch from it (`f32_vs_f64`, measured as
tests/it/trajectory.rs measures us): that is the noise floor our float32 run cannot beat either.
"""

import json
import math
import os
import sys

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import GPT  # noqa: E402  (our PyTorch definition of the A5 GPT)

HERE = os.path.dirname(os.path.abspath(__file__))
PARITY = os.path.join(HERE, "..", "tests", "fixtures", "parity")
OUT = os.path.join(HERE, "..", "tests", "fixtures", "trajectory")

STEPS = 20
B = 2
LEARNING_RATE = 6e-3  # run.py's pretraining rate
BETAS = (0.9, 0.95)
WEIGHT_DECAY = 0.1
GRAD_NORM_CLIP = 1.0


def batches(vocab, block):
    """STEPS deterministic (x, y) batches of B rows; T varies (9..15 < block, as the synthesizer's
    w2 has block - 1 columns), so positions, w2 and the mask are sliced differently per step."""
    rng = np.random.RandomState(2024)
    out = []
    for s in range(STEPS):
        t = 9 + (3 * s) % 7
        assert t <= block - 1
        x = rng.randint(0, vocab, size=(B, t))
        y = rng.randint(1, vocab, size=(B, t))
        y[rng.rand(B, t) < 0.15] = 0  # scattered PAD targets
        y[1, t - 1 - s % 3:] = 0  # a padded tail, as the datasets pad short examples
        out.append((x.tolist(), y.tolist()))
    return out


def lr_after(tokens, warmup, final):
    """trainer.py's rate once `tokens` have been counted (lr_decay on)."""
    if tokens < warmup:
        mult = float(tokens) / float(max(1, warmup))
    else:
        progress = float(tokens - warmup) / float(max(1, final - warmup))
        mult = max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))
    return LEARNING_RATE * mult


def optimizer(model):
    """trainer.py's optimizer: torch.optim.AdamW over the same two groups by name. Also returns the
    names left without decay, which the test compares with ours."""
    no_decay = ["bias", "LayerNorm.weight"]
    named = list(model.named_parameters())
    skip = lambda n: any(nd in n for nd in no_decay)  # noqa: E731
    groups = [
        {"params": [p for n, p in named if not skip(n)], "weight_decay": WEIGHT_DECAY},
        {"params": [p for n, p in named if skip(n)], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=LEARNING_RATE, betas=BETAS)  # eps 1e-8 by default
    return opt, [n for n, _ in named if skip(n)]


def train(variant, dtype, data, warmup, final):
    path = os.path.join(PARITY, f"{variant}.safetensors")
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    sizes = {k: int(meta[k]) for k in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")}
    model = GPT(variant, **sizes, pdrop=0.0).to(dtype)
    model.load_state_dict(load_file(path), strict=True)
    model.train()  # as trainer.py; dropout is 0, so it is the same as eval
    opt, nodecay = optimizer(model)
    tokens = 0
    steps = []
    for x, y in data:
        x = torch.tensor(x, dtype=torch.long)
        y = torch.tensor(y, dtype=torch.long)
        lr = opt.param_groups[0]["lr"]
        _, loss = model(x, y)
        model.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_NORM_CLIP)
        opt.step()
        tokens += int((y >= 0).sum())  # every position, PAD included
        for g in opt.param_groups:
            g["lr"] = lr_after(tokens, warmup, final)
        steps.append({"loss": loss.item(), "lr": lr, "grad_norm": norm.item(), "tokens": tokens})
    weights = {n: p.detach().clone() for n, p in model.named_parameters()}
    return sizes, steps, weights, nodecay


def weight_err(ours, ref):
    """tests/it/trajectory.rs's measure: max |a - b| / max(|b|, rms(b)) over one tensor."""
    a, b = ours.double().reshape(-1).numpy(), ref.double().reshape(-1).numpy()
    floor = max(float(np.sqrt(np.mean(b * b))), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), floor)))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)  # one summation order, so the fixture regenerates bit for bit
    os.makedirs(OUT, exist_ok=True)
    for variant in ("vanilla", "synthesizer"):
        with safe_open(os.path.join(PARITY, f"{variant}.safetensors"), framework="pt") as f:
            meta = f.metadata()
        data = batches(int(meta["vocab_size"]), int(meta["block_size"]))
        per_step = [B * len(x[0]) for x, _ in data]
        # The warmup ends halfway through the third batch's tokens, so steps 1 and 2 run on the
        # ramp and step 3 near the peak; progress reaches 1 after 15 batches, and the last steps
        # see the 0.1 floor and then the unclamped cosine rising again.
        warmup = per_step[0] + per_step[1] + per_step[2] // 2
        final = sum(per_step[:15])
        sizes, s32, w32, nodecay = train(variant, torch.float32, data, warmup, final)
        _, s64, w64, _ = train(variant, torch.float64, data, warmup, final)
        assert [s["lr"] for s in s32] == [s["lr"] for s in s64]

        rel = lambda a, b: abs(a - b) / abs(b)  # noqa: E731
        floor = {
            "loss": max(rel(a["loss"], b["loss"]) for a, b in zip(s32, s64)),
            "grad_norm": max(rel(a["grad_norm"], b["grad_norm"]) for a, b in zip(s32, s64)),
            "weights": {n: weight_err(w32[n], w64[n]) for n in w32},
        }
        worst = max(floor["weights"].items(), key=lambda kv: kv[1])
        print(f"{variant}: losses {s32[0]['loss']:.6f} -> {s32[-1]['loss']:.6f}; lr "
              + " ".join(f"{s['lr']:.2e}" for s in s32))
        print(f"  torch f32 vs f64: loss {floor['loss']:.1e}, grad norm {floor['grad_norm']:.1e}, "
              f"worst weight {worst[0]} {worst[1]:.1e}")
        others = {n: e for n, e in floor["weights"].items() if not n.endswith("attn.key.bias")}
        print(f"  worst weight other than key.bias: {max(others.values()):.1e}")

        out = {
            "variant": variant,
            "config": sizes,
            "torch": torch.__version__,
            "dtype": "float32",
            "train": {
                "learning_rate": LEARNING_RATE, "betas": list(BETAS), "weight_decay": WEIGHT_DECAY,
                "grad_norm_clip": GRAD_NORM_CLIP, "lr_decay": True,
                "warmup_tokens": warmup, "final_tokens": final, "no_decay": nodecay,
            },
            "batches": [{"x": x, "y": y} for x, y in data],
            "steps": s32,
            "float64": {"steps": s64},
            "f32_vs_f64": floor,
        }
        dest = os.path.join(OUT, f"{variant}.json")
        with open(dest, "w") as f:
            json.dump(out, f, separators=(",", ":"))
        wdest = os.path.join(OUT, f"{variant}_final.safetensors")
        save_file({n: w.contiguous() for n, w in w32.items()}, wdest,
                  metadata={"variant": variant})  # one key: safetensors orders several at random
        for p in (dest, wdest):
            print(f"  wrote {os.path.relpath(p)} ({os.path.getsize(p)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
