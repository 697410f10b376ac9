# Corpus variants for the session-14 middle-preset sweep (extends session 13's gpu-sweep-s13/variants.py).
# usage: python3 variants.py BIRTHS_DIR OUT_DIR  (BIRTHS_DIR from `attnlab corpus --births_only --out_dir BIRTHS_DIR`)
# births: as is; augK: each person in K lines (the birth sentence and K-1 other phrasings of it).
import os, random, sys
src, out = sys.argv[1], sys.argv[2]
births = open(f"{src}/wiki.txt").read().split("\n")
if births[-1] == "": births = births[:-1]
tsv = []
for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
    tsv += [l.split("\t") for l in open(f"{src}/{f}").read().splitlines()]
assert len(tsv) == len(births), (len(tsv), len(births))
people = []
for line, (q, b) in zip(births, tsv):
    full = line.split(". ")[0]
    assert q == f"Where was {full} born?", (q, full)
    people.append((full, full.split()[-1], b))
# the first five are session 13's (aug4 draws 3 of them, as there: the same text); the rest are new
T = ["{f}. {s} was born in {b} .", "{f}. {s} is a native of {b} .", "{f}. {f} was born in {b} .",
     "{f}. The birthplace of {s} is {b} .", "{f}. {s} came into the world in {b} .",
     "{f} was born in {b} .", "{f} is from {b} .", "{b} is where {f} was born .",
     "{f}, born in {b} .", "Born in {b}: {f} ."]
def aug(k, seed, templates):
    rng = random.Random(seed)
    lines = []
    for line, (f, s, b) in zip(births, people):
        alts = [t.format(f=f, s=s, b=b) for t in templates]
        alts = [a for a in alts if a != line]
        rng.shuffle(alts)
        lines += [line] + alts[: k - 1]
    return lines
variants = {"births": births, "aug4": aug(4, 13, T[:5]), "aug8": aug(8, 14, T)}
for name, lines in variants.items():
    d = f"{out}/{name}"; os.makedirs(d, exist_ok=True)
    open(f"{d}/wiki.txt", "w").write("\n".join(lines) + "\n")
    for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
        open(f"{d}/{f}", "w").write(open(f"{src}/{f}").read())
    print(name, len(lines), sum(len(l) for l in lines), round(sum(len(l) for l in lines) / sum(len(l) for l in births), 2))
