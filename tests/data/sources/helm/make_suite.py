"""Writes the hand-made HELM suite folder ``v1/`` beside this script (run once, by hand).

The files follow HELM's dataclasses (stanford-crfm/helm, see SOURCE.md) as ``asdict_without_nones``
writes them; ``stats.json`` is computed here the way HELM's ``Metric.evaluate`` does it: per train
trial, the per-instance ``Stat``s are merged in instance order (``sum += other.sum``), each trial's
stat is reduced to its mean (``take_mean``), and the trial means are merged (mean = sum / count).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

HERE = Path(__file__).parent / "v1"
TYPOS = {
    "name": "typos",
    "robustness": True,
    "fairness": False,
    "computed_on": "perturbed",
    "prob": 0.1,
}


class Stat:
    def __init__(self, name: dict) -> None:
        self.name, self.count, self.sum, self.sum_squared = name, 0, 0, 0
        self.min = self.max = self.mean = self.variance = self.stddev = None

    def add(self, x: float) -> Stat:
        self.sum += x
        self.sum_squared += x * x
        self.min = x if self.min is None else min(self.min, x)
        self.max = x if self.max is None else max(self.max, x)
        self.count += 1
        return self._update()

    def merge(self, other: Stat) -> Stat:
        self.sum += other.sum
        self.sum_squared += other.sum_squared
        self.min = other.min if self.min is None else min(self.min, other.min)
        self.max = other.max if self.max is None else max(self.max, other.max)
        self.count += other.count
        return self._update()

    def _update(self) -> Stat:
        self.mean = self.sum / self.count
        pvariance = self.sum_squared / self.count - self.mean**2
        self.variance = 0 if pvariance < 0 else pvariance
        self.stddev = math.sqrt(self.variance)
        return self

    def json(self) -> dict:
        out = {"name": {k: v for k, v in self.name.items() if v is not None}}
        for key in ("count", "sum", "sum_squared", "min", "max", "mean", "variance", "stddev"):
            out[key] = getattr(self, key)
        return out


def _key(name: dict) -> str:
    return json.dumps(name, sort_keys=True)


def write_run(folder: str, spec_name: str, model: str, trials: int, instances: list[dict]) -> None:
    """instances: {id, split, perturbation, text, refs [(text, correct)], trials [(response,
    success, error, request_time, {stat: value})]} in scenario order."""
    path = HERE / folder
    path.mkdir(parents=True, exist_ok=True)
    deployment = model.replace("/", "_") if model != "openai/gpt2" else "huggingface/gpt2"
    adapter_spec = {
        "method": "generation",
        "instructions": "",
        "input_prefix": "Question: ",
        "output_prefix": "Answer: ",
        "max_train_instances": 2,
        "num_outputs": 1,
        "num_train_trials": trials,
        "num_trials": 1,
        "model_deployment": deployment,
        "model": model,
        "temperature": 0.0,
        "max_tokens": 5,
        "stop_sequences": ["\n"],
    }
    scenario, args = spec_name.split(":", 1)
    run_spec = {
        "name": spec_name,
        "scenario_spec": {
            "class_name": f"helm.benchmark.scenarios.{scenario}_scenario.Scenario",
            "args": dict(a.split("=") for a in args.split(",") if not a.startswith("model=")),
        },
        "adapter_spec": adapter_spec,
        "metric_specs": [
            {
                "class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                "args": {"names": ["exact_match", "quasi_exact_match", "f1_score"]},
            },
        ],
        "data_augmenter_spec": {
            "perturbation_specs": [],
            "should_augment_train_instances": False,
            "should_include_original_train": False,
            "should_skip_unchanged_train": False,
            "should_augment_eval_instances": False,
            "should_include_original_eval": False,
            "should_skip_unchanged_eval": False,
            "seeds_per_instance": 1,
        },
        "groups": [scenario],
    }
    request_states, per_instance, global_stats = [], [], {}
    for trial in range(trials):
        trial_stats: dict[str, Stat] = {}
        for inst in instances:
            response, success, error, seconds, values = inst["trials"][trial]
            instance = {
                "input": {"text": inst["text"]},
                "references": [
                    {"output": {"text": t}, "tags": ["correct"] if c else []}
                    for t, c in inst["refs"]
                ],
                "split": inst["split"],
                "id": inst["id"],
            }
            if inst["perturbation"]:
                instance["perturbation"] = inst["perturbation"]
            result = {"success": success, "embedding": [], "completions": [], "cached": False}
            if success:
                result["completions"] = [{"text": response, "logprob": -1.5, "tokens": []}]
            else:
                result["error"] = error
            result["request_time"] = seconds
            request_states.append(
                {
                    "instance": instance,
                    "train_trial_index": trial,
                    "request": {
                        "model_deployment": deployment,
                        "model": model,
                        "embedding": False,
                        "prompt": f"Question: {inst['text']}\nAnswer:",
                        "temperature": 0.0,
                        "num_completions": 1,
                        "top_k_per_token": 1,
                        "max_tokens": 5,
                        "stop_sequences": ["\n"],
                        "echo_prompt": False,
                        "top_p": 1,
                        "presence_penalty": 0,
                        "frequency_penalty": 0,
                    },
                    "result": result,
                    "num_train_instances": 2,
                    "prompt_truncated": False,
                    "num_conditioning_tokens": 0,
                }
            )
            stats = []
            for metric, value in values.items():
                name = {
                    "name": metric,
                    "split": inst["split"],
                    "perturbation": inst["perturbation"],
                }
                stat = Stat(name).add(value)
                stats.append(stat.json())
                if _key(name) in trial_stats:
                    trial_stats[_key(name)].merge(stat)
                else:
                    trial_stats[_key(name)] = Stat(name).merge(stat)
            entry = {"instance_id": inst["id"]}
            if inst["perturbation"]:
                entry["perturbation"] = inst["perturbation"]
            entry["train_trial_index"] = trial
            entry["stats"] = stats
            per_instance.append(entry)
        for key, stat in trial_stats.items():
            mean = Stat(stat.name).add(stat.mean)
            if key in global_stats:
                global_stats[key].merge(mean)
            else:
                global_stats[key] = Stat(stat.name).merge(mean)
    scenario_state = {"adapter_spec": adapter_spec, "request_states": request_states}
    for file, value in (
        ("run_spec.json", run_spec),
        ("scenario_state.json", scenario_state),
        ("per_instance_stats.json", per_instance),
        ("stats.json", [s.json() for s in global_stats.values()]),
    ):
        (path / file).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


QUESTIONS = (
    ("id11", "test", "Which bone is the thigh bone?", "femur"),
    ("id12", "test", "Which organ pumps blood?", "heart"),
    ("id13", "test", "How many lungs does a human have?", "two"),
    ("id14", "test", "Which organ filters blood?", "kidney"),
    ("id15", "test", "Where is the tibia?", "leg"),
    ("id3", "valid", "Which bone protects the brain?", "skull"),
)


def _anatomy(responses: dict[str, str], seconds: float, failed: str | None) -> list[dict]:
    out = []
    for n, (iid, split, text, answer) in enumerate(QUESTIONS):
        for perturbation in (None, TYPOS) if iid in ("id11", "id12") else (None,):
            shown = text if perturbation is None else text.replace("o", "0", 1)
            response = responses[iid] if perturbation is None else responses[iid].upper()
            correct = 1.0 if response.strip() == answer else 0.0
            quasi = 1.0 if response.strip().lower() == answer else 0.0
            f1 = quasi if quasi else (0.5 if answer[:2] in response else 0.0)
            values = {
                "exact_match": correct,
                "quasi_exact_match": quasi,
                "f1_score": f1,
                "num_prompt_tokens": 31 + n + len(shown) // 7,
                "num_output_tokens": 2,
            }
            time = round(seconds + 0.013 * n + (0.007 if perturbation else 0.0), 6)
            values["inference_runtime"] = time
            ok = not (failed == iid and perturbation is None)
            if not ok:
                values = {
                    "exact_match": 0.0,
                    "quasi_exact_match": 0.0,
                    "f1_score": 0.0,
                    "num_prompt_tokens": 31 + n + len(shown) // 7,
                    "num_output_tokens": 0,
                    "inference_runtime": time,
                }
            out.append(
                {
                    "id": iid,
                    "split": split,
                    "perturbation": perturbation,
                    "text": shown,
                    "refs": [(answer, True), ("liver", False)],
                    "trials": [
                        (
                            response if ok else "",
                            ok,
                            None if ok else "Timeout after 30 s",
                            time,
                            values,
                        )
                    ],
                }
            )
    return out


def main() -> None:
    write_run(
        "anatomy:subject=anatomy,model=openai_gpt2",
        "anatomy:subject=anatomy,model=openai_gpt2",
        "openai/gpt2",
        1,
        _anatomy(
            {
                "id11": " femur",
                "id12": " Heart",
                "id13": " three",
                "id14": " kid",
                "id15": " leg",
                "id3": " skull",
            },
            0.412,
            failed="id14",
        ),
    )
    write_run(
        "anatomy:subject=anatomy,model=meta_llama-7b",
        "anatomy:subject=anatomy,model=meta_llama-7b",
        "meta/llama-7b",
        1,
        _anatomy(
            {
                "id11": " femur",
                "id12": " heart",
                "id13": " two",
                "id14": " liver",
                "id15": " leg",
                "id3": " skull",
            },
            1.137,
            failed=None,
        ),
    )
    # Two train trials (different in-context examples): the trials' values differ.
    boolq = []
    for n, (iid, text, answer, first, second) in enumerate(
        (
            ("id7", "Is the sky blue?", "Yes", " Yes", " Yes"),
            ("id8", "Is fire cold?", "No", " Yes", " No"),
            ("id9", "Can fish fly?", "No", " Maybe", " no"),
        )
    ):
        trials = []
        for trial, response in enumerate((first, second)):
            em = 1.0 if response.strip() == answer else 0.0
            quasi = 1.0 if response.strip().lower() == answer.lower() else 0.0
            seconds = round(0.3 + 0.1 * n + 0.05 * trial, 6)
            trials.append(
                (
                    response,
                    True,
                    None,
                    seconds,
                    {
                        "inference_runtime": seconds,
                        "exact_match": em,
                        "quasi_exact_match": quasi,
                        "f1_score": quasi,
                        "num_prompt_tokens": 40 + 3 * n + trial,
                        "num_output_tokens": 1,
                    },
                )
            )
        boolq.append(
            {
                "id": iid,
                "split": "test",
                "perturbation": None,
                "text": text,
                "refs": [(answer, True)],
                "trials": trials,
            }
        )
    write_run("boolq:model=openai_gpt2", "boolq:model=openai_gpt2", "openai/gpt2", 2, boolq)


if __name__ == "__main__":
    main()
