"""Names the run's modules share: outcome labels, the kag cost columns, the text columns."""

from __future__ import annotations

__all__ = ["ITEM_TEXTS", "KAG_COSTS", "OUTCOMES", "TEXTS"]

#: Outcome labels by code; code -1 is an unknown outcome.
OUTCOMES = ("correct", "incorrect", "error")
#: Cost columns a kag run records (seconds, element counts, bytes).
KAG_COSTS = (
    "generation_secs",
    "retrieval_secs",
    "vertices",
    "relationships",
    "properties",
    "context_bytes",
)
#: Every text column of a run, in document order.
TEXTS = ("question_texts", "options", "responses", "references", "explanations", "errors")
#: Text columns of the item, usually the same on every system's row of it (the run's
#: document then stores them once per item).
ITEM_TEXTS = ("question_texts", "options", "references")
