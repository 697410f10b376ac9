#!/usr/bin/env bash
# Fixture for web/test/page.mjs: FIXTURE_DIR/data (the course's four files for 60 made-up people, for
# `serve.py --data`), a tiny vanilla checkpoint trained by the command line on them
# (FIXTURE_DIR/cli-vanilla.safetensors) and the command line's predictions for the first 8 dev
# questions (FIXTURE_DIR/cli-vanilla.predictions), which the page must reproduce after an upload.
# Usage: web/test/fixture.sh FIXTURE_DIR   (ATTNLAB_BIN: the CLI, default target/debug/attnlab)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="${1:?usage: web/test/fixture.sh FIXTURE_DIR}"
bin="${ATTNLAB_BIN:-target/debug/attnlab}"
if [[ ! -x "$bin" ]]; then
  echo "fixture.sh: $bin is missing; build it with 'cargo build --bin attnlab' (or set ATTNLAB_BIN)" >&2
  exit 1
fi
mkdir -p "$dir"
"$bin" corpus --out_dir "$dir/data" --people 60
# 20 steps of batch 16 at a high learning rate: enough that the predictions differ from question to
# question (a stronger check than one repeated string), and under a minute on lavapipe.
"$bin" finetune vanilla "$dir/data/wiki.txt" --finetune_corpus_path "$dir/data/birth_places_train.tsv" \
  --tiny --max_steps 20 --batch_size 16 --learning_rate 6e-3 \
  --writing_params_path "$dir/cli-vanilla.safetensors" >/dev/null
"$bin" evaluate vanilla "$dir/data/wiki.txt" --eval_corpus_path "$dir/data/birth_dev.tsv" --tiny \
  --reading_params_path "$dir/cli-vanilla.safetensors" --max_questions 8 \
  --outputs_path "$dir/cli-vanilla.predictions"
# Two steps of pretraining only, for the section 2 demos' probe: a model of these people's text
# (FIXTURE_DIR/cli-pretrained.safetensors) and one of the built-in corpus, standing in for the
# shipped web/models/builtin-pretrained.* (FIXTURE_DIR/builtin-pretrained.safetensors).
"$bin" pretrain vanilla "$dir/data/wiki.txt" --tiny --max_steps 2 \
  --writing_params_path "$dir/cli-pretrained.safetensors" >/dev/null
"$bin" pretrain vanilla --tiny --max_steps 2 \
  --writing_params_path "$dir/builtin-pretrained.safetensors" >/dev/null
echo "fixture ready in $dir: data/, cli-vanilla.safetensors, cli-vanilla.predictions," \
  "cli-pretrained.safetensors, builtin-pretrained.safetensors"
