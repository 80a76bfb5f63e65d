"""A scripted completion function for OpenAI evals, written for the kagreport fixtures of issue 25 (CC0).

It answers from a fixed table keyed by the last user message and, like evals' own OpenAI completion
functions, records a `sampling` event for each call. Unknown prompts get "I don't know.".
"""

from evals.api import CompletionFn, CompletionResult
from evals.prompt.base import is_chat_prompt
from evals.record import record_sampling

ANSWERS = {
    "Once upon a ": "time",
    "The first US president was ": "Abraham Lincoln",
    "OpenAI was founded in 20": "15",
    "What is the capital of France?": "Paris",
    "How many legs does a spider have? Answer with a number.": "eight",
    "Which gas do plants absorb from the air? A) Oxygen B) Carbon dioxide C) Helium D) Neon. Answer with the letter only.": "B",
    "Which animal is a mammal? A) Shark B) Trout C) Dolphin D) Octopus. Answer with the letter only.": "D",
    "Name the largest ocean on Earth.": "The Pacific Ocean",
    "Who wrote Romeo and Juliet?": "William Shakespeare wrote it.",
    "What is the chemical symbol for gold?": "It is Ag.",
    "What is the tallest mountain on Earth?": "Mount Everest",
    "Which is the longest river in Africa?": "the Nile river",
}


class ScriptedResult(CompletionResult):
    def __init__(self, text: str) -> None:
        self.text = text

    def get_completions(self) -> list[str]:
        return [self.text]


class ScriptedCompletionFn(CompletionFn):
    def __init__(self, **kwargs) -> None:  # the registry passes registry=...
        pass

    def __call__(self, prompt, **kwargs) -> ScriptedResult:
        if is_chat_prompt(prompt):
            last = [m for m in prompt if m["role"] == "user"][-1]["content"]
        else:
            last = str(prompt)
        text = ANSWERS.get(last, "I don't know.")
        record_sampling(prompt=prompt, sampled=text)
        return ScriptedResult(text)
