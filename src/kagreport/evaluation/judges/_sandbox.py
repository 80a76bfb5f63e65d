"""The prompt sandbox: Jinja2 templates rendered in an immutable sandbox that refuses
``None`` in a prompt and any operation that would build a huge string or number, and a
rendered message longer than ``MAX_PROMPT_CHARS``."""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kagreport._errors import KagreportError
from kagreport._optional import optional
from kagreport.evaluation.judges._protocol import JudgeFailure
from kagreport.evaluation.judges._verdict import _describe, _valid_text

if TYPE_CHECKING:
    from jinja2 import Environment, Template
    from jinja2.runtime import Context

    from kagreport.evaluation._items import AnswerItem

__all__ = ["MAX_PROMPT_CHARS"]

#: Longest rendered prompt message (characters); a longer one fails the item.
MAX_PROMPT_CHARS = 1_000_000
# A template may not compute an integer power of more bits than this.
_MAX_POWER_BITS = 100_000

_TEMPLATE_VARIABLES = ("item", "context")


class _NoneInPrompt(KagreportError, ValueError):
    """A prompt field that is None (a ValueError too, as Jinja's own errors)."""


class _PromptTooLong(KagreportError, ValueError):
    """A rendered prompt over the length limit (a ValueError too)."""


def _refuse_none(value: Any) -> Any:
    # A prompt reading "Reference: None" is a bug to report, not a prompt to send.
    if value is None:
        raise _NoneInPrompt(
            "it prints a value that is None (an item without a reference, or without "
            "metadata['context']?); guard it with {% if ... %}"
        )
    return value


def _too_big(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > MAX_PROMPT_CHARS


def _size_problem(what: str, values: Iterable[object]) -> str | None:
    for value in values:
        if _too_big(value):
            return (
                f"{what} of {value:,} is more than the {MAX_PROMPT_CHARS:,} characters a "
                "prompt may have"
            )
    return None


def _spec_problem(what: str, specs: Iterable[str], arguments: Iterable[object]) -> str | None:
    """A width or precision in format specs (or, for ``*`` and nested fields, in the
    arguments) beyond what a prompt may hold."""
    nested = False
    for spec in specs:
        nested = nested or "*" in spec or "{" in spec
        for digits in re.findall(r"\d+", spec):
            if (
                len(digits.lstrip("0")) > len(str(MAX_PROMPT_CHARS))
                or int(digits) > MAX_PROMPT_CHARS
            ):
                return (
                    f"{what} asks for a width or precision of {digits} characters, more than "
                    "a prompt may have"
                )
    return _size_problem(f"{what}: a width", arguments) if nested else None


_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*((?:\*|\d+)?(?:\.(?:\*|\d+))?)")


def _printf_problem(template: object, arguments: object) -> str | None:
    if not isinstance(template, str):
        return None
    values = arguments if isinstance(arguments, tuple) else (arguments,)
    specs = (match.group(1) for match in _PRINTF_SPEC.finditer(template))
    return _spec_problem("'%' formatting", specs, values)


def _str_format_problem(
    template: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> str | None:
    try:
        specs = [spec for _, _, spec, _ in string.Formatter().parse(template) if spec]
    except ValueError:
        return None  # format() itself says what is wrong
    values = [*args, *kwargs.values()]
    values += [v for arg in args if isinstance(arg, Mapping) for v in arg.values()]
    return _spec_problem("str.format", specs, values)


def _binop_problem(operator: str, left: Any, right: Any) -> str | None:
    """Why ``left <operator> right`` would be too big to compute in a prompt, or None."""
    if operator == "*":
        for sequence, count in ((left, right), (right, left)):
            if (
                isinstance(sequence, str | bytes | list | tuple)
                and isinstance(count, int)
                and len(sequence) * count > MAX_PROMPT_CHARS
            ):
                return (
                    f"'*' would make {len(sequence) * count:,} characters or items, more than "
                    f"the {MAX_PROMPT_CHARS:,} a prompt may have"
                )
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        bits = right * (abs(left).bit_length() - 1)
        if bits > _MAX_POWER_BITS:
            return f"'**' would make a number of about {bits:,} bits"
    elif operator == "%":
        return _printf_problem(left, right)
    return None


# str methods whose integer arguments are the length of what they return.
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


@functools.cache
def _environment_class() -> type[Environment]:
    with optional("jinja2"):
        from jinja2.exceptions import SecurityError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

    def checked(problem: str | None) -> None:
        if problem is not None:
            raise SecurityError(problem)

    class PromptEnvironment(ImmutableSandboxedEnvironment):
        """The sandbox, plus size checks on the usual ways a template builds a huge
        string ('*', '**', '%', str.format, padding methods and filters), so that they
        fail at once instead of taking the memory or minutes. Anything else still meets
        the cap on the rendered prompt, and any error fails only the item."""

        # Intercepted operators are also not folded into constants at compile time.
        intercepted_binops = frozenset({"*", "**", "%"})

        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            filters = self.filters
            format_filter, center_filter, indent_filter = (
                filters["format"],
                filters["center"],
                filters["indent"],
            )

            def format_checked(value: Any, *args: Any, **kwargs: Any) -> Any:
                checked(_printf_problem(str(value), tuple(kwargs.values()) or args))
                return format_filter(value, *args, **kwargs)

            def center_checked(value: Any, width: Any = 80) -> Any:
                checked(_size_problem("center: a width", [width]))
                return center_filter(value, width)

            def indent_checked(value: Any, width: Any = 4, *args: Any, **kwargs: Any) -> Any:
                checked(_size_problem("indent: a width", [width]))
                return indent_filter(value, width, *args, **kwargs)

            filters.update(format=format_checked, center=center_checked, indent=indent_checked)

        def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
            checked(_binop_problem(operator, left, right))
            return super().call_binop(context, operator, left, right)

        def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            template = value.__self__

            def format_checked(*args: Any, **kwargs: Any) -> str:
                checked(_str_format_problem(template, args, kwargs))
                return wrapped(*args, **kwargs)

            return format_checked

        def call(
            __self,
            __context: Context,
            __obj: Any,
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            name = getattr(__obj, "__name__", None)
            if isinstance(getattr(__obj, "__self__", None), str) and name in _PADDING_METHODS:
                arguments = [*args, *kwargs.values()]
                checked(_size_problem(f"str.{name}: a width", arguments))
            return super().call(__context, __obj, *args, **kwargs)

    return PromptEnvironment


def _environment() -> Environment:
    with optional("jinja2"):
        from jinja2 import StrictUndefined

    # Sandboxed and immutable: a template may read the item, not call into or change it.
    # No autoescape: prompts are plain text, and "&amp;" would change what the model reads.
    return _environment_class()(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=_refuse_none,
    )


def _compile(environment: Environment, source: object, parameter: str) -> Template:
    with optional("jinja2"):
        from jinja2 import TemplateSyntaxError, meta

    if not isinstance(source, str) or not source.strip():
        raise ValueError(
            f"`{parameter}` must be a non-empty Jinja2 template string, not {source!r}"
        )
    try:
        tree = environment.parse(source)
    except TemplateSyntaxError as exc:
        raise ValueError(
            f"`{parameter}` is not a valid Jinja2 template (line {exc.lineno}): {exc.message}"
        ) from exc
    unknown = meta.find_undeclared_variables(tree) - set(_TEMPLATE_VARIABLES)
    unknown -= set(environment.globals)
    if unknown:
        raise ValueError(
            f"`{parameter}` uses undefined {'variable' if len(unknown) == 1 else 'variables'} "
            f"{', '.join(sorted(unknown))}; templates "
            "see `item` (item.question, item.answer, item.reference, item.identifier, "
            "item.metadata) and `context` (item.metadata['context'], or None)"
        )
    return environment.from_string(source)


def _render(template: Template, item: AnswerItem, which: str, judge: str) -> str:
    """The rendered message (valid UTF-8); JudgeFailure, naming ``judge``, if the template
    fails or renders more than MAX_PROMPT_CHARS characters."""
    with optional("jinja2"):
        from jinja2 import TemplateError

    parts: list[str] = []
    size = 0
    try:
        # Streamed, so a prompt growing past the limit stops there.
        for part in template.generate(item=item, context=item.metadata.get("context")):
            size += len(part)
            if size > MAX_PROMPT_CHARS:
                raise _PromptTooLong(
                    f"it renders more than {MAX_PROMPT_CHARS:,} characters, the most a "
                    "prompt message may have"
                )
            parts.append(part)
    except Exception as exc:  # any failure of the template fails this item, clearly
        detail = _describe(exc, (TemplateError, _NoneInPrompt, _PromptTooLong))
        raise JudgeFailure(
            f"judge {judge!r}: the {which} template failed for item {item.identifier!r}: {detail}",
            cause=f"the {which} template failed: {detail}",
        ) from exc
    return _valid_text("".join(parts))
