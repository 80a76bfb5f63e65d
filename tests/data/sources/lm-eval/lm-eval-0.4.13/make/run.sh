#!/bin/sh
# Re-make the lm-eval fixture: two runs of lm-eval's `dummy` model (random seeds 0 and 3; seed 1 is an extra run where every multiple-choice answer is wrong) on the
# tiny25 group. Needs lm-eval 0.4.13 in /tmp/venv-lmeval. Runs offline.
set -e
cd "$(dirname "$0")"
OUT=${1:-../output}
export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME=/tmp/lmeval-hf
for seed in 0 3 1; do
  /tmp/venv-lmeval/bin/lm_eval run --model dummy --model_args pretrained=mock/dummy-seed$seed \
    --tasks tiny25 --include_path ./tasks --log_samples --output_path "$OUT" --seed $seed \
    > "$OUT/../run-output-seed$seed.txt" 2>&1
done
