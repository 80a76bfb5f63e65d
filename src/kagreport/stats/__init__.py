"""The mathematics of kagreport, on NumPy only.

The paired sign-flip test (exact enumeration, exact lattice convolution, Monte Carlo),
the percentile bootstrap interval of a mean, Holm's step-down adjustment, Wilson score
intervals, the Pareto frontier of cost against value, Krippendorff's alpha with its
bootstrap; clustered means and the paired t test, pass@k and pass^k, prediction-powered
inference; power and sample size (normal approximation), Holm's levels with the
test-based interval that agrees with them, and rank intervals and tie groups from exact
McNemar tests. Every function documents its formula and source; results are small frozen
dataclasses. This layer imports only NumPy, the standard library and
kagreport's exception tree (tests/test_architecture.py checks); SciPy (t quantiles, the
``stats`` extra) only inside the functions that need it. Anything above ``evaluation``
must import it lazily to keep ``import kagreport`` light.
"""

from __future__ import annotations

from kagreport.stats._bootstrap import bootstrap_mean_interval
from kagreport.stats._clustered import clustered_mean
from kagreport.stats._holm import holm_adjust
from kagreport.stats._intervals import (
    ConfidenceInterval,
    interval_from_test,
    pareto_front,
    wilson_interval,
)
from kagreport.stats._paired import paired_difference
from kagreport.stats._power import minimum_detectable_effect, power, required_sample_size
from kagreport.stats._ppi import ppi_mean
from kagreport.stats._ranks import rank_sets
from kagreport.stats._signflip import SignFlipResult, sign_flip_test

__all__ = [
    "ConfidenceInterval",
    "SignFlipResult",
    "bootstrap_mean_interval",
    "clustered_mean",
    "holm_adjust",
    "interval_from_test",
    "minimum_detectable_effect",
    "paired_difference",
    "pareto_front",
    "power",
    "ppi_mean",
    "rank_sets",
    "required_sample_size",
    "sign_flip_test",
    "wilson_interval",
]
