"""Checks of an :class:`~kagreport.evaluation.judges._llm.LLMJudge`'s settings, each
failing with a ``ValueError`` that names the parameter and the value given."""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Mapping, Sequence

from kagreport.evaluation.judges._client import _MAX_INT64, _is_int
from kagreport.evaluation.judges._verdict import _SCALES, _SURROGATE, _shorten

__all__: list[str] = []

# Bounds of the settings.
_MAX_SECONDS = 3600.0
_MAX_RETRIES = 100
_MIN_RESPONSE_BYTES = 1024  # a completion with a few words in it
_MAX_RESPONSE_BYTES = 1 << 30


def _is_real(value: object) -> bool:
    """A finite int or float (not a bool), one that converts to a finite float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int beyond float range
        return False


def _check_text(parameter: str, value: str) -> None:
    if _SURROGATE.search(value) is not None:
        raise ValueError(
            f"`{parameter}` holds a lone UTF-16 surrogate, which cannot be encoded as UTF-8; "
            f"got {_shorten(repr(value))}"
        )


# Long but flat (over 80 lines): one independent check per setting, in the order of
# LLMJudge's signature, so that the first bad setting is the one reported.
def _check_settings(
    *,
    name: object,
    model: object,
    base_url: object,
    prompt: object,
    system_prompt: object,
    api_key: object,
    scale: object,
    criteria: object,
    score_range: object,
    temperature: object,
    seed: object,
    max_tokens: object,
    timeout: object,
    deadline: object,
    max_retries: object,
    backoff: object,
    max_concurrency: object,
    max_response_bytes: object,
) -> tuple[tuple[str, ...], tuple[float, float]]:
    """Validate the constructor's arguments; the criteria and score range to use."""
    for parameter, value in (("name", name), ("model", model), ("base_url", base_url)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"`{parameter}` must be a non-empty string, not {value!r}")
        _check_text(parameter, value)
    if "@" in urllib.parse.urlsplit(str(base_url).strip()).netloc:
        # The base URL is in the identity, hence in every report: no key may ride in it.
        # (The value is not repeated: it holds a secret.)
        raise ValueError(
            "`base_url` must not hold credentials (user:password@host); give the key as "
            "`api_key` (`api_key_env` in a judges file)"
        )
    if not isinstance(prompt, str):
        raise ValueError(f"`prompt` must be a non-empty Jinja2 template string, not {prompt!r}")
    _check_text("prompt", prompt)
    if system_prompt is not None:
        if not isinstance(system_prompt, str):
            raise ValueError(
                f"`system_prompt` must be a template string or None, not {system_prompt!r}"
            )
        _check_text("system_prompt", system_prompt)
    if api_key is not None and not isinstance(api_key, str):
        raise ValueError(f"`api_key` must be a string or None, not {type(api_key).__name__}")
    if not isinstance(scale, str) or scale not in _SCALES:
        raise ValueError(f"`scale` must be one of {', '.join(_SCALES)}; got {scale!r}")
    if isinstance(criteria, str | bytes):
        raise ValueError(f"`criteria` must be a sequence of names, not the string {criteria!r}")
    if isinstance(criteria, Mapping) or not isinstance(criteria, Sequence):
        raise ValueError(
            f"`criteria` must be a sequence of names (a list or tuple of strings), not "
            f"{type(criteria).__name__} {criteria!r}"
        )
    names = tuple(criteria)
    if not names or any(not isinstance(c, str) or not c.strip() for c in names):
        raise ValueError(f"`criteria` must be non-empty strings, not {criteria!r}")
    for criterion in names:
        _check_text("criteria", criterion)
    if len(set(names)) != len(names):
        raise ValueError(f"`criteria` must not repeat: {criteria!r}")
    if scale != "json" and len(names) != 1:
        raise ValueError(
            f"`criteria` must have one name for scale {scale!r} (several need scale 'json'); "
            f"got {criteria!r}"
        )
    if score_range is not None and scale != "json":
        raise ValueError(f"`score_range` applies to scale 'json' only, not {scale!r}")
    pair = (0.0, 1.0) if score_range is None else score_range
    if (
        isinstance(pair, str | bytes | Mapping)
        or not isinstance(pair, Sequence)
        or len(pair) != 2
        or not all(_is_real(v) for v in pair)
        or not float(pair[0]) < float(pair[1])
        or not math.isfinite(float(pair[1]) - float(pair[0]))
    ):
        raise ValueError(
            "`score_range` must be two finite numbers (low, high) with low < high, not "
            f"{score_range!r}"
        )
    low, high = float(pair[0]), float(pair[1])
    if not _is_real(temperature) or temperature < 0:  # type: ignore[operator]
        raise ValueError(f"`temperature` must be a finite number >= 0, not {temperature!r}")
    if seed is not None and (not _is_int(seed) or not -_MAX_INT64 - 1 <= seed <= _MAX_INT64):
        raise ValueError(f"`seed` must be an integer (64-bit) or None, not {seed!r}")
    if max_tokens is not None and (not _is_int(max_tokens) or not 1 <= max_tokens <= _MAX_INT64):
        raise ValueError(
            f"`max_tokens` must be a positive integer (below 2**63) or None, not {max_tokens!r}"
        )
    for parameter, value in (("timeout", timeout), ("backoff", backoff)):
        if not _is_real(value) or not 0 < value <= _MAX_SECONDS:  # type: ignore[operator]
            raise ValueError(
                f"`{parameter}` must be a number of seconds, more than 0 and at most "
                f"{_MAX_SECONDS:g}, not {value!r}"
            )
    if deadline is not None and (not _is_real(deadline) or not deadline > 0):  # type: ignore[operator]
        raise ValueError(
            "`deadline` must be a number of seconds, more than 0, or None (enough for every "
            f"attempt to time out), not {deadline!r}"
        )
    if not _is_int(max_retries) or not 0 <= max_retries <= _MAX_RETRIES:
        raise ValueError(
            f"`max_retries` must be an integer from 0 to {_MAX_RETRIES}, not {max_retries!r}"
        )
    if not _is_int(max_concurrency) or max_concurrency < 1:
        raise ValueError(f"`max_concurrency` must be an integer >= 1, not {max_concurrency!r}")
    if not _is_int(max_response_bytes) or not (
        _MIN_RESPONSE_BYTES <= max_response_bytes <= _MAX_RESPONSE_BYTES
    ):
        raise ValueError(
            f"`max_response_bytes` must be an integer from {_MIN_RESPONSE_BYTES} to "
            f"{_MAX_RESPONSE_BYTES} (1 GiB), not {max_response_bytes!r}"
        )
    return names, (low, high)
