#!/usr/bin/env bash
# Evaluate the no-pretraining checkpoint on dev and on the test questions (binary at commit 2b144ec,
# which asks question-only lines with their newline, as the reference does).
set -x
cd /work/runs
while pgrep -f nopretrain.sh > /dev/null; do sleep 10; done
D=/work/shared/data/cs224n-a5
B=/work/runs/bin/attnlab-head
date -u
$B evaluate vanilla $D/wiki.txt --reading_params_path vanilla.model.params --eval_corpus_path $D/birth_dev.tsv --outputs_path vanilla.nopretrain.dev.predictions
$B evaluate vanilla $D/wiki.txt --reading_params_path vanilla.model.params --eval_corpus_path $D/birth_test_inputs.tsv --outputs_path vanilla.nopretrain.test.predictions
date -u
