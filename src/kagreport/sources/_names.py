"""The names of the formats :func:`kagreport.sources.read_run` reads and
:func:`kagreport.sources.convert_run` writes: constants the command line's parser needs
without loading a reader."""

from __future__ import annotations

__all__ = ["FORMAT_NAMES", "TARGETS"]

#: The formats read_run reads, in the order it tries them (the keys of ``FORMATS``).
FORMAT_NAMES = (
    "kagreport",
    "kag",
    "lm-eval",
    "helm",
    "promptfoo",
    "openai-evals",
    "inspect",
    "eee",
)
#: The formats convert_run writes.
TARGETS = ("kagreport", "eee")
