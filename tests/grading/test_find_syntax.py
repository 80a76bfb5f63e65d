"""``stats find`` patterns are Rust's ``regex`` crate syntax, as kag compiles them.

Every construct of the crate's syntax documentation (regex 1.13.1,
https://docs.rs/regex/1.13.1/regex/#syntax, sections "Matching one character",
"Character classes", "Composites", "Repetitions", "Empty matches", "Grouping and
flags", "Escape sequences", "Perl character classes (Unicode friendly)", "ASCII
character classes") with a text it matches or not as the documentation defines
it, and the patterns the documentation or the crate's ``Regex::new`` defaults
refuse (no look-around, no back-references, 10 MiB compiled size limit, nest
limit 250). Each row was also run through the real ``kag stats find`` (built by
``shared/kag-real`` at kag 12389ee): same answer. Searched, as kag does, in the
response trimmed of White_Space.
"""

from __future__ import annotations

import pytest

from conftest import Tree, run_cli
from kagreport import UsageError, find
from kagreport.grading._find import compile_pattern

BAD = "invalid"

# (pattern, response, expected): True = match, False = no match, BAD = refused.
SYNTAX: list[tuple[str, str, bool | str]] = [
    # Matching one character.
    (r"a.b", "a\nb", False),  # . excludes \n ...
    (r"a.b", "a\rb", True),  # ... but not \r (without R)
    (r"(?s)a.b", "a\nb", True),
    (r"[0-9]", "\u0663", False),  # ARABIC-INDIC DIGIT THREE: not ASCII ...
    (r"\d", "\u0663", True),  # ... but \p{Nd}
    (r"^\D$", "\u0663", False),
    (r"^\D$", "x", True),
    (r"\pN", "\u0663", True),
    (r"\p{Greek}", "\u03b1", True),
    (r"\p{Greek}", "a", False),
    (r"^\PL$", "a", False),
    (r"^\P{Greek}$", "\u03b1", False),
    (r"\p{Nope}", "a", BAD),
    # Character classes.
    (r"^[xyz]$", "y", True),
    (r"^[^xyz]$", "y", False),
    (r"^[a-z]$", "q", True),
    (r"[[:alpha:]]", "\u00e9", False),  # ASCII only
    (r"^[[:^alpha:]]$", "\u00e9", True),
    (r"^[x[^xyz]]$", "y", False),
    (r"^[x[^xyz]]$", "a", True),
    (r"^[a-y&&xyz]$", "z", False),  # intersection: x or y
    (r"^[a-y&&xyz]$", "x", True),
    (r"^[0-9&&[^4]]$", "4", False),
    (r"^[0-9&&[^4]]$", "5", True),
    (r"^[0-9--4]$", "4", False),  # direct subtraction
    (r"^[0-9--4]$", "3", True),
    (r"^[a-g~~b-h]$", "a", True),  # symmetric difference: a and h only
    (r"^[a-g~~b-h]$", "b", False),
    (r"^[a-g~~b-h]$", "h", True),
    (r"[\[\]]", "]", True),  # escaping in classes
    (r"[a&&b]", "a", False),  # an empty class is valid and matches nothing
    (r"[\p{Greek}[:digit:]]", "7", True),  # named classes inside brackets
    (r"[z-a]", "a", BAD),
    (r"[a", "a", BAD),
    # Composites.
    (r"^xy$", "xy", True),
    (r"^x|y$", "y", True),
    # Repetitions.
    (r"^a*$", "aaa", True),
    (r"^a+$", "b", False),
    (r"^ba?$", "b", True),
    (r"^a*?$", "aa", True),
    (r"^a+?$", "aa", True),
    (r"^ba??$", "ba", True),
    (r"^a{2,3}$", "aaaa", False),
    (r"^a{2,3}$", "aa", True),
    (r"^a{2,}$", "aaaaa", True),
    (r"^a{2,}$", "a", False),
    (r"^a{2}$", "aa", True),
    (r"^a{2,3}?$", "aaa", True),
    (r"^a{2,}?$", "aaa", True),
    (r"^a{2}?$", "aa", True),
    (r"a**", "b", True),  # nested repetition is allowed (matches the empty string)
    (r"^(?:a{2}){3}$", "aaaaaa", True),
    (r"b{1001}", "b" * 1001, True),  # no repetition-count limit, only the size limit
    (r"\w{1000}{1000}", "a", BAD),  # compiled regex exceeds size limit (10 MiB)
    (r"a{,5}", "a", BAD),  # the minimum is required
    (r"a{5,2}", "a", BAD),
    (r"*a", "a", BAD),
    # Empty matches.
    (r"^b", "a\nb", False),
    (r"(?m)^b", "a\nb", True),
    (r"a$", "a\nb", False),
    (r"(?m)a$", "a\nb", True),
    (r"(?m)\Ab", "a\nb", False),  # \A and \z ignore m
    (r"(?m)a\z", "a\nb", False),
    (r"\bb", "ab", False),
    (r"\bb", "a b", True),
    (r"\Bb", "ab", True),
    (r"\b\u00e9", "a\u00e9", False),  # Unicode word characters
    (r"\b{start}b", "a b", True),
    (r"\<b", "ab", False),
    (r"a\b{end}", "a b", True),
    (r"a\>", "ab", False),
    (r"\b{start-half}b", "-b", True),
    (r"\b{start-half}b", "ab", False),
    (r"a\b{end-half}", "a-", True),
    (r"a\b{end-half}", "ab", False),
    (r"\b{nope}", "a", BAD),
    # Grouping and flags.
    (r"^(a)$", "a", True),
    (r"^(?P<name>a)$", "a", True),
    (r"^(?<name>a)$", "a", True),
    (r"^(?:a)$", "a", True),
    (r"(?<n>a)(?<n>b)", "ab", BAD),  # duplicate capture group name
    (r"(?P=n)", "a", BAD),
    (r"(?i)ABC", "abc", True),
    (r"(?i)k", "\u212a", True),  # KELVIN SIGN: Unicode simple case folding
    (r"(?i-u)k", "\u212a", False),  # ASCII case folding
    (r"(?mR)a$", "a\r\nb", True),  # CRLF mode
    (r"(?m)a$", "a\r\nb", False),
    (r"(?R)a.b", "a\rb", False),
    (r"(?U)^a+$", "aa", True),  # swapped greed, same set of matches
    (r"(?x) a b ", "ab", True),  # verbose mode
    (r"(?x)a\ b", "a b", True),
    (r"(?x)a # comment", "a", True),
    (r"(?x)a[ ]b", "a b", BAD),  # x ignores white space in classes too: "[]b" is unclosed
    (r"(?x)a[\x20]b", "a b", True),
    (r"(?u:\w)", "\u00e9", True),
    (r"(?-u:\w)", "\u00e9", False),
    (r"(?-u:\xFF)", "a", BAD),  # could match invalid UTF-8
    (r"(?-u:.)", "a", BAD),
    (r"(?z)", "a", BAD),
    (r"(?=a)", "a", BAD),  # no look-around
    (r"(?!a)", "a", BAD),
    (r"(?<=a)b", "ab", BAD),
    (r"(?<!a)b", "b", BAD),
    ("(" * 300 + "a" + ")" * 300, "a", BAD),  # nest limit 250
    (r"(", "a", BAD),
    (r")", "a", BAD),
    # Escape sequences.
    (r"^\*$", "*", True),
    (r"\%", "%", True),  # any ASCII punctuation but < > may be escaped
    (r"a\tb", "a\tb", True),
    (r"a\nb", "a\nb", True),
    (r"a\rb", "a\rb", True),
    (r"a\x07b", "a\x07b", True),
    (r"a\ab", "a\x07b", True),  # \a is the bell
    (r"a\fb", "a\x0cb", True),
    (r"a\vb", "a\x0bb", True),
    (r"\x41", "A", True),
    (r"\x{263A}", "\u263a", True),
    (r"\u0041", "A", True),
    (r"\u{263A}", "\u263a", True),
    (r"\U0001F600", "\U0001f600", True),
    (r"\U{1F600}", "\U0001f600", True),
    (r"\123", "S", BAD),  # octal is off by default; read as a back-reference
    (r"\1", "a", BAD),  # no back-references
    (r"\0", "a", BAD),
    (r"\Qa\E", "a", BAD),  # no quoting
    (r"\e", "a", BAD),
    (r"\p{Letter}", "\u00e9", True),
    (r"\p{sc=Greek}", "\u03b1", True),
    (r"\p{Lu}", "A", True),
    (r"\P{Letter}", "\u00e9", False),
    # Perl character classes (Unicode friendly).
    (r"^\w+$", "\u00e9t\u00e9_1", True),
    (r"^\W$", "\u00e9", False),
    (r"a\sb", "a\u00a0b", True),  # NO-BREAK SPACE is White_Space
    (r"(?-u:a\sb)", "a\u00a0b", False),
    (r"^\S$", "\u00a0x", True),  # the NO-BREAK SPACE is trimmed, leaving "x"
    # ASCII character classes.
    (r"[[:digit:]]", "\u0663", False),
    (r"^[[:word:]]+$", "a_1", True),
    (r"[[:nope:]]", "a", False),  # not a class name: a nested class of ":nope"
    (r"[[:nope:]]", "n", True),
    # Empty pattern: matches every response.
    ("", "anything", True),
]


@pytest.fixture(scope="module")
def syntax_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tree, dict[str, str]]:
    tree = Tree(tmp_path_factory.mktemp("syntax"))
    paths: dict[str, str] = {}
    for i, text in enumerate(sorted({text for _, text, _ in SYNTAX})):
        paths[text] = str(tree.ok("ds", f"q{i}", "s", text))
    return tree, paths


@pytest.mark.parametrize(("pattern", "text", "expected"), SYNTAX)
def test_regex_crate_syntax(
    syntax_tree: tuple[Tree, dict[str, str]], pattern: str, text: str, expected: bool | str
) -> None:
    tree, paths = syntax_tree
    if expected == BAD:
        with pytest.raises(UsageError, match="invalid regular expression"):
            find(pattern, tree.results)
        return
    matched = {m.path for m in find(pattern, tree.results)}
    assert (paths[text] in matched) is expected


def test_issue_cases(tree: Tree) -> None:
    """The issue's list: valid in kag and matching here; refused by kag, refused here."""
    tree.ok("ds", "q1", "s", "\u0663 b" + "b" * 1001)
    for pattern in (
        *(r"\d", r"[a-z&&[^a]]", r"[a-z--a]", r"[a-z~~a]", r"\<b", r"b\>", r"\b{start}b"),
        *(r"b\b{end}", r"\b{start-half}b", r"(?x) b b", r"(?u:\w)", r"(?-u:\w)"),
        *(r"\u{0663}", r"b**", r"b{1001}"),
    ):
        assert len(find(pattern, tree.results)) == 1, pattern
    for pattern in (r"\Qa\E", r"\0", r"\w{1000}{1000}"):
        with pytest.raises(UsageError):
            find(pattern, tree.results)


def test_cli_valid_and_refused_patterns(tree: Tree) -> None:
    tree.ok("ds", "q1", "s", "\u0663")
    root = str(tree.results)
    done = run_cli("stats", "-r", root, "find", r"^\d$", "--format", "json")
    assert (done.returncode, done.stdout.count(".json")) == (0, 1), done.stderr
    done = run_cli("stats", "-r", root, "find", r"\w{1000}{1000}")
    assert done.returncode == 2
    assert done.stderr.endswith(
        "kagreport: error: invalid regular expression '\\\\w{1000}{1000}': "
        "Compiled regex exceeds size limit of 10485760 bytes.\n"
    )
    assert "usage: kagreport stats find" in done.stderr


def test_parse_errors_show_the_crate_message_with_its_caret() -> None:
    # kag (clap) prints "invalid value '(' for '<REGEX>': " and then the crate's error.
    with pytest.raises(UsageError) as info:
        compile_pattern("a(")
    assert str(info.value) == (
        "invalid regular expression 'a(': regex parse error:\n    a(\n     ^\nerror: unclosed group"
    )


def test_compiled_pattern_is_reused_and_searches() -> None:
    pattern = compile_pattern(r"\d")
    assert compile_pattern(pattern) is pattern
    assert pattern.search("\u0663")
    assert not pattern.search("x")
