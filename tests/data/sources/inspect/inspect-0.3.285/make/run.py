"""Run the tiny tasks with two scripted mock systems; writes logs to the folder given (default ./logs).

The systems are Inspect's mock provider under two model names, `mockllm/alpha` and
`mockllm/beta` (mockllm accepts any model name), each scripted by `tasks.policy`.
"""

import sys

from inspect_ai import eval
from inspect_ai.model import get_model

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from tasks import policy, tiny_mc, tiny_qa  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else "logs"
common = dict(max_samples=1, max_connections=1, display="plain")
for name in ("alpha", "beta"):
    for t in (tiny_qa(), tiny_mc()):
        model = get_model(f"mockllm/{name}", custom_outputs=policy(name), memoize=False)
        eval(t, model=model, log_dir=out, log_format="eval", **common)
# the same multiple-choice run of beta once more, in the older JSON log format
model = get_model("mockllm/beta", custom_outputs=policy("beta"), memoize=False)
eval(tiny_mc(), model=model, log_dir=out + "/json", log_format="json", **common)
