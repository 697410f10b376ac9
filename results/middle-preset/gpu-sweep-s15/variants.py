# Corpus variants for the session-15 middle-preset sweep: shorter texts (sessions 13-14 tried longer ones).
# usage: python3 variants.py BIRTHS_DIR OUT_DIR  (BIRTHS_DIR from `attnlab corpus --births_only --out_dir BIRTHS_DIR`)
# Person 0 keeps its line in every text (its essay sentence holds the '?' the questions need).
# work: a pretraining epoch's real characters, expected, as the reference's span corruption cuts each
# line to a length drawn from 4..112 and adds two mask characters: the sum of E[min(len, cut)] + 2.
import os, random, sys
src, out = sys.argv[1], sys.argv[2]
births = open(f"{src}/wiki.txt").read().splitlines()
tsv = []
for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
    tsv += [l.split("\t") for l in open(f"{src}/{f}").read().splitlines()]
assert len(tsv) == len(births), (len(tsv), len(births))
people = []
for line, (q, b) in zip(births, tsv):
    full = line.split(". ")[0]
    assert q == f"Where was {full} born?", (q, full)
    people.append((full, b))
# every line starts "NAME." as the built-in corpus's do (the probe finds a person's line by it)
SHORT = ["{f}. Born in {b} .", "{f}. From {b} .", "{f}. A native of {b} .",
         "{f}. Birthplace: {b} .", "{f}. Born {b} ."]
def text(k, seed, first_only):
    rng = random.Random(seed)
    lines = [births[0]]
    for f, b in people[1:]:
        alts = [t.format(f=f, b=b) for t in SHORT]
        rest = alts[1:]
        rng.shuffle(rest)
        lines += ([alts[0]] + rest)[:k] if first_only else (rng.sample(alts, 1) if k == 1 else [alts[0]] + rest[: k - 1])
    return lines
def work(lines):
    cuts = range(4, 113)
    return sum(sum(min(len(l), c) for c in cuts) / len(cuts) + 2 for l in lines)
variants = {"births": births, "short": text(1, 15, True), "shortvar": text(1, 15, False), "short2": text(2, 16, False)}
base = work(births)
for name, lines in variants.items():
    d = f"{out}/{name}"; os.makedirs(d, exist_ok=True)
    open(f"{d}/wiki.txt", "w").write("\n".join(lines) + "\n")
    for f in ("birth_places_train.tsv", "birth_dev.tsv", "birth_test.tsv"):
        open(f"{d}/{f}", "w").write(open(f"{src}/{f}").read())
    chars = sum(len(l) for l in lines)
    print(f"{name:9} lines {len(lines):5} chars {chars:7} work {work(lines) / base:.2f}x births")
