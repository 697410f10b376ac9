#!/usr/bin/env python3
"""Parity fixtures for tests/it/parity.rs: run a checkpoint written by attnlab through a PyTorch GPT of
the same definition and record logits, loss and every parameter gradient on a fixed batch.

Run by hand where PyTorch is installed (pip install torch safetensors numpy):

    cargo test --test it -- --ignored parity::write_parity_inputs   # checkpoints + batch.json
    python3 scripts/parity.py                                     # <variant>_torch.json

It also loads any checkpoint the CLI writes and decodes greedily, to compare with `attnlab evaluate`:

    python3 scripts/parity.py --checkpoint vanilla.finetune.params --eval birth_dev.tsv --limit 20

The model below is our own definition of the CS224N A5 GPT (pre-LN blocks, vanilla causal or
synthesizer attention, 4x GELU MLP, bias-free head, cross-entropy ignoring PAD = 0). The reference
is computed in float64 so the fixture is the exact answer up to ~1e-15; the float32 PyTorch run is
printed beside it to show how far f32 rounding alone moves things.
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "fixtures", "parity")


class CausalSelfAttention(nn.Module):
    """softmax(q k^T / sqrt(HS)) v per head, future masked with -1e10, then proj."""

    def __init__(self, c, n_head, block, pdrop=0.0):
        super().__init__()
        self.n_head = n_head
        self.attn_drop = nn.Dropout(pdrop)
        self.resid_drop = nn.Dropout(pdrop)
        self.key = nn.Linear(c, c)
        self.query = nn.Linear(c, c)
        self.value = nn.Linear(c, c)
        self.proj = nn.Linear(c, c)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def heads(self, z, b, t, c):
        # (B, T, C) -> (B, NH, T, HS)
        return z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (self.heads(f(x), b, t, c) for f in (self.query, self.key, self.value))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, -1e10)
        att = self.attn_drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class SynthesizerAttention(nn.Module):
    """scores = relu(w1 x) (per head) @ w2[:, :T] + b2[:T]; no keys, queries or 1/sqrt(d)."""

    def __init__(self, c, n_head, block, pdrop=0.0):
        super().__init__()
        self.n_head = n_head
        self.attn_drop = nn.Dropout(pdrop)
        self.resid_drop = nn.Dropout(pdrop)
        self.w1 = nn.Linear(c, c)
        self.w2 = nn.Parameter(torch.zeros(c // n_head, block - 1))
        self.b2 = nn.Parameter(torch.zeros(block - 1))
        self.value = nn.Linear(c, c)
        self.proj = nn.Linear(c, c)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        b, t, c = x.shape
        hs = c // self.n_head
        a = F.relu(self.w1(x)).view(b, t, self.n_head, hs).transpose(1, 2)  # (B, NH, T, HS)
        att = a @ self.w2[:, :t] + self.b2[:t]  # (B, NH, T, T)
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, -1e10)
        att = self.attn_drop(F.softmax(att, dim=-1))
        v = self.value(x).view(b, t, self.n_head, hs).transpose(1, 2)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, c, n_head, block, attn, pdrop=0.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(c)
        self.ln2 = nn.LayerNorm(c)
        self.attn = attn(c, n_head, block, pdrop)
        self.mlp = nn.Sequential(
            nn.Linear(c, 4 * c), nn.GELU(), nn.Linear(4 * c, c), nn.Dropout(pdrop)
        )

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, variant, vocab_size, block_size, n_layer, n_head, n_embd, pdrop=0.0):
        super().__init__()
        attn = {"vanilla": CausalSelfAttention, "synthesizer": SynthesizerAttention}[variant]
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, block_size, n_embd))
        self.drop = nn.Dropout(pdrop)
        self.blocks = nn.Sequential(
            *[Block(n_embd, n_head, block_size, attn, pdrop) for _ in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :t, :])
        logits = self.head(self.ln_f(self.blocks(x)))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=0)
        return logits, loss


def run(variant, dtype):
    path = os.path.join(FIXTURES, f"{variant}.safetensors")
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    assert meta["variant"] == variant, f"{path} holds a {meta['variant']} model"
    sizes = {k: int(meta[k]) for k in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")}
    model = GPT(variant, **sizes).to(dtype)
    model.load_state_dict(load_file(path), strict=True)  # copies and casts into `dtype`
    model.eval()
    with open(os.path.join(FIXTURES, "batch.json")) as f:
        batch = json.load(f)
    b, t = batch["b"], batch["t"]
    x = torch.tensor(batch["x"], dtype=torch.long).view(b, t)
    y = torch.tensor(batch["y"], dtype=torch.long).view(b, t)
    logits, loss = model(x, y)
    loss.backward()
    grads = {n: p.grad.detach().reshape(-1).numpy().astype(np.float64) for n, p in model.named_parameters()}
    return sizes, logits.detach().reshape(-1).numpy().astype(np.float64), loss.item(), grads


def rms(v):
    return float(np.sqrt(np.mean(v * v)))


def rel(a, b, scale=0.0):
    """Largest |a - b| / max(|b|, rms(b), scale): the measure tests/it/parity.rs uses."""
    floor = max(rms(b), scale, np.finfo(np.float64).tiny)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), floor)))


def load_checkpoint(path):
    """A checkpoint written by `attnlab pretrain|finetune` as a PyTorch model, plus its vocabulary."""
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    sizes = {k: int(meta[k]) for k in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")}
    model = GPT(meta["variant"], **sizes).to(torch.float64)
    model.load_state_dict(load_file(path), strict=True)
    model.eval()
    return model, meta["vocab"], sizes["block_size"]


@torch.no_grad()
def greedy(model, ids, steps, block):
    """The reference's sample(..., sample=False): argmax, context cropped to the block."""
    x = torch.tensor([ids], dtype=torch.long)
    for _ in range(steps):
        logits, _ = model(x[:, -block:])
        x = torch.cat([x, logits[:, -1, :].argmax(-1, keepdim=True)], dim=1)
    return x[0].tolist()


def predict(path, tsv, limit):
    """Print one prediction per question of `tsv` (first `limit`), as `attnlab evaluate` writes them."""
    model, itos, block = load_checkpoint(path)
    stoi = {c: i for i, c in enumerate(itos)}
    with open(tsv, encoding="utf-8") as f:
        questions = [line.split("\t")[0] for line in f][:limit]
    for q in questions:
        out = "".join(itos[i] for i in greedy(model, [stoi[c] for c in q + "\u2047"], 32, block))
        print(out.split("\u2047")[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="*", default=["vanilla", "synthesizer"])
    ap.add_argument("--checkpoint", help="instead: load this attnlab checkpoint in PyTorch and print "
                    "greedy predictions for --eval's questions (compare with attnlab evaluate's file)")
    ap.add_argument("--eval", help="TSV of questions for --checkpoint")
    ap.add_argument("--limit", type=int, default=10**9, help="only the first N questions")
    args = ap.parse_args()
    if args.checkpoint:
        if not args.eval:
            ap.error("--checkpoint needs --eval TSV")
        return predict(args.checkpoint, args.eval, args.limit)
    torch.manual_seed(0)
    for variant in args.variants:
        sizes, logits, loss, grads = run(variant, torch.float64)
        _, logits32, loss32, grads32 = run(variant, torch.float32)
        # As in tests/it/parity.rs: exactly-zero gradients (vanilla key.bias) are judged against 1e-2 of
        # the model's gradient RMS, since their f32 value is pure rounding noise.
        scale = 1e-2 * rms(np.concatenate(list(grads.values())))
        worst = max(rel(grads32[n], grads[n], scale) for n in grads)
        print(f"{variant}: loss {loss:.10f}; torch f32 vs f64: loss {abs(loss32 - loss) / abs(loss):.1e}, "
              f"logits {rel(logits32, logits):.1e}, worst gradient {worst:.1e}")
        out = {
            "variant": variant,
            "config": sizes,
            "dtype": "float64",
            "torch": torch.__version__,
            "loss": loss,
            "logits": [float(f"{v:.12g}") for v in logits],
            "grads": {n: [float(f"{v:.12g}") for v in g] for n, g in grads.items()},
        }
        dest = os.path.join(FIXTURES, f"{variant}_torch.json")
        with open(dest, "w") as f:
            json.dump(out, f, separators=(",", ":"))
        print(f"  wrote {os.path.relpath(dest)} ({os.path.getsize(dest)} bytes, {len(grads)} gradients)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
