"""Print HELM's own aggregates: stats.json means of the accuracy metrics per run (test split), and the
helm-summarize leaderboard tables (groups/<group>.json). Usage: headline.py benchmark_output/runs/tiny25"""

import glob
import json
import os
import sys

suite = sys.argv[1]
MAIN = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score")
for run in sorted(glob.glob(os.path.join(suite, "tiny25_*"))):
    print(f"== {os.path.basename(run)}")
    for s in json.load(open(os.path.join(run, "stats.json"))):
        n = s["name"]
        if n["split"] != "test" or n["name"] not in MAIN + ("num_instances",):
            continue
        p = n.get("perturbation")
        tag = "" if p is None else f" perturbation={p['name']}/{p['computed_on']}"
        print(f"  {n['name']}{tag}: count={s['count']} sum={s['sum']!r} mean={s.get('mean')!r} "
              f"stddev={s.get('stddev')!r} min={s.get('min')!r} max={s.get('max')!r}")
for g in ("tiny25", "tiny25_qa", "tiny25_mc"):
    for t in json.load(open(os.path.join(suite, "groups", f"{g}.json"))):
        print(f"== helm-summarize groups/{g}.json | {t['title']}")
        print("  " + " | ".join(h["value"] for h in t["header"]))
        for r in t["rows"]:
            print("  " + " | ".join(repr(c.get("value")) for c in r))
