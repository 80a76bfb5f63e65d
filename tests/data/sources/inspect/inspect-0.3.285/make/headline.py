"""Print each log's headline (results.scores) as Inspect's own log reader gives it."""

import glob
import sys

from inspect_ai.log import read_eval_log

for path in sorted(glob.glob(sys.argv[1] + "/**/*.eval", recursive=True) + glob.glob(sys.argv[1] + "/**/*.json", recursive=True)):
    log = read_eval_log(path, header_only=True)
    r = log.results
    print(f"{path.split('/')[-1]}: task={log.eval.task} model={log.eval.model} status={log.status} "
          f"epochs={log.eval.config.epochs} reducer={log.eval.config.epochs_reducer} "
          f"total_samples={r.total_samples} completed_samples={r.completed_samples}")
    for s in r.scores:
        metrics = ", ".join(f"{k}={m.value!r}" for k, m in s.metrics.items())
        print(f"  scorer={s.name} reducer={s.reducer} scored_samples={s.scored_samples} "
              f"unscored_samples={s.unscored_samples}: {metrics}")
