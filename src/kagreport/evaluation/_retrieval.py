"""Ranked-retrieval metrics with binary relevance, per item.

Definitions (Manning, Raghavan and Schuetze 2008, ch. 8; Jaervelin and Kekaelaeinen 2002
for nDCG), for the top ``k`` retrieved ids (duplicates count once, at their first rank)
and the set R of relevant ids:

- ``recall@k`` = |top-k ∩ R| / |R|
- ``precision@k`` = |top-k ∩ R| / k (k, not the number retrieved: a short list is penalised)
- ``hit@k`` = 1 if top-k ∩ R is not empty, else 0
- ``complete@k`` = 1 if R ⊆ top-k, else 0 (fast-graphrag's "perfect retrieval")
- ``mrr`` = 1 / rank of the first relevant id (0 if none is retrieved); no cut-off
- ``ndcg@k`` = DCG@k / IDCG@k with DCG = Σ rel_i / log2(i + 1) over ranks i = 1..k and
  IDCG the DCG of min(k, |R|) relevant ids at the top

Every metric is undefined (absent) for an item with no relevant id.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["DEFAULT_KS", "retrieval_scores"]

DEFAULT_KS = (1, 3, 5, 10)


def retrieval_scores(
    retrieved: Sequence[str], relevant: Sequence[str], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, float]:
    """Every metric of the module docstring for one item, keyed ``recall@5``, ``mrr``, ...

    Returns an empty dict when ``relevant`` is empty (all undefined).

    Raises
    ------
    ValueError
        If a k is not a positive integer.
    """
    gold = set(relevant)
    if not gold:
        return {}
    ranked = list(dict.fromkeys(retrieved))  # first occurrence of each id, in rank order
    hits = [doc in gold for doc in ranked]
    scores: dict[str, float] = {}
    first = next((i for i, hit in enumerate(hits) if hit), None)
    scores["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, not {k!r}")
        found = sum(hits[:k])
        scores[f"recall@{k}"] = found / len(gold)
        scores[f"precision@{k}"] = found / k
        scores[f"hit@{k}"] = float(found > 0)
        scores[f"complete@{k}"] = float(found == len(gold))
        dcg = sum(1.0 / math.log2(i + 2) for i, hit in enumerate(hits[:k]) if hit)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(gold))))
        scores[f"ndcg@{k}"] = dcg / ideal
    return scores
