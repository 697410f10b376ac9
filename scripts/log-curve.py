#!/usr/bin/env python3
"""The curves of a pretraining log: loss per epoch and the probe's recall, as a TSV and an SVG.

Usage: scripts/log-curve.py LOG OUT_PREFIX
Reads the log `attnlab pretrain` writes (through scripts/long-run.sh or not): lines
`epoch E/N: loss L, ...` and `epoch E: recall P% (K of M people ...)`. A run that was restarted
repeats the epochs after its last saved state; the last line for an epoch wins (it is the one the
run continued from). Writes OUT_PREFIX.tsv (epoch, loss, recall %, recalled, probed) and
OUT_PREFIX.svg (both curves over the epochs; Python's standard library only).
"""
import math
import re
import sys
from pathlib import Path

EPOCH = re.compile(r"^epoch (\d+)/(\d+): loss ([0-9.]+)")
RECALL = re.compile(r"^epoch (\d+): recall ([0-9.]+)% \((\d+) of (\d+) ")


def read(log):
    loss, recall, total = {}, {}, None
    for line in Path(log).read_text(errors="replace").splitlines():
        if m := EPOCH.match(line):
            loss[int(m[1])] = float(m[3])
            total = int(m[2])
        elif m := RECALL.match(line):
            recall[int(m[1])] = (float(m[2]), int(m[3]), int(m[4]))
    return loss, recall, total


def write_tsv(path, loss, recall):
    rows = ["epoch\tloss\trecall_percent\trecalled\tprobed"]
    for e in sorted(set(loss) | set(recall)):
        r = recall.get(e)
        rows.append("\t".join([str(e), f"{loss[e]:.5f}" if e in loss else "",
                               f"{r[0]:.1f}" if r else "", str(r[1]) if r else "", str(r[2]) if r else ""]))
    Path(path).write_text("\n".join(rows) + "\n")


def write_svg(path, loss, recall, total, title):
    w, h, left, right, top, bottom = 760, 360, 56, 56, 34, 44
    pw, ph = w - left - right, h - top - bottom
    last = max([total or 0, *loss, *recall, 1])
    lmax = math.ceil(max(loss.values(), default=1.0) * 2) / 2
    x = lambda e: left + pw * e / last
    yl = lambda v: top + ph * (1 - v / lmax)
    yr = lambda p: top + ph * (1 - p / 100)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">{title}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#ccc"/>']
    step = 50 if last <= 700 else 100
    for e in range(0, last + 1, step):
        out.append(f'<line x1="{x(e):.1f}" y1="{top + ph}" x2="{x(e):.1f}" y2="{top + ph + 4}" stroke="#888"/>')
        out.append(f'<text x="{x(e):.1f}" y="{top + ph + 17}" text-anchor="middle">{e}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 8}" text-anchor="middle">pretraining epoch</text>')
    for i in range(int(lmax * 2) + 1):
        v = i / 2
        out.append(f'<text x="{left - 6}" y="{yl(v) + 4:.1f}" text-anchor="end" fill="#1f5fbf">{v:.1f}</text>')
    for i in range(5):
        p = 25 * i
        out.append(f'<text x="{left + pw + 6}" y="{yr(p) + 4:.1f}" fill="#c0392b">{p}%</text>')
    pts = " ".join(f"{x(e):.1f},{yl(v):.1f}" for e, v in sorted(loss.items()))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>')
    pts = " ".join(f"{x(e):.1f},{yr(r[0]):.1f}" for e, r in sorted(recall.items()))
    out.append(f'<polyline points="{pts}" fill="none" stroke="#c0392b" stroke-width="1.5"/>')
    for e, r in sorted(recall.items()):
        out.append(f'<circle cx="{x(e):.1f}" cy="{yr(r[0]):.1f}" r="2.2" fill="#c0392b"/>')
    out.append(
        f'<text x="{left + 8}" y="{top + 16}" fill="#1f5fbf">'
        "span-corruption loss (nats per character, left axis)</text>"
    )
    out.append(
        f'<text x="{left + 8}" y="{top + 32}" fill="#c0392b">'
        "probe recall of the sampled dev people (right axis)</text>"
    )
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    log, prefix = sys.argv[1], sys.argv[2]
    loss, recall, total = read(log)
    if not loss:
        sys.exit(f"{log}: no 'epoch E/N: loss L' line: is it a pretraining log?")
    write_tsv(prefix + ".tsv", loss, recall)
    write_svg(prefix + ".svg", loss, recall, total, f"{Path(prefix).name}: loss and recall per pretraining epoch")
    last = max(recall) if recall else None
    print(f"{len(loss)} epochs (last {max(loss)}), {len(recall)} recall points"
          + (f", last: epoch {last} {recall[last][0]:.1f}%" if last else "")
          + f"; wrote {prefix}.tsv and {prefix}.svg")


if __name__ == "__main__":
    main()
