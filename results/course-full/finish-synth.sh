#!/usr/bin/env bash
# After the synthesizer pretraining (scripts/long-run.sh course-synth) has written its final
# params: the handout's finetune of it, evaluation on the dev and the test inputs, and the probe
# of the pretrained model with the 2 x 2 table. Outputs go to $O (default
# ~/.cache/attnlab-runs/course-synth-finish); copy the logs and predictions here afterwards.
#   results/course-full/finish-synth.sh        (from the repository root; B= another binary)
set -uo pipefail
cd "$(dirname "$0")/../.."
D=${D:-$PWD/../shared/data/cs224n-a5}
B=${B:-$PWD/target/release/attnlab}
R=${R:-$HOME/.cache/attnlab-runs/course-synth}
O=${O:-$HOME/.cache/attnlab-runs/course-synth-finish}
[[ -f $R/synthesizer.pretrain.params ]] || { echo "no $R/synthesizer.pretrain.params: is the pretraining finished? (scripts/long-run.sh course-synth status)"; exit 1; }
mkdir -p "$O" && cd "$O"
date -u +"%FT%TZ finetune start"
/usr/bin/time -v "$B" finetune synthesizer "$D/wiki.txt" --reading_params_path "$R/synthesizer.pretrain.params" \
  --writing_params_path synthesizer.finetune.params --finetune_corpus_path "$D/birth_places_train.tsv" > finetune.log 2> finetune.time
date -u +"%FT%TZ finetune done"
"$B" evaluate synthesizer "$D/wiki.txt" --reading_params_path synthesizer.finetune.params \
  --eval_corpus_path "$D/birth_dev.tsv" --outputs_path synthesizer.pretrain.dev.predictions > eval-dev.log 2>&1
"$B" evaluate synthesizer "$D/wiki.txt" --reading_params_path synthesizer.finetune.params \
  --eval_corpus_path "$D/birth_test_inputs.tsv" --outputs_path synthesizer.pretrain.test.predictions > eval-test.log 2>&1
"$B" probe synthesizer "$D/wiki.txt" --reading_params_path "$R/synthesizer.pretrain.params" \
  --eval_corpus_path "$D/birth_dev.tsv" --predictions_path synthesizer.pretrain.dev.predictions > probe.log 2>&1
date -u +"%FT%TZ all done"
grep -h "Correct" eval-dev.log; tail -12 probe.log
