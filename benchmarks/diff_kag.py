"""Differential check: ``kagreport stats`` against the real ``kag stats``, byte for byte.

Usage (from the repository root)::

    .venv/bin/python benchmarks/diff_kag.py --kag /work/kag-build/target/release/kag
    .venv/bin/python benchmarks/diff_kag.py --kag KAG --random 40 --seed 7   # fresh hostile trees
    .venv/bin/python benchmarks/diff_kag.py --kag KAG --only item5 --keep    # one group, keep trees
    .venv/bin/python benchmarks/diff_kag.py              # no kag given: a note, exit 0

A kag binary comes from ``shared/kag-real/build.sh`` (kag's own stats code built offline). This
script is never part of ``make test``.

What it does: builds a set of kag result trees in a temporary folder (the bundled MMLU-Pro
example, SIMULATED runs with and without a prefix, one hand-made hostile tree per item of
issue #11, and with ``--random N`` that many randomly mutated hostile trees), runs both programs
over many command lines in each tree (``stats`` text and JSON, ``stats find`` text and JSON with
several patterns, flag errors), and compares the **exit code and stdout** of each pair. Stderr is
not compared (kag's log lines and clap's messages are worded differently by design) except for
the ``-q`` case (whether anything is printed at all).

Each case ends in one of three classes:

* **identical**: same exit code, same stdout bytes;
* **deviation**: a difference documented in ``docs/KAG_STATS_SPEC.md`` (the decisions of
  sections 2.3 and 3, the deviations of section 5), recognised by a rule of its own (below);
* **different**: anything else; the smallest unified diff of stdout is printed for each.

``find`` in text mode runs kag with a stand-in ``fzf`` on the ``PATH`` that copies its input to
its output, so kag's candidate lines can be compared with kagreport's (printed without ``--fzf``).
kag runs with ``RUST_BACKTRACE=0`` and both with ``LC_ALL=C.UTF-8``, in the tree's folder, with
relative paths, so the paths they print are the same text.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = [20.0]  # seconds per command (--timeout); a FIFO blocks kag's `find` for ever

# ---------------------------------------------------------------------------------------------
# Result files and trees
# ---------------------------------------------------------------------------------------------

_CONFIG = (
    '{"augmented_generation": null, "provider": "x", "model": "m", "temperature": 0.0,'
    ' "tokens": null}'
)
_KAG_CONFIG = (
    '{"augmented_generation": {"retriever": "embedder", "database": "neo4j"}, "provider": "x",'
    ' "model": "m", "temperature": 0.0, "tokens": null}'
)


def ok(result: str = "A", *, time: str = '{"secs": 1, "nanos": 5}', prompt: str = "p",
       config: str = _CONFIG, retrieval: str | None = None, extra: str = "") -> str:  # fmt: skip
    """The text of an ``ok`` result file; every part is raw JSON text (so it can be hostile)."""
    ret = "" if retrieval is None else f', "retrieval": {retrieval}'
    return (
        f'{{"ok": {{"result": {json.dumps(result)}, {extra}"stats": '
        f'{{"prompt": {json.dumps(prompt)}, "config": {config}, "time": {time}{ret}}}}}}}'
    )


def retrieval(vertices: str = "3", *, vec: str = "[0.5, -0.25]", time: str = "[0, 7]") -> str:
    """A KAG ``retrieval`` object (raw JSON text)."""
    return (
        '{"result": "ctx", "stats": {"embedder": {"embedding": {"document": "Q?", "vec": '
        f'{vec}}}, "database": {{"neo4j": {{"vertices": {vertices}, "relationships": 2, '
        f'"properties": 1, "time": [0, 1]}}}}, "time": {time}}}}}}}'
    )


def kag_ok(result: str = "A", **kwargs: str) -> str:
    """An ``ok`` file of a KAG setup (with retrieval)."""
    vertices = kwargs.pop("vertices", "3")
    vec = kwargs.pop("vec", "[0.5, -0.25]")
    return ok(result, config=_KAG_CONFIG, retrieval=retrieval(vertices, vec=vec), **kwargs)


def mcq(answer: str | None = "A") -> dict[str, object]:
    output: dict[str, object] = {"type": "MCQ", "options": {"A": "a", "B": "b", "C": "c"}}
    if answer is not None:
        output["answer"] = answer
    return {"input": "Q?", "output": output}


FIFO = object()  # a file entry that is made a named pipe


@dataclass
class Tree:
    """A kag run to build: ``datasets.json`` and ``results/``, and the patterns to search."""

    name: str
    group: str
    files: Mapping[str, object] = field(default_factory=dict)
    truth: object = None  # JSON value, or the file's text
    prefix: str = ""
    patterns: tuple[str, ...] = (".", "^A$", "(?i)b")
    deviations: frozenset[str] = frozenset()
    build: Callable[[Path], None] | None = None  # instead of files/truth
    at: Path | None = None  # an existing tree (``--tree``): compared in place, never written

    def write(self, root: Path) -> None:
        (root / "results").mkdir(parents=True)
        if self.build is not None:
            self.build(root)
            return
        truth = self.truth if self.truth is not None else {"ds": {f"q{i}": mcq() for i in range(3)}}
        if isinstance(truth, bytes):
            (root / "datasets.json").write_bytes(truth)
        else:
            text = truth if isinstance(truth, str) else json.dumps(truth, indent=2)
            (root / "datasets.json").write_text(text, encoding="utf-8")
        for relative, body in self.files.items():
            path = os.path.join(os.fsencode(root / "results"), os.fsencode(relative))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if body is FIFO:
                os.mkfifo(path)
            elif isinstance(body, bytes):
                Path(os.fsdecode(path)).write_bytes(body)
            else:
                assert isinstance(body, str)
                Path(os.fsdecode(path)).write_text(body, encoding="utf-8")


def _nest(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def hostile_trees() -> list[Tree]:
    """One small tree per item of issue #11 (and a few classics), each item's cases together."""
    q = "ds/q0/"
    base = {q + "good.json": ok("A"), "ds/q1/good.json": ok("b"), "ds/q2/good.json": ok("C")}

    def with_files(files: Mapping[str, object]) -> dict[str, object]:
        return {**base, **files}

    items: list[Tree] = [
        Tree(
            "names",
            "item1",
            with_files(
                {
                    q + "bad-provider.json": ok(config=_CONFIG.replace('"x"', '"Bad Provider"')),
                    q + "empty-provider.json": ok(config=_CONFIG.replace('"x"', '""')),
                    q + "bad-retriever.json": ok(
                        config=_KAG_CONFIG.replace('"embedder"', '"R_X"'), retrieval=retrieval()
                    ),
                    q + "bad-database.json": ok(
                        config=_KAG_CONFIG.replace('"neo4j"', '""'), retrieval=retrieval()
                    ),
                }
            ),
        ),
        Tree(
            "vectors",
            "item2",
            with_files(
                {
                    q + f"vec{i}.json": kag_ok(vec=vec)
                    for i, vec in enumerate(
                        [
                            '"notalist"',
                            "{}",
                            '["a"]',
                            "[1.0, null]",
                            "[1e400]",
                            "[]",
                            "[1, -2.5e-3, 0]",
                            "[true]",
                        ]
                    )
                }
            ),
        ),
        Tree(
            "tokens",
            "item3",
            with_files(
                {
                    q + "t32.json": ok(
                        config=_CONFIG.replace('"tokens": null', '"tokens": 4294967296')
                    ),
                    q + "t64.json": ok(
                        config=_CONFIG.replace('"tokens": null', '"tokens": 18446744073709551615')
                    ),
                    q + "tneg.json": ok(config=_CONFIG.replace('"tokens": null', '"tokens": -1')),
                }
            ),
        ),
        Tree(
            "negative-zero",
            "item4",
            with_files(
                {
                    q + "secs.json": ok(time='{"secs": -0, "nanos": 0}'),
                    q + "nanos.json": ok(time='{"secs": 1, "nanos": -0}'),
                    q + "float.json": ok(time='{"secs": 1.0, "nanos": 0}'),
                    q + "temp.json": ok(
                        config=_CONFIG.replace('"temperature": 0.0', '"temperature": -0')
                    ),
                }
            ),
        ),
        Tree(
            "duplicate-keys",
            "item5",
            with_files(
                {
                    q + "result2.json": ok("A", extra='"result": "B", '),
                    q + "ok2.json": '{"ok": {"result": "A", "stats": {}}, "ok": ' + ok("A")[6:],
                    q + "secs2.json": ok(time='{"secs": 1, "secs": 2, "nanos": 0}'),
                }
            ),
        ),
        Tree(
            "duplicate-answer",
            "item5",
            base,
            truth='{"ds": {"q0": {"input": "Q?", "output": '
            '{"type": "MCQ", "options": {"A": "a"}, "answer": "A", "answer": "B"}}}}',
        ),
        Tree(
            "duplicate-type",
            "item5",
            base,
            truth='{"ds": {"q0": {"input": "Q?", "output": '
            '{"type": "MCQ", "type": "MCQ", "options": {"A": "a"}, "answer": "A"}}}}',
        ),
        Tree(
            "nesting",
            "item6",
            with_files(
                {
                    q + f"deep{depth}.json": ok(extra=f'"x": {_nest(depth)}, ')
                    for depth in (100, 126, 127, 128, 1000, 20000)
                }
            ),
        ),
        *(
            Tree(
                f"mcq-nesting-{depth}",
                "item6",
                base,
                truth='{"ds": {"q0": {"input": "Q?", '
                '"output": {"type": "MCQ", "options": {"A": "a"}, "answer": "A", "x": '
                + _nest(depth)
                + "}}}}",
            )
            for depth in (100, 122, 123, 124, 125, 200)
        ),
        Tree(
            "floats",
            "item7",
            {
                q + "big.json": ok(time='{"secs": 100000000000000000, "nanos": 0}'),
                "ds/q1/tiny.json": ok("B", time='{"secs": 0, "nanos": 1}'),
                "ds/q2/mid.json": kag_ok(
                    "C", time='{"secs": 9999999999999999, "nanos": 999999999}'
                ),
                "ds2/q0/x.json": ok(time='{"secs": 1000000000000000, "nanos": 0}'),
            },
            truth={"ds": {f"q{i}": mcq() for i in range(3)}, "ds2": {"q0": mcq()}},
        ),
        Tree(
            "regex",
            "item8",
            {
                q + "arabic.json": ok("\u0663"),
                q + "words.json": ok("hello world, the cat"),
                q + "upper.json": ok("HELLO"),
                q + "nul.json": ok("a\u0000b"),
                q + "stars.json": ok("aaa bbb"),
                q + "greek.json": ok("\u03b1\u03b2\u03b3 \u00e9"),
            },
            patterns=(
                r"\d",
                r"^\w+$",
                r"\s",
                r"\bcat\b",
                r"[a-z&&[^aeiou]]+",
                r"[a-z--b]",
                r"\<hello",
                r"\b{start}w",
                "(?x) h e l l o",
                r"(?u:\w)",
                r"(?-u:\w)+",
                r"\u{48}",
                "a**",
                "b{1001}",
                r"\Qa.b\E",
                r"\0",
                r"\p{Greek}",
                "(?i)HELLO",
                r"\x{e9}",
                "[[:alpha:]]+",
            ),
        ),
        Tree(
            "huge-time",
            "item10",
            {q + "s.json": ok(time='{"secs": 18446744073709551605, "nanos": 0}')},
            deviations=frozenset({"5.1"}),
        ),
        Tree(
            "time-sum-2^63",
            "item10",
            {
                q + "s.json": ok(time="[9223372036854775808, 0]"),
                "ds/q1/s.json": ok(time="[9223372036854775808, 0]"),
            },
            deviations=frozenset({"5.1"}),
        ),
        Tree(
            "vertices-wrap",
            "item10",
            {
                q + "s.json": kag_ok(vertices="18446744073709551615"),
                "ds/q1/s.json": kag_ok(vertices="1"),
            },
            deviations=frozenset({"5.1"}),
        ),
        Tree(
            "fifo",
            "item11",
            with_files({q + "pipe.json": FIFO}),
            patterns=(".",),
            deviations=frozenset({"5.2"}),
        ),
        Tree(
            "non-utf8-folder",
            "item12",
            with_files({"ds/q\udcff/s.json": ok("A")}),
            deviations=frozenset({"5.3"}),
        ),
        # classics: prefixes, names, errors, whitespace, case
        Tree(
            "prefix",
            "classic",
            {
                q + "run1-a.json": ok("A"),
                q + "a.json": ok("B"),
                q + "run1-.json": ok("A"),
                q + "run1-B.json": ok("A"),
            },
            prefix="run1-",
        ),
        Tree(
            "mixed",
            "classic",
            {
                q + "err.json": '{"error": "boom"}',
                q + "both.json": '{"ok": 1, "error": "x"}',
                q + "ws.json": ok("\u3000 a \n"),
                q + "dot.json": ok("a."),
                q + "tmp.json.tmp": ok(),
                "ds/q1/Upper.json": ok(),
                "ds/q1/x_y.json": ok(),
                "ds/qfree/a.json": ok(),
                "ds/q9/a.json": ok(),
                "ds-unknown/q0/a.json": ok(),
                "BadDs/q0/a.json": ok(),
                "ds/q2/noanswer.json": ok(),
                "ds/q0/deep/x.json": ok(),
            },
            truth={"ds": {"q0": mcq(), "q1": mcq("b"), "q2": mcq(None), "qfree": {"input": "x"}}},
        ),
    ]
    return items


def _symlinks(root: Path) -> None:
    """Symlinks at levels 1-3 (to a file, a folder, dangling, a loop); a folder ``x.json``."""
    q0 = root / "results" / "ds" / "q0"
    q0.mkdir(parents=True)
    (root / "datasets.json").write_text(json.dumps({"ds": {"q0": mcq()}}), encoding="utf-8")
    (q0 / "real.json").write_text(ok("A"), encoding="utf-8")
    (q0 / "link.json").symlink_to("real.json")
    (q0 / "dirlink.json").symlink_to(".")
    (q0 / "dangling.json").symlink_to("missing.json")
    (q0 / "loop.json").symlink_to("loop.json")
    (q0 / "folder.json").mkdir()
    (q0 / "folder.json" / "inner.json").write_text(ok("A"), encoding="utf-8")
    (root / "results" / "linked-ds").symlink_to("ds")
    (root / "results" / "ds" / "q1").symlink_to("q0")


def _deep(root: Path) -> None:
    """A result 40 folders deep (find visits every depth; stats stops at level three)."""
    (root / "datasets.json").write_text(json.dumps({"ds": {"q0": mcq()}}), encoding="utf-8")
    deep = root / "results" / "ds" / "q0" / "/".join(f"d{i}" for i in range(40))
    deep.mkdir(parents=True)
    (deep / "a.json").write_text(ok("A"), encoding="utf-8")
    (root / "results" / "ds" / "q0" / "b.json").write_text(ok("a"), encoding="utf-8")


def _datasets_folder(root: Path) -> None:
    """``datasets.json`` is a folder; ``results`` holds one good file."""
    (root / "datasets.json").mkdir()
    (root / "results" / "ds" / "q0").mkdir(parents=True)
    (root / "results" / "ds" / "q0" / "a.json").write_text(ok("A"), encoding="utf-8")


def _results_file(root: Path) -> None:
    """``results`` is a regular file (a result file itself)."""
    (root / "datasets.json").write_text(json.dumps({"ds": {"q0": mcq()}}), encoding="utf-8")
    (root / "results").rmdir()
    (root / "results").write_text(ok("A"), encoding="utf-8")


def fresh_trees() -> list[Tree]:
    """Hostile trees of a second round: bytes, numbers at type limits, datasets variations."""
    q = "ds/q0/"
    base = {q + "good.json": ok("A"), "ds/q1/good.json": ok("b"), "ds/q2/good.json": ok("C")}
    good = ok("A").encode()
    encodings = {
        "bom.json": b"\xef\xbb\xbf" + good,
        "utf16.json": ok("A").encode("utf-16"),
        "garbage.json": good + b" x",
        "trailing-ws.json": good + b" \n\t\r\n",
        "comment.json": b"// c\n" + good,
        "nul-after.json": good + b"\x00",
        "nul-inside.json": ok("A\x00").encode(),
        "bad-utf8.json": good.replace(b'"A"', b'"A\xff"'),
        "overlong.json": good.replace(b'"A"', b'"\xc0\x81"'),
        "surrogate.json": good.replace(b'"A"', b'"\\ud800"'),
        "pair.json": good.replace(b'"A"', b'"\\ud83d\\ude00"'),
        "escaped-a.json": good.replace(b'"A"', b'"\\u0041"'),
        "escapes.json": good.replace(b'"A"', b'" \\/\\t\\"\\\\A\\b"'),
        "raw-tab.json": good.replace(b'"A"', b'"\tA"'),
        "empty.json": b"",
        "ws-only.json": b" \n",
        "two-docs.json": good + good,
        "utf8-bom-only.json": b"\xef\xbb\xbf",
    }
    numbers = {  # JSON text of a typed field -> where it goes
        "secs-1e2": ("time", '{"secs": 1e2, "nanos": 0}'),
        "secs-1.0": ("time", '{"secs": 1.0, "nanos": 0}'),
        "secs-over": ("time", '{"secs": 18446744073709551616, "nanos": 0}'),
        "secs-leading0": ("time", '{"secs": 01, "nanos": 0}'),
        "secs-plus": ("time", '{"secs": +1, "nanos": 0}'),
        "nanos-carry": ("time", '{"secs": 1, "nanos": 1500000000}'),
        "nanos-u32max": ("time", '{"secs": 0, "nanos": 4294967295}'),
        "nanos-over": ("time", '{"secs": 0, "nanos": 4294967296}'),
        "nanos-neg": ("time", '{"secs": 0, "nanos": -1}'),
        "time-seq-short": ("time", "[1]"),
        "time-seq-carry": ("time", "[18446744073709551615, 1000000000]"),
        "time-missing-nanos": ("time", '{"secs": 1}'),
        "time-extra": ("time", '{"secs": 1, "nanos": 0, "x": 1}'),
        "temp-int": ("temperature", "1"),
        "temp-inf": ("temperature", "1e400"),
        "temp-under": ("temperature", "1e-400"),
        "temp-denormal": ("temperature", "5e-324"),
        "temp-negzero": ("temperature", "-0.0"),
        "temp-huge-mantissa": ("temperature", "1" * 400 + ".5"),
        "temp-string": ("temperature", '"0.5"'),
        "temp-null": ("temperature", "null"),
        "temp-exp-big": ("temperature", "0e999999999999"),
        "tokens-1.0": ("tokens", "1.0"),
        "tokens-1e2": ("tokens", "1e2"),
        "tokens-negzero": ("tokens", "-0"),
        "tokens-over": ("tokens", "18446744073709551616"),
        "tokens-string": ("tokens", '"5"'),
    }
    number_files: dict[str, object] = {}
    for name, (where, text) in numbers.items():
        if where == "time":
            number_files[q + name.replace(".", "p") + ".json"] = ok(time=text)
        elif where == "temperature":
            number_files[q + name.replace(".", "p") + ".json"] = ok(
                config=_CONFIG.replace('"temperature": 0.0', f'"temperature": {text}')
            )
        else:
            number_files[q + name.replace(".", "p") + ".json"] = ok(
                config=_CONFIG.replace('"tokens": null', f'"tokens": {text}')
            )
    counts = {
        "v-1.0": "1.0", "v-1e2": "1e2", "v-over": "18446744073709551616", "v-neg": "-1",
        "v-negzero": "-0", "v-string": '"3"', "v-null": "null", "v-max": "18446744073709551615",
    }  # fmt: skip
    count_files = {
        "ds/q1/" + name.replace(".", "p") + ".json": kag_ok("b", vertices=v)
        for name, v in counts.items()
    }
    count_files |= {
        "ds/q1/vec-huge-mantissa.json": kag_ok("b", vec="[" + "9" * 500 + "]"),
        "ds/q1/vec-denormal.json": kag_ok("b", vec="[5e-324, -0.0, 1e-400]"),
        "ds/q1/vec-nested.json": kag_ok("b", vec="[[1]]"),
        "ds/q1/vec-trailing-comma.json": kag_ok("b", vec="[1,]"),
        "ds/q1/ret-time-float.json": ok(
            "b", config=_KAG_CONFIG, retrieval=retrieval(time="[0.5, 0]")
        ),
        "ds/q1/ret-null.json": ok("b", config=_KAG_CONFIG, retrieval="null"),
        "ds/q1/ret-no-config.json": ok("b", retrieval=retrieval()),
    }

    def truth(text: str | bytes) -> Tree:
        return Tree(f"datasets-{len(variants)}", "fresh-ds", base, truth=text)

    mcq_a = '{"type": "MCQ", "options": {"A": "a"}, "answer": "A"}'
    variants: list[Tree] = []
    for text in [
        "{}", '{"ds": {}}', '{"ds": null}', '{"ds": {"q0": null}}', '{"ds": {"q0": {}}}',
        '{"ds": {"q0": {"input": 1}}}', '{"ds": {"q0": {"input": "x", "output": {}}}}',
        '{"ds": {"q0": {"input": "x", "output": ' + mcq_a + ', "extra": [1]}}}',
        '{"ds": {"q0": {"input": "x", "output": ' + mcq_a + '}, "q0": {"input": "y"}}}',
        '{"ds": {"q0": {"input": "y"}, "q0": {"input": "x", "output": ' + mcq_a + "}}}",
        '{"ds": {"q0": {"input": "x"}}, "ds": {"q1": {"input": "x", "output": ' + mcq_a + "}}}",
        '{"ds": {"q0": {"input": "x", "output": {"type": "mcq", "options": {}, "answer": "A"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "Open"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {}, "answer": "Z"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {"a": "x"}, '
        '"answer": "a"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": ["a"], '
        '"answer": "A"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {"A": 1}, '
        '"answer": "A"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {}, "answer": 1}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "answer": "A"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"options": {}, "answer": "A"}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {}, "answer": " b "}}}}',
        '{"ds": {"q0": {"input": "x", "output": {"type": "MCQ", "options": {}, "answer": ""}}}}',
        '{"d\u00e9": {"q0": {"input": "x"}}}', '{"DS": {"q0": {"input": "x"}}}',
        '{"ds": {"q_0": {"input": "x"}}}', '{"": {}}', '{"ds": {"q0": {"input": "x"}}} x',
        "\ufeff{}", '{"ds": {"q0": {"input": "\\ud800", "output": ' + mcq_a + "}}}",
        "[]", "null", "", '{"ds": {"q0": {"input": "x", "output": null}}}',
        '{"ds": {"q0": {"input": "x", "output": ' + mcq_a.replace('"A"}', "null}") + "}}}",
    ]:  # fmt: skip
        variants.append(truth(text))
    plain = ('{"ds": {"q0": {"input": "x", "output": ' + mcq_a + "}}}").encode()
    for raw in [
        b"\xef\xbb\xbf" + plain, plain.decode().encode("utf-16"), plain + b"\x00", plain + b" \n",
        plain.replace(b'"x"', b'"\xff"'), plain.replace(b'"x"', b'"\xc0\x81"'),
        plain.replace(b'"x"', b'"\xed\xa0\x80"'), plain.replace(b'"x"', b'"\x01"'),
        b"/* c */" + plain, plain + plain,
    ]:  # fmt: skip
        variants.append(truth(raw))
    regex = (
        "",
        "^",
        "$",
        "^$",
        "|",
        "()",
        "x*",
        r"\A",
        r"\z",
        r"(?m)^b$",
        "(?s)A.",
        r"\B",
        "(?i)\u00df",
        "(?i)k",
        r"\p{L}+",
        r"\P{ASCII}",
        r"[^\x00-\x7F]",
        r"\pN",
        r"(?i)\u212a",
        r"[\p{Lu}--A]",
        r"\x{1F600}",
        r"^\s*A\s*$",
        r"\p{Greek}|\d",
        "a{4294967296}", "(?P<n>a)(?P<n>b)", r"\p{Bogus}", "[z-a]", "(?<n>a)", "a{,5}",
        r"\b{end-half}", "(?R)", r"\K", "((a{100}){100}){100}", r"\pL", "(?i-u)\u00e9",
        r"[[:^digit:]]", r"\x{110000}", "(?", "[", "a{2,1}", "\\", "(?i)[k-k]", r"\p{Script=Latin}",
    )  # fmt: skip
    nest_files: dict[str, object] = {}
    for depth in (120, 126, 127, 128, 129, 1000):
        deep = _nest(depth)
        nest_files |= {
            f"ds/q1/stats-{depth}.json": ok(
                "b", prompt="p", time=f'{{"secs": 1, "nanos": 0}}, "x": {deep}'
            ),
            f"ds/q1/config-{depth}.json": ok("b", config=_CONFIG[:-1] + f', "x": {deep}}}'),
            f"ds/q1/ret-{depth}.json": ok(
                "b",
                config=_KAG_CONFIG,
                retrieval=retrieval().replace('"time": [0, 7]', f'"time": [0, 7], "x": {deep}'),
            ),
            f"ds/q1/neo-{depth}.json": ok(
                "b",
                config=_KAG_CONFIG,
                retrieval=retrieval().replace('"properties": 1', f'"properties": 1, "x": {deep}'),
            ),
            f"ds/q1/top-{depth}.json": '{"x": ' + deep + ', "ok": ' + ok("b")[7:],
        }
    nest_truth = [
        '{"ds": {"q0": {"input": "x", "x": ' + _nest(depth) + ', "output": {"type": "MCQ", '
        '"options": {"A": "a"}, "answer": "A"}}}}'
        for depth in (124, 125, 126, 127, 1000)
    ]
    nest_trees = [
        Tree(f"q-nesting-{i}", "fresh-nest", base, truth=text) for i, text in enumerate(nest_truth)
    ]
    return [
        Tree("nest-places", "fresh-nest", base | nest_files),
        *nest_trees,
        Tree(
            "encodings",
            "fresh-bytes",
            {**{q + k: v for k, v in encodings.items()}, **base},
            patterns=(".", "A", r"\x{FFFD}", "\u00c0", r"\\"),
        ),
        Tree("numbers", "fresh-num", base | number_files | count_files),
        Tree(
            "secs-u64max",
            "fresh-num",
            {q + "s.json": ok(time='{"secs": 18446744073709551615, "nanos": 0}')},
            deviations=frozenset({"5.1"}),
        ),
        *variants,
        Tree("links", "fresh-fs", build=_symlinks, patterns=(".",)),
        Tree("deep", "fresh-fs", build=_deep, patterns=(".", "^a$")),
        Tree("datasets-folder", "fresh-fs", build=_datasets_folder, patterns=(".",)),
        Tree("results-file", "fresh-fs", build=_results_file, patterns=(".",)),
        Tree(
            "odd-paths",
            "fresh-fs",
            {
                f"ds/q0/{name}.json": ok(text)
                for name, text in [
                    ("tab\t", "a\tb"),
                    ("nl\n", "a\r\nb"),
                    ('q"', "x"),
                    ("bs\\", "\\"),
                    ("del\x7f", "\x7f"),
                    ("ls\u2028", "\u2028\u2029"),
                    ("ctl\x01", "\x01"),
                    ("esc\x1b", "\x1b[31m"),
                    ("sp ace", "\u0085A\u0085"),
                    ("emoji\U0001f600", "\n"),
                ]
            }
            | {"ds/q\x01/a.json": ok("A"), "d\u00e9/q0/a.json": ok("A")},
            patterns=(".", "A", "^$"),
        ),
        Tree(
            "file-names",
            "fresh-fs",
            {
                q + "UPPER.JSON": ok("A"),
                q + "a.Json": ok("A"),
                q + ".json": ok("A"),
                q + "a.json.json": ok("A"),
                q + "a b.json": ok("A"),
                q + "-.json": ok("A"),
                q + "a--b.json": ok("A"),
                q + "\u00e9.json": ok("A"),
                q + "a.json~": ok("A"),
                q + ".hidden.json": ok("A"),
                "ds/.q/a.json": ok("A"),
                "ds/Q0/a.json": ok("A"),
                "ds/q0 /a.json": ok("A"),
                "top.json": ok("A"),
                "ds/mid.json": ok("A"),
            },
            truth={"ds": {"q0": mcq()}},
        ),
        *(
            Tree(
                f"prefix-{i}",
                "fresh-prefix",
                {
                    q + "run-a.json": ok("A"),
                    q + "run-.json": ok("A"),
                    q + "a.json": ok("b"),
                    q + "\u00e9a.json": ok("A"),
                    q + "*a.json": ok("A"),
                    q + "a.json.json": ok("A"),
                    q + ".json.json": ok("A"),
                    q + "run-run-a.json": ok("A"),
                },
                prefix=prefix,
                truth={"ds": {"q0": mcq()}},
            )
            for i, prefix in enumerate(
                ["run-", "\u00e9", "*", "a.json", ".json", "a", "run-run-", "x/", "."]
            )
        ),
        Tree(
            "regex-edges",
            "fresh-regex",
            {
                q + "a.json": ok("A"),
                q + "ml.json": ok("a\nb\nc"),
                q + "sharp.json": ok("\u00df"),
                q + "kelvin.json": ok("\u212a"),
                q + "emoji.json": ok("\U0001f600"),
                q + "empty.json": ok(""),
                q + "ws.json": ok("  A  "),
                q + "digits.json": ok("\u0663x"),
                q + "greek.json": ok("\u03a9"),
                q + "err.json": '{"error": "A"}',
            },
            patterns=regex,
        ),
    ]


def random_trees(count: int, seed: int) -> list[Tree]:
    """Fresh hostile trees: every file drawn from a pool of mutations (seeded)."""
    rng = random.Random(seed)
    times = ['{"secs": 1, "nanos": 0}', "[2, 500000000]", '{"secs": -0, "nanos": 0}',
             '{"secs": 1, "nanos": 1000000000}', '{"nanos": 3, "secs": 4}', "[1, 2, 3]",
             '{"secs": 1e3, "nanos": 0}', '{"secs": 1.0, "nanos": 0}',
             '{"secs": 0, "nanos": 4294967296}', '{"secs": 1, "nanos": 0, "x": 0}', '{"secs": 1}',
             "[3, 4294967295]", "[0.5, 0]",
             '{"secs": 123456789012, "nanos": 987654321}', '"1s"', "null"]  # fmt: skip
    results = ["A", "a", " A\n", "B", "b.", "Answer: A", "", "\u00c0", "C", "\u2003c\u2003",
               "A A", "\ud7ff", "\u0085a", "\ufeffA", "\x00A", "A\r\n", "\U0001f600"]  # fmt: skip
    extras = ["", '"result": "B", ', '"x": {"y": [1, 2, {"z": null}]}, ',
              '"x": ' + _nest(130) + ", ", '"x": 1e400, ', '"x": "\\ud800", ',
              '"x": ' + _nest(2000) + ", ", '"x": -0.0, ', '"x": 1' + "0" * 400 + ", "]  # fmt: skip
    vecs = ["[0.5]", "[]", '["a"]', "[1e400]", "{}", "[1, 2, 3e-7]", "[5e-324, -0.0]",
            "[1e-400]", "[" + "9" * 400 + "]", "[1,]"]  # fmt: skip
    damage = [b"\xef\xbb\xbf", b" x", b"\x00", b" \n", b"// c\n"]
    trees = []
    for index in range(count):
        files: dict[str, object] = {}
        for question in range(rng.randint(1, 4)):
            for setup in rng.sample(["a", "b", "c-1", "kag"], rng.randint(1, 3)):
                kind = rng.random()
                body: str | bytes
                if kind < 0.1:
                    body = '{"error": "boom"}'
                elif kind < 0.15:
                    body = rng.choice(["{", "[]", '{"ok": null}', '{"ok": {}}', "\ufeff{}"])
                else:
                    make = kag_ok if setup == "kag" else ok
                    kwargs = {"time": rng.choice(times), "extra": rng.choice(extras)}
                    if setup == "kag":
                        kwargs["vec"] = rng.choice(vecs)
                        kwargs["vertices"] = rng.choice(["0", "5", "18446744073709551615", "-1"])
                    body = make(rng.choice(results), prompt="p" * rng.randint(0, 9), **kwargs)
                    if rng.random() < 0.05:  # a damaged file: BOM or comment before, bytes after
                        cut = rng.choice(damage)
                        front = cut in (damage[0], damage[4])
                        body = cut + body.encode() if front else body.encode() + cut
                files[f"ds/q{question}/{setup}.json"] = body
        answers = {f"q{i}": mcq(rng.choice(["A", "b", "C", None, "a", " A"])) for i in range(4)}
        trees.append(Tree(f"random-{seed}-{index}", "random", files, truth={"ds": answers},
                          deviations=frozenset({"5.1"})))  # fmt: skip
    return trees


def standard_trees() -> list[Tree]:
    """The bundled example and SIMULATED runs (with and without a prefix)."""
    from kagreport.examples import mmlu_pro_philosophy
    from kagreport.kag import simulate_run

    def example(root: Path) -> None:
        run = mmlu_pro_philosophy()
        (root / "results").rmdir()
        shutil.copyfile(run.datasets, root / "datasets.json")
        shutil.copytree(run.results, root / "results")

    def simulated(prefix: str, seed: int) -> Callable[[Path], None]:
        def build(root: Path) -> None:
            sim = root / "sim"
            simulate_run(sim, questions=12, datasets=2, vector_dim=8, seed=seed, prefix=prefix)
            (root / "results").rmdir()
            os.rename(sim / "datasets.json", root / "datasets.json")
            os.rename(sim / "results", root / "results")
            shutil.rmtree(sim)

        return build

    return [
        Tree(
            "mmlu-pro-philosophy", "example", build=example, patterns=(".", "^[A-J]$", "(?i)answer")
        ),
        Tree("simulated", "simulated", build=simulated("", 1)),
        Tree("simulated-prefix", "simulated", build=simulated("run2-", 2), prefix="run2-"),
    ]


# ---------------------------------------------------------------------------------------------
# Cases, running, classifying
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    tree: Tree
    args: tuple[str, ...]
    deviations: frozenset[str] = frozenset()
    no_fzf: bool = False  # run kag without the stand-in fzf
    check_stderr: bool = False  # compare whether stderr is empty

    @property
    def label(self) -> str:
        return f"[{self.tree.group}/{self.tree.name}] " + " ".join(
            repr(a) if not a or " " in a else a for a in self.args
        )


@dataclass(frozen=True)
class Outcome:
    code: int | str  # exit code, "timeout", or "SIG<n>"
    out: bytes
    err: bytes


def cases_for(tree: Tree) -> list[Case]:
    d, r = ("-d", "datasets.json"), ("-r", "results")
    prefix = ("--prefix", tree.prefix) if tree.prefix else ()
    common = tree.deviations | {"2.3", "3"}
    cases = [
        Case(tree, ("stats", *d, *r, *prefix), common),
        Case(tree, ("stats", *d, *r, *prefix, "--format", "json"), common),
    ]
    for pattern in tree.patterns:
        cases.append(Case(tree, ("stats", *r, *prefix, "find", "--format", "json", "--", pattern),
                          common))  # fmt: skip
        cases.append(Case(tree, ("stats", *r, *prefix, "find", "--", pattern), common))
    return cases


def flag_cases(tree: Tree) -> list[Case]:
    """Usage errors and their neighbours (issue #11 item 9); only exit code and stdout compared."""
    lines = [
        "stats -d datasets.json -r ''", "stats -d '' -r results", "stats -d datasets.json -r=",
        "stats -d datasets.json -d datasets.json", "stats -d datasets.json -r results -r results",
        "stats -d datasets.json --prefix a --prefix b", "stats -d datasets.json --prefix ''",
        "stats -d datasets.json --format text --format json", "stats -d datasets.json --format ''",
        "stats -d datasets.json --format TEXT", "stats -r results --format json find x",
        "stats --format text -r results find --format json x", "stats -r results find -r results x",
        "stats -r results find -r results -r results x", "stats -d '' find x",
        "stats find -r '' x", "stats -r results find ''", "stats find x y", "stats find",
        "stats", "stats -r results find -d datasets.json x", "-q -v stats -d datasets.json",
        "stats -v -q -d datasets.json", "-qq stats -d datasets.json -r results",
        "stats -r results find -- -x", "stats -d datasets.json -r results find x find y",
        "stats -r results find --format json --format json x", "stats -ddatasets.json -rresults",
        "stats -r results find '(?=x)'", "stats -r results find '('", "stats --bogus",
        "nope", "stats -d missing.json -r results", "stats -r missing find x",
        "stats -d datasets.json --prefix -1",
        "stats -d datasets.json --prefix=-1", "stats -d datasets.json -r -1",
        "stats -r results find -1", "stats -r results find -- -1", "stats -d - -r results",
    ]  # fmt: skip
    import shlex

    return [Case(tree, tuple(shlex.split(line)), frozenset({"2.3", "3"})) for line in lines]


def special_cases(tree: Tree) -> list[Case]:
    """-q with an error (item 13) and find's text mode without fzf (item 14)."""
    return [
        Case(tree, ("-q", "stats", "-d", "missing.json"), frozenset({"5.4"}), check_stderr=True),
        Case(
            tree,
            ("stats", "-q", "-r", "missing", "find", "x"),
            frozenset({"5.4"}),
            check_stderr=True,
        ),
        Case(tree, ("stats", "-r", "results", "find", "A"), frozenset({"5.5", "3"}), no_fzf=True),
    ]


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> Outcome:
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=TIMEOUT[0],
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        return Outcome("timeout", exc.stdout or b"", exc.stderr or b"")
    code: int | str = done.returncode if done.returncode >= 0 else f"SIG{-done.returncode}"
    return Outcome(code, done.stdout, done.stderr)


def _mask_ctx(text: bytes) -> bytes:
    # Spec 2.3 decision: each sub-row prints its own CTX_LEN (kag: the setup's).
    lines = []
    for line in text.decode("utf-8", "replace").split("\n"):
        words = line.split()
        if line.startswith("  \u2514 ") and len(words) >= 11:
            words[10] = "*"
            line = " ".join(words)
        lines.append(line)
    return "\n".join(lines).encode()


def _sort_find(text: bytes) -> bytes:
    # Spec 3 decision: `find` sorts its paths (kag: the file system's order).
    try:
        report = json.loads(text)
    except ValueError:
        return b"\n".join(sorted(text.split(b"\n")))
    if isinstance(report, dict) and isinstance(report.get("paths"), list):
        report["paths"] = sorted(report["paths"])
    return json.dumps(report).encode()


def _quiet_error(a: Outcome, b: Outcome) -> bool:
    lines = b.err.decode("utf-8", "replace").splitlines()
    return (
        a.code == b.code == 1
        and a.out == b.out
        and not a.err
        and len(lines) >= 1
        and all(
            "error" in line or line.startswith("usage:") or line.startswith(" ") for line in lines
        )
    )


_HUGE = re.compile(rb"\d{19,}|e\+(1[89]|[2-9]\d|\d{3})\b")


def _huge(a: Outcome, b: Outcome) -> bool:
    # kag aborts (a panic, SIGABRT), or wraps a u64 sum: then every line kagreport prints
    # differently holds a number of 2**63 or more.
    if b.code != 0:
        return False
    if a.code == "SIG6":
        return True
    if a.code != 0:
        return False
    left, right = a.out.splitlines(), b.out.splitlines()
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    changed = [right[j] for op, _, _, j1, j2 in matcher.get_opcodes() if op != "equal"
               for j in range(j1, j2)]  # fmt: skip
    return bool(changed) and all(_HUGE.search(line) for line in changed)


DEVIATIONS: dict[str, tuple[str, Callable[[Outcome, Outcome], bool]]] = {
    "2.3": ("spec 2.3 decision: each sub-row's own CTX_LEN",
            lambda a, b: a.code == b.code == 0 and _mask_ctx(a.out) == _mask_ctx(b.out)),
    "3": ("spec 3 decision: find's paths sorted",
          lambda a, b: a.code == b.code == 0 and _sort_find(a.out) == _sort_find(b.out)),
    "5.1": ("spec 5.1: huge times/counts exact (kag panics or wraps)", _huge),
    "5.2": ("spec 5.2: a FIFO does not block find",
            lambda a, b: a.code == "timeout" and b.code == 0),
    "5.3": ("spec 5.3: non-UTF-8 folder printed with U+FFFD",
            lambda a, b: a.code == 1 and a.out == b"" and b.code == 0),
    "5.4": ("spec 5.4: -q still prints the error line", _quiet_error),
    "5.5": ("spec 5.5: find text mode without fzf", lambda a, b: a.code == 1 and b.code == 0),
}  # fmt: skip


def classify(case: Case, a: Outcome, b: Outcome) -> tuple[str, str]:
    """``("identical" | "deviation" | "different", detail)``; ``a`` is kag, ``b`` kagreport."""
    if (
        a.code == b.code
        and a.out == b.out
        and (not case.check_stderr or bool(a.err) == bool(b.err))
    ):
        return "identical", ""
    for tag in sorted(case.deviations):
        if DEVIATIONS[tag][1](a, b):
            return "deviation", tag
    return "different", smallest_diff(a, b)


def smallest_diff(a: Outcome, b: Outcome, limit: int = 8) -> str:
    head = f"exit kag={a.code} kagreport={b.code}"
    if a.out == b.out:
        return head + " (stdout identical)" + _stderr_hint(a, b)
    left = a.out.decode("utf-8", "backslashreplace").splitlines()
    right = b.out.decode("utf-8", "backslashreplace").splitlines()
    hunks: list[list[str]] = []
    for line in difflib.unified_diff(left, right, "kag", "kagreport", n=0, lineterm=""):
        if line.startswith("@@"):
            hunks.append([line])
        elif hunks:
            hunks[-1].append(line)
    if not hunks:
        return head + " (stdout differs only in its final newline)"
    hunk = min(hunks, key=len)
    shown = hunk[:limit] + ([f"... ({len(hunk) - limit} more lines)"] if len(hunk) > limit else [])
    body = "\n      ".join(shown)
    return f"{head}; {len(hunks)} hunk(s), smallest:\n      {body}{_stderr_hint(a, b)}"


def _stderr_hint(a: Outcome, b: Outcome) -> str:
    def first(err: bytes) -> str:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        return lines[0][:150] if lines else "(empty)"

    return f"\n      kag stderr: {first(a.err)}\n      kagreport stderr: {first(b.err)}"


# ---------------------------------------------------------------------------------------------


def _fake_fzf(folder: Path) -> None:
    script = folder / "fzf"
    script.write_text("#!/bin/sh\nexec cat\n", encoding="utf-8")
    script.chmod(0o755)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--kag", metavar="PATH", help="the kag binary (without it: a note, exit 0)")
    parser.add_argument("--kagreport", metavar="CMD", help="kagreport command (default: this "
                        "checkout's src with the running Python)")  # fmt: skip
    parser.add_argument("--random", type=int, default=0, metavar="N", help="N random trees too")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random trees (0)")
    parser.add_argument(
        "--only",
        metavar="GROUP",
        help="only trees of these groups (comma-separated prefixes: item5,fresh)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (2)")
    parser.add_argument("--tree", action="append", default=[], metavar="DIR",
                        help="also compare in this existing tree (datasets.json and results/); "
                        "repeatable")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=20.0, metavar="S",
                        help="seconds per command (20)")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the trees (path printed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="also list deviations")
    args = parser.parse_args(argv)
    TIMEOUT[0] = args.timeout
    if not args.kag:
        print("diff_kag: no --kag binary given; nothing compared (build one with "
              "shared/kag-real/build.sh).")  # fmt: skip
        return 0
    kag = os.path.abspath(args.kag)
    if not os.access(kag, os.X_OK):
        print(f"diff_kag: {kag} is not an executable file", file=sys.stderr)
        return 1
    sys.path.insert(0, str(REPO / "src"))
    kagreport = args.kagreport.split() if args.kagreport else [sys.executable, "-m", "kagreport"]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("KAGREPORT_", "RUST_"))}
    base_env |= {"LC_ALL": "C.UTF-8", "NO_COLOR": "1", "RUST_BACKTRACE": "0",
                 "PYTHONIOENCODING": "utf-8"}  # fmt: skip
    if not args.kagreport:
        base_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p
        )
    work = Path(tempfile.mkdtemp(prefix="diff-kag-"))
    bin_dir = work / "bin"
    bin_dir.mkdir()
    _fake_fzf(bin_dir)
    path_without_fzf = os.pathsep.join(
        p for p in base_env.get("PATH", "").split(os.pathsep) if p and not os.path.exists(
            os.path.join(p, "fzf"))
    )  # fmt: skip
    with_fzf = base_env | {"PATH": f"{bin_dir}{os.pathsep}{path_without_fzf}"}
    without_fzf = base_env | {"PATH": path_without_fzf}

    trees = (
        standard_trees() + hostile_trees() + fresh_trees() + random_trees(args.random, args.seed)
    )
    for folder in args.tree:
        at = Path(folder).resolve()
        trees.append(Tree(at.name, "tree", at=at, patterns=(".", "(?i)answer", r"^\s*[A-J]\s*$")))
    if args.only:
        wanted = args.only.split(",")
        trees = [t for t in trees if any(t.group.startswith(w) or t.name == w for w in wanted)]
    cases: list[Case] = []
    roots: dict[str, Path] = {}
    for tree in trees:
        root = tree.at or work / tree.name
        if tree.at is None:
            tree.write(root)
        roots[tree.name] = root
        cases += cases_for(tree)
        if tree.name == "mixed":
            cases += flag_cases(tree) + special_cases(tree)

    def both(case: Case) -> tuple[Case, Outcome, Outcome]:
        root = roots[case.tree.name]
        a = run([kag, *case.args], root, without_fzf if case.no_fzf else with_fzf)
        b = run([*kagreport, *case.args], root, without_fzf)
        return case, a, b

    try:
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            outcomes = list(pool.map(both, cases))
    finally:
        if args.keep:
            print(f"trees kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return report(kag, outcomes, verbose=args.verbose)


def report(kag: str, outcomes: list[tuple[Case, Outcome, Outcome]], *, verbose: bool) -> int:
    table: dict[str, Counter[str]] = {}
    tags: Counter[str] = Counter()
    different = []
    deviations = []
    for case, a, b in outcomes:
        verdict, detail = classify(case, a, b)
        table.setdefault(case.tree.group, Counter())[verdict] += 1
        if verdict == "deviation":
            tags[detail] += 1
            deviations.append((case, detail))
        elif verdict == "different":
            different.append((case, detail))
    print(f"kag: {kag}")
    print("compared: exit code and stdout of each command line (stderr: only for -q cases)\n")
    print(f"{'group':<12} {'cases':>6} {'identical':>10} {'deviation':>10} {'different':>10}")
    total: Counter[str] = Counter()
    for group, counts in table.items():
        total += counts
        print(f"{group:<12} {sum(counts.values()):>6} {counts['identical']:>10} "
              f"{counts['deviation']:>10} {counts['different']:>10}")  # fmt: skip
    print(f"{'total':<12} {sum(total.values()):>6} {total['identical']:>10} "
          f"{total['deviation']:>10} {total['different']:>10}")  # fmt: skip
    if tags:
        print("\ndocumented deviations seen:")
        for tag, count in sorted(tags.items()):
            print(f"  {count:>4}  {DEVIATIONS[tag][0]}")
    if verbose and deviations:
        print("\ndeviation cases:")
        for case, tag in deviations:
            print(f"  {tag:<4} {case.label}")
    if different:
        print(f"\ndifferent ({len(different)}):")
        for case, detail in different:
            print(f"  {case.label}\n      {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
