#!/usr/bin/env python3
"""The PyTorch CPU side of scripts/bench_peers.sh: the same GPT (scripts/parity.py's definition, with
dropout 0.1), AdamW with the reference's betas, weight decay groups and clipping, on a fixed batch;
or matmul GFLOP/s at the GPT's shapes. Prints one line per measurement, `name<TAB>value`.

    python3 scripts/bench_peers.py step  --size tiny|assignment --variant vanilla --rows 8 --threads 2
    python3 scripts/bench_peers.py matmul --rows 16256 --threads 2
    python3 scripts/bench_peers.py decode --tsv birth_dev.tsv --questions 100 --threads 2
    python3 scripts/bench_peers.py decode --tsv birth_dev.tsv --checkpoint web/models/course-vanilla.safetensors
    python3 scripts/bench_peers.py step --size assignment --rows 32 --device cuda   (scripts/gpu-check.sh)

decode: the reference's evaluation loop (run.py: one question at a time, utils.sample: 32 greedy
steps, each a full forward over the context cropped to the block) with a random full-size vanilla
model (or --checkpoint: a model attnlab wrote, in f32), on the first --questions questions; prints
the seconds for those and, scaled, for 500.

--device cuda runs the same work on the GPU in plain f32 (TF32 off, PyTorch's default for matmul),
synchronizing before each clock read; it exits 3 with a message when CUDA is not available.
"""

import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parity import GPT  # noqa: E402

T = 127
SIZES = {"tiny": (65, 2, 4, 64), "assignment": (256, 4, 8, 256)}


def sync(args):
    """Wait for the GPU's queued work, so the clock reads finished work (a no-op on the CPU)."""
    if args.device == "cuda":
        torch.cuda.synchronize()


def step(args):
    vocab, n_layer, n_head, n_embd = SIZES[args.size]
    torch.manual_seed(1)
    model = GPT(args.variant, vocab, 128, n_layer, n_head, n_embd, pdrop=0.1).to(args.device)
    model.train()
    decay = [p for n, p in model.named_parameters() if "bias" not in n and "LayerNorm.weight" not in n]
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm.weight" in n]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=6e-3,
        betas=(0.9, 0.95),
    )
    x = (torch.arange(args.rows * T) % 63 + 2).view(args.rows, T).to(args.device)

    def one():
        model.zero_grad(set_to_none=True)
        _, loss = model(x, x)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    one()
    sync(args)
    t0 = time.perf_counter()
    for _ in range(args.repeats):
        one()
    sync(args)
    dt = (time.perf_counter() - t0) / args.repeats
    print(f"step {args.size} {args.variant} {args.rows}x{T}\t{dt * 1e3:.1f}")


def matmul(args):
    m, b = args.rows, args.rows // T
    dev = args.device
    cases = []
    for k, n in ((256, 768), (256, 1024), (1024, 256)):
        x, w = torch.rand(m, k, device=dev) - 0.5, torch.rand(n, k, device=dev) - 0.5
        cases.append((f"x·Wᵀ {m}x{k}x{n}", 2.0 * m * k * n, lambda x=x, w=w: x @ w.t()))
    q = torch.rand(b, 8, T, 32, device=dev) - 0.5
    att = torch.rand(b, 8, T, T, device=dev)
    z = b * 8
    cases.append((f"q·kᵀ {z}x({T}x32x{T})", 2.0 * z * T * T * 32, lambda: q @ q.transpose(-2, -1)))
    cases.append((f"att·v {z}x({T}x{T}x32)", 2.0 * z * T * T * 32, lambda: att @ q))
    for name, flops, f in cases:
        f()
        sync(args)
        t0 = time.perf_counter()
        for _ in range(args.repeats):
            f()
        sync(args)
        dt = (time.perf_counter() - t0) / args.repeats
        print(f"{name}\t{flops / dt / 1e9:.1f}")


@torch.no_grad()
def decode(args):
    vocab, n_layer, n_head, n_embd = SIZES["assignment"]
    rows = [line.split("\t")[0] for line in open(args.tsv, encoding="utf-8").read().split("\n") if line]
    chars = sorted(set("".join(rows)) | {"\u2047"})
    stoi = {c: i + 2 for i, c in enumerate(chars)}
    torch.manual_seed(1)
    if args.checkpoint:
        from parity import load_checkpoint  # noqa: E402

        model, itos, _ = load_checkpoint(args.checkpoint)
        model = model.to(torch.float32)
        stoi = {c: i for i, c in enumerate(itos)}
    else:
        model = GPT("vanilla", max(vocab, len(stoi) + 2), 128, n_layer, n_head, n_embd)
    model.eval()
    qs = rows[: args.questions]
    t0 = time.perf_counter()
    for q in qs:
        x = torch.tensor([[stoi[c] for c in q + "\u2047"]], dtype=torch.long)
        for _ in range(32):
            logits, _ = model(x[:, -128:])
            x = torch.cat([x, logits[:, -1, :].argmax(-1, keepdim=True)], dim=1)
    dt = time.perf_counter() - t0
    print(f"decode {len(qs)} questions (s)\t{dt:.2f}")
    print(f"decode 500 questions, scaled (s)\t{dt * 500 / len(qs):.2f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["step", "matmul", "decode"])
    p.add_argument("--tsv", default="../shared/data/cs224n-a5/birth_dev.tsv")
    p.add_argument("--questions", type=int, default=100)
    p.add_argument("--checkpoint", help="decode: a checkpoint attnlab wrote instead of a random model")
    p.add_argument("--size", default="tiny", choices=list(SIZES))
    p.add_argument("--variant", default="vanilla", choices=["vanilla", "synthesizer"])
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = p.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"bench_peers: CUDA is not available to torch {torch.__version__}; use --device cpu", file=sys.stderr)
        sys.exit(3)
    torch.set_num_threads(args.threads)
    if args.what == "decode":
        decode(args)
        return
    with torch.no_grad() if args.what == "matmul" else torch.enable_grad():
        step(args) if args.what == "step" else matmul(args)


if __name__ == "__main__":
    main()
