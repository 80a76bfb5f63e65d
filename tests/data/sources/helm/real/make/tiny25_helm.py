"""HELM plugin written for the kagreport fixtures of issue 25 (data: CC0).

Registers two run spec functions (`tiny25_qa`: free text; `tiny25_mc`: multiple choice) over tiny
made-up scenarios, and a scripted mock client (`ScriptedClient`, deployed as `tiny25/scripted` by
prod_env/model_deployments.yaml). The client answers from a table keyed by a word of the question;
for some questions it is right only when a hash of the whole prompt is even, so the three train
trials (different in-context examples) and the perturbed prompts get different answers.
"""

import hashlib
import re
from typing import Any, Dict, List

from helm.benchmark.adaptation.common_adapter_specs import (
    get_generation_adapter_spec,
    get_multiple_choice_joint_adapter_spec,
)
from helm.benchmark.metrics.common_metric_specs import get_exact_match_metric_specs, get_f1_metric_specs
from helm.benchmark.run_spec import RunSpec, run_spec_function
from helm.benchmark.scenarios.scenario import (
    CORRECT_TAG,
    TEST_SPLIT,
    TRAIN_SPLIT,
    Input,
    Instance,
    Output,
    Reference,
    Scenario,
    ScenarioSpec,
)
from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.request import GeneratedOutput, Request, RequestResult, Token, wrap_request_time

# (key word, question, answer, policy) ; policy: "right", "wrong", "hash"
QA = [
    ("apples", "Mary has three apples and she eats one. How many apples does she have left?", "2", "right"),
    ("spider", "John says a spider has eight legs. Is he right? Answer yes or no.", "yes", "right"),
    ("france", "She asked him: what is the capital of France?", "Paris", "hash"),
    ("planet", "His teacher asked which planet is known as the red planet.", "Mars", "hash"),
    ("ocean", "Her brother wants to know the largest ocean on Earth.", "Pacific", "wrong"),
    ("banana", "He says a ripe banana has which colour?", "yellow", "hash"),
    ("multiply", "She must multiply 12 by 12. What does she get?", "144", "right"),
    ("week", "He asked how many days there are in a week.", "7", "wrong"),
]
QA_TRAIN = [
    ("cat", "What sound does a cat make?", "meow"),
    ("sky", "What colour is a clear sky by day?", "blue"),
    ("legs", "How many legs does a dog have?", "4"),
]
WRONG = {"apples": "3", "spider": "no", "france": "Lyon", "planet": "Venus", "ocean": "Atlantic",
         "banana": "green", "multiply": "124", "week": "5"}

MC = [
    ("gas", "Which gas does she say plants absorb from the air?", ["Oxygen", "Carbon dioxide", "Helium"], 1, "right"),
    ("boiling", "He asks at what temperature water boils at sea level in Celsius.", ["90", "100", "120"], 1, "hash"),
    ("mammal", "Which animal did his sister call a mammal?", ["Shark", "Trout", "Dolphin"], 2, "right"),
    ("continents", "She asks how many continents there are.", ["Five", "Six", "Seven"], 2, "wrong"),
    ("prime", "Which number did he say is prime?", ["21", "27", "29"], 2, "hash"),
    ("gold", "What is the chemical symbol for gold, she asks?", ["Ag", "Au", "Gd"], 1, "hash"),
]
MC_TRAIN = [
    ("wheels", "How many wheels does a bicycle have?", ["Two", "Three", "Four"], 0),
    ("ice", "What is frozen water called?", ["Steam", "Ice", "Fog"], 1),
]


class Tiny25QAScenario(Scenario):
    name = "tiny25_qa"
    description = "Tiny free-text questions written for kagreport's fixtures."
    tags = ["question answering"]

    def get_instances(self, output_path: str) -> List[Instance]:
        out = [Instance(Input(text=q), [Reference(Output(text=a), tags=[CORRECT_TAG])], split=TRAIN_SPLIT)
               for _, q, a in QA_TRAIN]
        out += [Instance(Input(text=q), [Reference(Output(text=a), tags=[CORRECT_TAG])], split=TEST_SPLIT,
                         id=f"id_{k}") for k, q, a, _ in QA]
        return out


class Tiny25MCScenario(Scenario):
    name = "tiny25_mc"
    description = "Tiny multiple-choice questions written for kagreport's fixtures."
    tags = ["question answering", "multiple choice"]

    def get_instances(self, output_path: str) -> List[Instance]:
        def refs(choices: List[str], right: int) -> List[Reference]:
            return [Reference(Output(text=c), tags=[CORRECT_TAG] if i == right else []) for i, c in enumerate(choices)]

        out = [Instance(Input(text=q), refs(c, r), split=TRAIN_SPLIT) for _, q, c, r in MC_TRAIN]
        out += [Instance(Input(text=q), refs(c, r), split=TEST_SPLIT, id=f"id_{k}") for k, q, c, r, _ in MC]
        return out


@run_spec_function("tiny25_qa")
def get_tiny25_qa_spec() -> RunSpec:
    adapter_spec = get_generation_adapter_spec(
        instructions="Answer the question with one word or number.",
        input_noun="Question",
        output_noun="Answer",
        max_train_instances=2,
        max_tokens=5,
    )
    return RunSpec(
        name="tiny25_qa",
        scenario_spec=ScenarioSpec(class_name="tiny25_helm.Tiny25QAScenario"),
        adapter_spec=adapter_spec,
        metric_specs=get_f1_metric_specs(),  # exact_match, quasi_exact_match, f1_score + generic
        groups=["tiny25_qa"],
    )


@run_spec_function("tiny25_mc")
def get_tiny25_mc_spec() -> RunSpec:
    adapter_spec = get_multiple_choice_joint_adapter_spec(
        instructions="Answer with the letter of the correct option only.",
        input_noun="Question",
        output_noun="Answer",
        max_train_instances=2,
        num_outputs=1,
    )
    return RunSpec(
        name="tiny25_mc",
        scenario_spec=ScenarioSpec(class_name="tiny25_helm.Tiny25MCScenario"),
        adapter_spec=adapter_spec,
        metric_specs=get_exact_match_metric_specs(),
        groups=["tiny25_mc"],
    )


def _answer(prompt: str) -> str:
    # the question being asked is the last "Question:" block of the prompt
    last = prompt.rsplit("Question:", 1)[-1]
    low = last.lower()
    even = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 2 == 0
    for key, _, answer, policy in QA:
        if key in low:
            right = policy == "right" or (policy == "hash" and even)
            return answer if right else WRONG[key]
    for key, _, choices, r, policy in MC:
        if key in low:
            right = policy == "right" or (policy == "hash" and even)
            return "ABC"[r] if right else "ABC"[(r + 1) % 3]
    return "unknown"


class ScriptedClient(CachingClient):
    """Mock client: a deterministic function of the prompt (see module docstring)."""

    def __init__(self, cache_config: CacheConfig):
        super().__init__(cache_config=cache_config)

    def make_request(self, request: Request) -> RequestResult:
        raw: Dict[str, Any] = {"engine": request.model_engine, "prompt": request.prompt,
                               "num_completions": request.num_completions}

        def do_it() -> Dict[str, Any]:
            return {"completions": [_answer(request.prompt)] * request.num_completions}

        response, cached = self.cache.get(CachingClient.make_cache_key(raw, request), wrap_request_time(do_it))
        completions = [GeneratedOutput(text=t, logprob=0.0, tokens=[Token(text=t, logprob=0.0)])
                       for t in response["completions"]]
        return RequestResult(success=True, cached=cached, request_time=response["request_time"],
                             request_datetime=response.get("request_datetime"), completions=completions,
                             embedding=[])
