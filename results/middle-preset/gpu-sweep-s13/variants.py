# Corpus variants of the built-in births-only corpus for the middle-preset sweep (session 13).
# usage: python3 variants.py BIRTHS_DIR OUT_DIR  (BIRTHS_DIR from `attnlab corpus --births_only --out_dir BIRTHS_DIR`)
# births: as is; mixed: + one line "Where was NAME born? PLACE ." per training person; augK: each person
# in K lines (the birth sentence and K-1 other phrasings of it); aug4mixed: aug4 + the mixed lines.
import os, random, sys
src, out = sys.argv[1], sys.argv[2]
births = open(f"{src}/wiki.txt").read().split("\n")
if births[-1] == "": births = births[:-1]
tsv = []
for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
    tsv += [l.split("\t") for l in open(f"{src}/{f}").read().splitlines()]
assert len(tsv) == len(births), (len(tsv), len(births))
ntrain = len(open(f"{src}/birth_places_train.tsv").read().splitlines())
people = []
for line, (q, b) in zip(births, tsv):
    full = line.split(". ")[0]
    assert q == f"Where was {full} born?", (q, full)
    people.append((full, full.split()[-1], b))
T = ["{f}. {s} was born in {b} .", "{f}. {s} is a native of {b} .", "{f}. {f} was born in {b} .",
     "{f}. The birthplace of {s} is {b} .", "{f}. {s} came into the world in {b} ."]
rng = random.Random(13)
def aug(k):
    lines = []
    for line, (f, s, b) in zip(births, people):
        alts = [t.format(f=f, s=s, b=b) for t in T]
        alts = [a for a in alts if a != line]
        rng.shuffle(alts)
        lines += [line] + alts[: k - 1]
    return lines
qa = [f"Where was {f} born? {b} ." for f, s, b in people[:ntrain]]
variants = {"births": births, "mixed": births + qa, "aug4": aug(4), "aug4mixed": aug(4) + qa, "aug2": aug(2)}
for name, lines in variants.items():
    d = f"{out}/{name}"; os.makedirs(d, exist_ok=True)
    open(f"{d}/wiki.txt", "w").write("\n".join(lines) + "\n")
    for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
        open(f"{d}/{f}", "w").write(open(f"{src}/{f}").read())
    print(name, len(lines), sum(len(l) for l in lines))
