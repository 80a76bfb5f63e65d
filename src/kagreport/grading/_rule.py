"""kag's grading rule for one response (kag ``src/subcommand/stats/mod.rs``)."""

from __future__ import annotations

__all__ = ["WHITE_SPACE", "grade_response"]

#: Unicode White_Space, the characters Rust's ``str::trim`` removes.
#: (Python's ``str.strip()`` also removes U+001C..U+001F, which kag keeps.)
WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def grade_response(response: str, answer: str) -> bool:
    """Whether a response selects ``answer`` under kag's rule.

    The response is trimmed of Unicode White_Space at both ends (Rust
    ``str::trim``) and compared with the answer key, untrimmed, ignoring
    ASCII case only (Rust ``eq_ignore_ascii_case``): ``" b\\n"`` selects
    ``"B"``; ``"B."``, ``"Answer: B"`` and a full-width ``"Ｂ"`` do not.
    """
    trimmed = response.strip(WHITE_SPACE)
    if len(trimmed) != len(answer):
        return False
    if trimmed == answer:
        return True
    # bytes.lower() folds ASCII letters only, like eq_ignore_ascii_case.
    return (
        trimmed.encode("utf-8", "surrogatepass").lower()
        == answer.encode("utf-8", "surrogatepass").lower()
    )
