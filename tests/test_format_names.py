"""Names made safe for every renderer at one place (issue 27, items 6-8):
:func:`kagreport._format.printable`, :func:`~kagreport._format.isolated` and
:func:`~kagreport._format.name_labels`.

The expected strings are written out by hand from the rule each function documents
(Python's escape of a code point, the cut around ``…``, UAX #9's isolates), never taken from
the code under test.
"""

from __future__ import annotations

import re

import pytest

from kagreport._format import NAME_LIMIT, isolated, name_labels, pair_label, printable

FSI, PDI, RLO, LRI = "\u2068", "\u2069", "\u202e", "\u2066"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("a\x00b", "a\\x00b"),  # NUL: aborted vl-convert (a Rust panic)
        ("a\x01b", "a\\x01b"),
        ("a\x1b[31mb", "a\\x1b[31mb"),  # ESC: a terminal's colour
        ("a\tb\nc", "a\\x09b\\x0ac"),  # one line: tabs and line feeds shown too
        ("a\x7fb\x85c", "a\\x7fb\\x85c"),  # DEL and NEL (C1)
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),  # line terminators to JavaScript
        ("a\ud800b\udfffc", "a\\ud800b\\udfffc"),  # lone surrogates: no UTF-8 holds them
        ("a\ufffeb\uffffc\ufdd0", "a\\ufffeb\\uffffc\\ufdd0"),  # noncharacters (XML refuses U+FFFE)
        ("a\U0010ffff", "a\\U0010ffff"),  # a plane's last code point is a noncharacter too
    ],
)
def test_unprintable_characters_are_shown_as_their_escapes(name: str, shown: str) -> None:
    assert printable(name) == shown
    assert printable(shown) == shown  # applying it again changes nothing


@pytest.mark.parametrize(
    "name",
    [
        "gpt-4o",
        "Café – 北京 ✓",
        "\U0001f600 emoji",
        "שלום",
        "a\u00a0b",
        "x\u200dy",
        "ab" + RLO + "cd",
    ],
)
def test_everything_else_is_kept(name: str) -> None:
    assert printable(name) == name


def test_direction_controls_are_shown_for_a_renderer_without_bidi() -> None:
    assert (
        printable("ab\u202ecd\u2066e\u2069\u200f", bidi=True) == "ab\\u202ecd\\u2066e\\u2069\\u200f"
    )
    assert printable("שלום", bidi=True) == "שלום"  # letters are not controls


def test_a_long_name_keeps_its_start_and_its_end() -> None:
    name = "".join(chr(0x4E00 + i) for i in range(100_000))  # every character distinct
    # limit 100: 99 characters besides the ellipsis, two thirds (66) before it, 33 after.
    assert printable(name, 100) == name[:66] + "…" + name[-33:]
    assert len(printable(name, NAME_LIMIT)) == NAME_LIMIT
    assert printable("x" * 100, 100) == "x" * 100  # a name that fits is whole


def test_a_cut_never_splits_an_escape() -> None:
    shown = printable("\x01" * 200, 20)
    assert len(shown) <= 20
    assert re.fullmatch(r"(\\x01)+…(\\x01)+", shown), shown
    assert printable(shown, 20) == shown


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="`limit` must be at least 1, not 0"):
        printable("abc", 0)


def test_left_to_right_names_are_not_isolated() -> None:
    for name in ("gpt-4o", "Café – 北京", "model 2"):
        assert isolated(name) == name


def test_a_name_that_can_reorder_its_surroundings_is_isolated() -> None:
    assert isolated("ab" + RLO + "cd") == FSI + "ab" + RLO + "cd" + PDI
    assert isolated("שלום") == FSI + "שלום" + PDI  # right-to-left letters
    assert isolated("x\u0661") == FSI + "x\u0661" + PDI  # an Arabic-Indic digit (AN)
    assert isolated("a\x01" + RLO) == FSI + "a\\x01" + RLO + PDI  # printable as well


def test_no_name_can_close_the_isolate_early_or_leave_one_open() -> None:
    # A stray U+2069 would match our U+2068 and let the override after it out: shown.
    assert isolated("a" + PDI + RLO + "b") == FSI + "a\\u2069" + RLO + "b" + PDI
    # An isolate the name opens would take our closing U+2069: closed first.
    assert isolated("a" + LRI + "b") == FSI + "a" + LRI + "b" + PDI + PDI
    # A matched pair inside stays as it is.
    assert isolated("a" + LRI + "b" + PDI) == FSI + "a" + LRI + "b" + PDI + PDI


def test_isolating_twice_changes_nothing() -> None:
    for name in ("ab" + RLO + "cd", "שלום" * 60, "a" + LRI + "b", "a" + PDI + "b"):
        once = isolated(name, NAME_LIMIT)
        assert isolated(once, NAME_LIMIT) == once


def test_a_name_that_starts_and_ends_as_an_isolate_is_still_made_printable_and_cut() -> None:
    # A name of the form U+2068 ... U+2069 was taken for an isolate made here and returned
    # as it was: its NUL reached vl-convert (item 6), its length every chart (item 7).
    assert isolated(FSI + "a\x00b" + PDI) == FSI + FSI + "a\\x00b" + PDI + PDI
    # Cut to 10 characters (6 before "…", 3 after), then isolated again.
    assert isolated(FSI + "x" * 100_000 + PDI, 10) == FSI + FSI + "xxxxx…xx" + PDI + PDI
    labels = name_labels([FSI + "\x1b" * 500 + PDI], 10, isolate=True)
    assert all(len(label) <= 14 and "\x1b" not in label for label in labels.values()), labels


def test_labels_of_distinct_names_are_distinct() -> None:
    # "a\x01" is shown as the four characters of a literal "a\\x01": the literal name keeps
    # its label (it is its own), the other gets a number.
    assert name_labels(["a\x01", "a\\x01", "plain"]) == {
        "a\x01": "a\\x01 (2)",
        "a\\x01": "a\\x01",
        "plain": "plain",
    }
    # Two long names that share a start and an end, cut alike.
    long = ["x" * 200 + "1" + "y" * 200, "x" * 200 + "2" + "y" * 200]
    labels = name_labels(long, 10)
    assert labels[long[0]] == "xxxxxx…yyy"  # 9 characters besides "…": 6 before, 3 after
    assert labels[long[1]] == "xxx…yy (2)"  # within the limit: 5 besides "…" and " (2)"
    assert name_labels(labels.values(), 10) == {v: v for v in labels.values()}
    assert name_labels(["שלום"], isolate=True) == {"שלום": FSI + "שלום" + PDI}
    # Two right-to-left names cut alike: the number goes inside the isolate.
    twins = ["א" * 200 + "1" + "ב" * 200, "א" * 200 + "2" + "ב" * 200]
    isolates = name_labels(twins, 10, isolate=True)
    assert isolates[twins[1]] == FSI + "אאא…בב (2)" + PDI
    assert name_labels(isolates.values(), 10, isolate=True) == {v: v for v in isolates.values()}


def test_a_pair_label_keeps_both_names_visible() -> None:
    # Each side gets (100 - 3) // 2 - 2 = 46 characters: 30 before "…" and 15 after.
    label = pair_label("a" * 1000, "b" * 1000)
    assert label == "a" * 30 + "…" + "a" * 15 + " \u2212 " + "b" * 30 + "…" + "b" * 15
    assert len(label) <= NAME_LIMIT
    assert pair_label("ab" + RLO + "cd", "base") == FSI + "ab" + RLO + "cd" + PDI + " \u2212 base"
