"""Slugs: the file-name- and URL-safe names of the site's pages."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["SLUG_LIMIT", "Slugs", "setup_slugs", "slugify"]

#: Characters a slug keeps: a comparison's file name holds three (run, candidate, baseline)
#: and must stay under the 255 bytes file systems allow.
SLUG_LIMIT = 64


def slugify(text: str) -> str:
    """A file-name-safe, URL-safe form of ``text``: ``[a-z0-9._-]``, no ``--``, never empty,
    at most ``SLUG_LIMIT`` characters."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-.")
    return slug[:SLUG_LIMIT].rstrip("-.") or "x"


class Slugs:
    """Unique slugs within one namespace, assigned in call order (deterministic)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def __call__(self, text: str) -> str:
        base = slugify(text)
        slug, n = base, 1
        while slug in self.used:
            n += 1
            slug = f"{base}-{n}"
        self.used.add(slug)
        return slug


def setup_slugs(names: Sequence[str]) -> dict[str, str]:
    """The address of each setup's page: its own name when that is already safe in a URL
    and a file name (kag's setup names are), else a slug that none of those takes.

    Never depends on rank, so a page keeps its address when accuracies change.
    """
    # "--" separates the parts of a comparison's file name: a name holding it is not safe.
    safe = {
        n
        for n in names
        if len(n) <= SLUG_LIMIT and re.fullmatch(r"[a-z0-9][a-z0-9._-]*", n) and "--" not in n
    }
    slugs = Slugs()
    slugs.used |= safe
    found = {name: name for name in safe}
    for name in sorted(set(names) - safe):
        found[name] = slugs(name)
    return {name: found[name] for name in names}
