#!/bin/sh
# Re-make the HELM fixture (crfm-helm 0.5.16 in /tmp/venv-helm). Offline.
# Main runs: 6 eval instances x 3 train trials; perturbation runs (robustness = mild_mix): 6 instances x 1 trial.
set -e
cd "$(dirname "$0")"
OUT=${1:-/tmp/helm-out}
MAKE=$PWD
export PYTHONPATH=$MAKE HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
mkdir -p "$OUT" && cd "$OUT"
H=/tmp/venv-helm/bin
$H/helm-run --plugins "$MAKE/tiny25_helm.py" -c "$MAKE/run_entries_main.conf" --local-path "$MAKE/prod_env" \
  --suite tiny25 -m 6 -t 3 -o benchmark_output --disable-cache > helm-run-main.txt 2>&1
$H/helm-run --plugins "$MAKE/tiny25_helm.py" -c "$MAKE/run_entries_perturbed.conf" --local-path "$MAKE/prod_env" \
  --suite tiny25 -m 6 -t 1 -o benchmark_output --disable-cache > helm-run-perturbed.txt 2>&1
$H/helm-summarize --suite tiny25 -o benchmark_output --local-path "$MAKE/prod_env" --schema-path "$MAKE/schema_tiny25.yaml" > helm-summarize.txt 2>&1 || echo "helm-summarize exit $?" >> helm-summarize.txt
# the fixture keeps the whole output as one archive (the JSON is ~1.5 MB unpacked, ~80 KB packed)
tar -czf benchmark_output.tar.gz benchmark_output
