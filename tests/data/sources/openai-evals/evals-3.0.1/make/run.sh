#!/bin/sh
# Re-make the OpenAI evals fixture: 4 evals x 2 completion functions (evals' built-in `dummy` and
# the scripted `tiny25-scripted` from ./registry), each with --record_path. Needs evals 3.0.1 in
# /tmp/venv-evals. Offline: OPENAI_API_KEY is a placeholder; nothing calls the API.
set -e
cd "$(dirname "$0")"
OUT=${1:-$(cd .. && pwd)}
mkdir -p "$OUT/records"
export PYTHONPATH=$PWD OPENAI_API_KEY=sk-offline-placeholder EVALS_THREADS=1 EVALS_SEQUENTIAL=1
: > "$OUT/run-output.txt"
for fn in dummy tiny25-scripted; do
  for ev in test-match tiny25-match tiny25-fuzzy-match tiny25-includes; do
    echo "### oaieval $fn $ev" >> "$OUT/run-output.txt"
    /tmp/venv-evals/bin/oaieval "$fn" "$ev" --registry_path "$PWD/registry" --no-cache \
      --record_path "$OUT/records/$ev.$fn.jsonl" >> "$OUT/run-output.txt" 2>&1
  done
done
