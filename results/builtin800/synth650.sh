#!/usr/bin/env bash
# The synthesizer at the shipped model's size on the built-in corpus with the assignment's schedule:
# pretraining 650 epochs in the background (started with scripts/long-run.sh, session 33):
#   scripts/long-run.sh builtin-synth -- pretrain synthesizer --n_layer 4 --n_head 8 --n_embd 128 --writing_params_path builtin_spt.params
# then (this script) finetune 10 epochs, evaluate dev and test, store it as f16 for the page and check
# the f16 copy gives the same predictions. The same size finetuned from scratch (75 epochs) is the
# no-pretraining row. Binary: the release build the long run copied (commit f268b1d).
set -x
cd /work/runs/s33
R=$HOME/.cache/attnlab-runs/builtin-synth
B=$R/attnlab
S="--n_layer 4 --n_head 8 --n_embd 128"
$B corpus --out_dir c800
date -u
/usr/bin/time -f "%e s wall" $B finetune synthesizer $S --reading_params_path $R/builtin_spt.params --writing_params_path synth650.params
for f in dev test; do
  $B evaluate synthesizer $S --reading_params_path synth650.params --eval_corpus_path c800/birth_$f.tsv --outputs_path synth650.$f.predictions
done
$B convert synthesizer $S --reading_params_path synth650.params --writing_params_path builtin-synthesizer.safetensors --f16
for f in dev test; do
  $B evaluate synthesizer $S --reading_params_path builtin-synthesizer.safetensors --eval_corpus_path c800/birth_$f.tsv --outputs_path synth650-f16.$f.predictions
  cmp synth650.$f.predictions synth650-f16.$f.predictions && echo "f16 copy: the same $f predictions"
done
# The no-pretraining row: the same size finetuned from scratch, run earlier in this session beside the
# pretraining (snopt.log):
#   nice -n 19 attnlab finetune synthesizer $S --writing_params_path snopt.params
#   attnlab evaluate synthesizer $S --reading_params_path snopt.params --eval_corpus_path c800/birth_dev.tsv --outputs_path snopt.dev.predictions
# and the pretrained model's probe (recall 0.0%, 0 of 136), after this script:
#   attnlab probe synthesizer $S --reading_params_path $R/builtin_spt.params --eval_corpus_path c800/birth_dev.tsv
$B evaluate synthesizer $S --reading_params_path snopt.params --eval_corpus_path c800/birth_test.tsv --outputs_path snopt.test.predictions
date -u
