"""Tiny Inspect AI tasks written for the kagreport fixtures of issue 25 (data: CC0).

Two systems: the mock model `mockllm/model` driven by two different scripted
policies ("alpha" and "beta"), passed as `custom_outputs`.  Both are deterministic
functions of the question and of how many times that question was asked before
(so epochs differ from each other).  One free-text sample makes the model raise,
so the log holds an errored sample.
"""

from __future__ import annotations

import re
from collections import defaultdict

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage
from inspect_ai.scorer import (
    Score,
    Target,
    includes,
    match,
    mean,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState, generate, multiple_choice
from inspect_ai.scorer import choice

QA = [
    ("q1", "What is the capital of France?", "Paris"),
    ("q2", "How many legs does a spider have? Answer with a number.", "8"),
    ("q3", "What colour is a ripe banana?", "yellow"),
    ("q4", "Which planet is known as the red planet?", "Mars"),
    ("q5", "What is 12 times 12? Answer with a number.", "144"),
    ("q6", "Name the largest ocean on Earth.", "Pacific"),
    ("q7", "BOOM: this question makes the mock model fail.", "never"),
]

MC = [
    ("m1", "Which gas do plants absorb from the air?", ["Oxygen", "Carbon dioxide", "Helium", "Neon"], "B"),
    ("m2", "What is the boiling point of water at sea level in Celsius?", ["90", "100", "110", "120"], "B"),
    ("m3", "Which animal is a mammal?", ["Shark", "Trout", "Dolphin", "Octopus"], "C"),
    ("m4", "How many continents are there?", ["Five", "Six", "Seven", "Eight"], "C"),
    ("m5", "Which is a prime number?", ["21", "27", "33", "29"], "D"),
]

# Scripted answers per (policy, question id): one entry per call, cycling.
FREE_TEXT = {
    "alpha": {
        "q1": ["Paris", "Paris", "The capital is Paris."],
        "q2": ["8", "eight", "8"],
        "q3": ["It is yellow.", "yellow", "Yellow"],
        "q4": ["Mars", "Mars", "Jupiter"],
        "q5": ["144", "144", "144"],
        "q6": ["Atlantic", "the Pacific Ocean", "Pacific"],
    },
    "beta": {
        "q1": ["Lyon", "Paris", "Marseille"],
        "q2": ["six", "6", "8 legs"],
        "q3": ["green", "yellow", "brown"],
        "q4": ["Venus", "Mars", "Mars"],
        "q5": ["124", "144", "142"],
        "q6": ["Atlantic", "Indian", "Arctic"],
    },
}
MC_ANSWERS = {
    "alpha": {"m1": "BBB", "m2": "BBA", "m3": "CCC", "m4": "CDC", "m5": "DAA"},
    "beta": {"m1": "ABA", "m2": "BBB", "m3": "ADC", "m4": "BBC", "m5": "AAD"},
}


def policy(name: str):
    """Return a mockllm `custom_outputs` callable for the named policy."""
    calls: dict[str, int] = defaultdict(int)
    qa_by_text = {text: qid for qid, text, _ in QA}
    mc_by_text = {text: mid for mid, text, _, _ in MC}

    def out(content: str) -> ModelOutput:
        # usage given so that mockllm does not count tokens with tiktoken (needs a download)
        o = ModelOutput.from_content(model=f"mock-{name}", content=content)
        o.usage = ModelUsage(input_tokens=10, output_tokens=len(content.split()), total_tokens=10 + len(content.split()))
        return o

    def outputs(input, tools, tool_choice, config):  # noqa: ANN001
        prompt = input[-1].text
        if "BOOM" in prompt:
            raise RuntimeError("mock provider failure for a BOOM question")
        for text, mid in mc_by_text.items():
            if text in prompt:
                k = calls[mid]
                calls[mid] += 1
                letter = MC_ANSWERS[name][mid][k % 3]
                return out(f"ANSWER: {letter}")
        qid = qa_by_text[prompt]
        k = calls[qid]
        calls[qid] += 1
        return out(FREE_TEXT[name][qid][k % 3])

    return outputs


@scorer(metrics=[mean(), stderr()])
def overlap():
    """Numeric scorer: share of the target's characters found in the answer (a float in [0, 1])."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.lower()
        want = target.text.lower()
        hits = sum(1 for ch in want if ch in answer)
        value = hits / len(want) if want else 0.0
        return Score(value=round(value, 4), answer=state.output.completion,
                     explanation=f"{hits} of {len(want)} target characters present")

    return score


@task
def tiny_qa(epochs: int = 3) -> Task:
    return Task(
        dataset=[Sample(id=qid, input=text, target=target) for qid, text, target in QA],
        solver=[generate()],
        scorer=[match(), includes(), overlap()],
        epochs=Epochs(epochs, "mean"),
        fail_on_error=False,
    )


@task
def tiny_mc(epochs: int = 3) -> Task:
    return Task(
        dataset=[
            Sample(id=mid, input=text, choices=choices, target=target)
            for mid, text, choices, target in MC
        ],
        solver=[multiple_choice()],
        scorer=choice(),
        epochs=Epochs(epochs, "mode"),
    )
