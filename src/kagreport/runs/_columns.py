"""Names the run's modules share: outcome labels, the kag cost columns, the text columns."""

from __future__ import annotations

__all__ = ["ITEM_TEXTS", "KAG_COSTS", "OUTCOMES", "ROW_TEXTS", "TEXTS"]

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
#: Text columns that belong to the item (the same on every system's row of it).
ITEM_TEXTS = ("question_texts", "options")
#: Text columns of one system's row.
ROW_TEXTS = ("responses", "references", "explanations", "errors")
#: Every text column of a run, in document order.
TEXTS = (*ITEM_TEXTS, *ROW_TEXTS)
