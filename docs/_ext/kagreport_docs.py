"""The generated parts of kagreport's documentation (a local Sphinx extension).

- ``.. kagreport-cli::`` writes the command-line reference from the argparse parser the
  ``kagreport`` command itself uses (``kagreport.cli._main.build_parser``): every command and
  sub-command, its usage, arguments and help. Nothing of it is copied by hand.
- ``.. kagreport-api:: PACKAGE`` documents a public package from its ``__all__``. Each public
  object has one home, the package that documents it in full: of the packages in
  ``kagreport_api_packages`` whose ``__all__`` holds it, the one whose name is the longest
  prefix of the module that defines it (``kagreport.evaluation`` for
  ``kagreport.evaluation._report.AnswerEvaluation``), else the first in that list (the layer
  order). The other packages that export it link to its home.
- A cross-reference that names an object by its private module (``kagreport._errors.InputError``,
  as type hints do) or by its bare name (``Run``) is resolved to that object's home.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import typing
from collections.abc import Iterator
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.directives.other import TocTree, glob_re
from sphinx.environment import BuildEnvironment
from sphinx.util import docname_join, logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.matching import patfilter
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

# Values of these types are compared by identity only when they are containers: two packages
# that both define RESPONSE_LIMIT = 2000 define two constants, documented in each.
_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _kind(value: Any) -> str:
    if inspect.isclass(value):
        return "class"
    if inspect.isroutine(value):
        return "function"
    return "data"


class _Homes:
    """Where each public object of the listed packages is documented in full."""

    def __init__(self, packages: list[str]) -> None:
        self.packages = packages
        self.home: dict[tuple[str, str], str] = {}  # (package, name) -> home package
        self.by_id: dict[int, str] = {}  # id(object) -> its documented path
        self.by_name: dict[str, set[str]] = {}  # bare name -> documented paths
        self._private: set[str] | None = None
        claims: dict[int, list[str]] = {}
        for package in packages:
            module = importlib.import_module(package)
            for name in module.__all__:
                value = getattr(module, name)
                if not isinstance(value, _SCALARS):
                    claims.setdefault(id(value), []).append(package)
        for package in packages:
            module = importlib.import_module(package)
            for name in module.__all__:
                value = getattr(module, name)
                home = package
                if not isinstance(value, _SCALARS):
                    home = self._choose(value, claims[id(value)])
                    self.by_id[id(value)] = f"{home}.{name}"
                self.home[package, name] = home
                if home == package:
                    self.by_name.setdefault(name, set()).add(f"{home}.{name}")

    def _choose(self, value: Any, candidates: list[str]) -> str:
        defined = getattr(value, "__module__", None) if _kind(value) != "data" else None
        if isinstance(defined, str):
            prefixes = [c for c in candidates if defined == c or defined.startswith(c + ".")]
            if prefixes:
                return max(prefixes, key=len)
        return min(candidates, key=self.packages.index)

    def private_names(self) -> set[str]:
        """The names that the modules of kagreport define and that are not public."""
        if self._private is None:
            import pkgutil

            import kagreport

            names: set[str] = set()
            for info in pkgutil.walk_packages(kagreport.__path__, "kagreport."):
                if not info.name.endswith("__main__"):  # which would run the command
                    names.update(vars(importlib.import_module(info.name)))
            self._private = names - set(self.by_name)
        return self._private

    def public_path(self, target: str) -> str | None:
        """The documented path of ``target`` (a private or bare path), or None."""
        if target.startswith("kagreport"):
            found = _import_path(target)
            if found is None:
                return None
            value, rest = found
            path = self.by_id.get(id(value))
            return None if path is None else ".".join([path, *rest])
        first, dot, member = target.partition(".")
        paths = self.by_name.get(first, set())
        if len(paths) != 1:
            return None
        return next(iter(paths)) + dot + member


def _import_path(target: str) -> tuple[Any, list[str]] | None:
    """The object a dotted ``kagreport...`` path names and the members after it."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        if cut == len(parts):
            return None  # a module: not an object of __all__
        try:
            return getattr(module, parts[cut]), parts[cut + 1 :]
        except AttributeError:
            return None
    return None


_CACHE: dict[tuple[str, ...], _Homes] = {}


def _homes(env: BuildEnvironment) -> _Homes:
    packages = tuple(env.config.kagreport_api_packages)
    if packages not in _CACHE:
        _CACHE[packages] = _Homes(list(packages))
    return _CACHE[packages]


class ApiDirective(SphinxDirective):
    """``.. kagreport-api:: PACKAGE``: the package's docstring and its public names."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        package = self.arguments[0]
        homes = _homes(self.env)
        if package not in homes.packages:
            raise self.error(f"{package} is not in kagreport_api_packages (docs/conf.py)")
        module = importlib.import_module(package)
        lines = [f".. automodule:: {package}", ""]
        sections: dict[str, list[str]] = {"class": [], "function": [], "data": []}
        elsewhere: list[str] = []
        for name in sorted(module.__all__, key=lambda n: (n.lower(), n)):
            value = getattr(module, name)
            home = homes.home[package, name]
            if home != package:
                elsewhere.append(f"- :py:obj:`{name} <{home}.{name}>` (from :py:mod:`{home}`)")
                continue
            sections[_kind(value)].extend(_autodoc(package, name, value))
        titles = {"class": "Classes", "function": "Functions", "data": "Constants"}
        for kind, body in sections.items():
            if body:
                lines += [titles[kind], "-" * len(titles[kind]), "", *body]
        returned = _returned_types(package, module, homes)
        if returned:
            title = "Returned types"
            lines += [
                title,
                "-" * len(title),
                "",
                "What the names above return or hold. Not exported: read their fields; the "
                "path shown is where each is defined.",
                "",
            ]
            for cls in returned:
                lines += _autodoc(cls.__module__, cls.__qualname__, cls)
        if elsewhere:
            title = "Also exported here"
            lines += [title, "-" * len(title), "", *elsewhere, ""]
        content = StringList(lines, source=f"<kagreport-api {package}>")
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(self.state, content, container)
        return list(container.children)


def _annotation_texts(value: Any) -> list[str]:
    """The annotations of ``value`` as text: a function's return, a class's fields and the
    returns of its methods and properties (strings under ``from __future__ import
    annotations``)."""
    functions: list[Any] = []
    texts: list[str] = []
    if inspect.isclass(value):
        texts += [str(a) for a in vars(value).get("__annotations__", {}).values()]
        for member in vars(value).values():
            if isinstance(member, property):
                member = member.fget
            member = getattr(member, "__func__", member)
            if inspect.isfunction(member):
                functions.append(member)
    elif callable(value):
        functions.append(value)
    for function in functions:
        try:
            annotation = inspect.signature(function).return_annotation
        except (TypeError, ValueError):
            continue
        if annotation is not inspect.Signature.empty:
            texts.append(annotation if isinstance(annotation, str) else repr(annotation))
    return texts


def _returned_types(package: str, module: Any, homes: _Homes) -> list[type]:
    """The classes that ``package``'s own public names return or hold (and those these
    hold), defined in its private modules and public nowhere: documented on its page."""
    import pkgutil

    private: dict[str, type] = {}
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        first = info.name[len(package) + 1 :].split(".")[0]
        if not first.startswith("_") or info.name.endswith("__main__"):
            continue
        for name, value in vars(importlib.import_module(info.name)).items():
            if (
                inspect.isclass(value)
                and value.__module__ == info.name
                and not name.startswith("_")
                and id(value) not in homes.by_id
                and name not in homes.by_name  # a protocol named after the public class
            ):
                private.setdefault(name, value)
    todo: list[str] = []
    for name in module.__all__:
        if homes.home[package, name] == package:
            todo += _annotation_texts(getattr(module, name))
    found: dict[str, type] = {}
    while todo:
        for word in re.findall(r"[A-Za-z_]\w*", todo.pop()):
            cls = private.get(word)
            if cls is not None and word not in found:
                found[word] = cls
                todo += _annotation_texts(cls)
    return [found[name] for name in sorted(found)]


def _autodoc(package: str, name: str, value: Any) -> list[str]:
    kind = _kind(value)
    if kind != "class":
        return [f".. auto{kind}:: {package}.{name}", ""]
    # Members that classes outside kagreport define (Exception.args, Enum.name, a widget's
    # traits) are theirs to document.
    foreign = sorted(
        {c.__name__ for c in value.__mro__ if not c.__module__.startswith("kagreport")}
    )
    lines = [
        f".. autoclass:: {package}.{name}",
        "   :members:",
        f"   :inherited-members: {', '.join(foreign)}",
        "   :show-inheritance:",
    ]
    listed = _attributes_section(inspect.getdoc(value) or "")
    if listed:
        # Documented by the class docstring's Attributes section, not again as members.
        lines.append(f"   :exclude-members: {', '.join(sorted(listed))}")
    return [*lines, ""]


def _attributes_section(doc: str) -> set[str]:
    """The names a numpydoc ``Attributes`` section lists."""
    names: set[str] = set()
    inside = False
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        underline = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        if underline:
            inside = line.strip() == "Attributes"
            continue
        if inside and line and not line[0].isspace() and not re.fullmatch(r"-{3,}", line):
            names.add(line.split(":")[0].strip())
    return names


class CliDirective(SphinxDirective):
    """``.. kagreport-cli::``: every command of ``kagreport`` from its argparse parser."""

    def run(self) -> list[nodes.Node]:
        from kagreport.cli._main import build_parser

        return list(self._sections(build_parser()))

    def _sections(self, parser: argparse.ArgumentParser) -> Iterator[nodes.section]:
        section = nodes.section()
        section["names"].append(parser.prog)
        self.state.document.note_implicit_target(section, section)
        section += nodes.title(text=parser.prog)
        if parser.description:
            section += _verbatim(nodes.paragraph(text=parser.description))
        formatter = argparse.HelpFormatter(parser.prog, width=88)
        formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
        usage = formatter.format_help().strip()
        section += nodes.literal_block(usage, usage, language="none")
        arguments = nodes.definition_list()
        children: list[argparse.ArgumentParser] = []
        for action in parser._actions:
            if action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._SubParsersAction):
                helps = {choice.dest: choice.help for choice in action._choices_actions}
                for name, sub in action.choices.items():
                    if sub in children:
                        continue  # an alias
                    children.append(sub)
                    term = nodes.term()
                    term += nodes.reference(
                        "", "", nodes.literal(text=name), refid=nodes.make_id(sub.prog)
                    )
                    arguments += _item(term, str(helps.get(name) or ""))
                continue
            invocation = argparse.HelpFormatter(parser.prog)._format_action_invocation(action)
            help_text = formatter._expand_help(action) if action.help else ""
            arguments += _item(nodes.term("", "", nodes.literal(text=invocation)), help_text)
        if len(arguments):
            section += arguments
        yield section
        for sub in children:
            yield from self._sections(sub)


def _item(term: nodes.term, text: str) -> nodes.definition_list_item:
    item = nodes.definition_list_item()
    item += term
    definition = nodes.definition()
    definition += _verbatim(nodes.paragraph(text=text))
    item += definition
    return item


def _verbatim(paragraph: nodes.paragraph) -> nodes.paragraph:
    """Help as the parser gives it: no curly quotes, ``--engine`` not turned into a dash."""
    paragraph["support_smartquotes"] = False
    return paragraph


def _resolve(
    app: Sphinx, env: BuildEnvironment, node: Any, contnode: nodes.Element
) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    path = _homes(env).public_path(node["reftarget"])
    if path is None or path == node["reftarget"]:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", path, node, contnode)


class OptionalGlobTocTree(TocTree):
    """A ``toctree`` whose glob patterns may match no document (yet): ``docs/guides/*``."""

    def run(self) -> list[nodes.Node]:
        if "glob" in self.options:
            here = self.env.docname
            found = self.env.found_docs - {here}
            kept: list[str] = [
                entry
                for entry in self.content
                if not glob_re.match(entry) or patfilter(found, docname_join(here, entry))
            ]
            self.content = StringList(kept)
        return super().run()


_FOOTNOTE = re.compile(r"^(\s*)\.\. \[(\d+)\]")
_CITED = re.compile(r"\[(\d+)\]_")


def _no_inline_type(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Keep napoleon from reading the first line of an attribute's or property's docstring
    as ``type: description`` ("kagreport addition: ..." is prose here; annotations give the
    types). Runs before napoleon. Also drops the docstring a constant inherits from its type
    (``dict.__doc__`` for a dict)."""
    if what not in ("attribute", "property", "data"):
        return
    if what == "data" and lines and "\n".join(lines).strip() == (inspect.getdoc(type(obj)) or ""):
        lines[:] = []
    elif lines and ":" in lines[0]:
        lines.insert(0, "")


def _own_footnotes(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Give the numbered references of a docstring (numpydoc's ``.. [1]`` and ``[1]_``)
    names of its own: two functions on one page each have a ``[1]``. They become
    auto-numbered footnotes, numbered in page order."""
    if not any(_FOOTNOTE.match(line) for line in lines):
        return
    key = re.sub(r"\W", "-", name)
    cited = {m.group(1) for line in lines for m in _CITED.finditer(line)}
    indent: int | None = None  # of the uncited reference being rewritten, while inside it
    for i, line in enumerate(lines):
        found = _FOOTNOTE.match(line)
        if found and found.group(2) not in cited:
            # Listed, not cited in the text: an item of a plain list, "[2] Holm, S. ...".
            indent = len(found.group(1))
            lines[i] = f"{found.group(1)}- [{found.group(2)}]{line[found.end() :]}"
            continue
        if indent is not None and line.strip() and len(line) - len(line.lstrip()) > indent:
            lines[i] = " " * (indent + 2) + line.lstrip()
            continue
        indent = None
        line = _FOOTNOTE.sub(rf"\1.. [#{key}-\2]", line)
        lines[i] = _CITED.sub(rf"[#{key}-\1]_", line)


def _type_words(app: Sphinx, doctree: nodes.document) -> None:
    """Settle the references that types make (signatures, numpydoc type lines).

    A public object named by its private path or its bare name points to its home. A numpydoc
    type is partly prose (``array_like of shape (n,)``, ``int, optional``, ``path-like``):
    a word of it that starts in lower case and is no ``kagreport`` path is text, as are
    private objects (a TypeVar, a private base class), which have no page. Anything else
    (``AnswerItem``, ``kagreport.runs.Run``) must resolve, or the build fails.
    """
    homes = _homes(app.env)
    for node in list(doctree.findall(addnodes.pending_xref)):
        if node.get("refdomain") != "py" or not node.hasattr("refspecific"):
            continue
        target = node["reftarget"]
        path = homes.public_path(target)
        if path is not None:
            node["reftarget"] = path
            del node["refspecific"]
        elif _is_text(target, homes):
            node.replace_self(node.children)


_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _is_text(target: str, homes: _Homes) -> bool:
    """Whether a type's word that names no public object is prose or a private name."""
    if not _NAME.fullmatch(target) or re.fullmatch(r"[A-Z]\d?", target):
        return True  # prose (``shape (n,)``), or a type variable (T)
    if target.startswith("kagreport"):
        return any(part.startswith("_") for part in target.split("."))
    if not target[:1].isupper():
        return True  # ``array_like``, ``path``, ``int``
    # A private alias or class of the package (ProgressCallback, NotUTF8Error) has no page.
    return target.split(".")[0] in homes.private_names()


def _public_bases(app: Sphinx, name: str, obj: Any, options: Any, bases: list[Any]) -> None:
    """Show a class's public bases: a private base (``_ReportMixin``, a TypeVar's
    ``Generic[T]``) is replaced by its own bases, which a reader can look up."""
    homes = _homes(app.env)
    shown: list[Any] = []
    pending = list(bases)
    while pending:
        base = pending.pop(0)
        if not inspect.isclass(base):
            base = typing.get_origin(base)
            if base is typing.Generic or not inspect.isclass(base):
                continue
        if base.__module__.startswith("kagreport") and id(base) not in homes.by_id:
            pending[:0] = [b for b in base.__bases__ if b is not object]
        elif base not in shown:
            shown.append(base)
    bases[:] = shown or [object]


def _signature(
    app: Sphinx,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """A dataclass field's ``default_factory`` default is shown as ``...`` (its ``<factory>``
    is no Python, and Sphinx then prints the whole signature as text), and a method that
    returns its own class through a private TypeVar (``read() -> _Doc``) returns that class."""
    if signature is not None:
        signature = signature.replace("<factory>", "...")
    if annotation and what == "method":
        found = _import_path(annotation.lstrip("~")) if "kagreport" in annotation else None
        if found is not None and isinstance(found[0], typing.TypeVar) and not found[1]:
            annotation = name.rsplit(".", 2)[-2]
    return signature, annotation


def _check_pages(app: Sphinx, env: BuildEnvironment) -> None:
    """Every public package (a package of kagreport that exports a name in ``__all__`` and
    has no ``_`` in its path) is in ``kagreport_api_packages`` and has its page,
    ``api/PACKAGE``. The command line exports none: its page is generated from its parser."""
    import pkgutil

    import kagreport

    listed = set(app.config.kagreport_api_packages)
    for package in app.config.kagreport_api_packages:
        if f"api/{package}" not in env.found_docs:
            logger.warning("%s has no API page: docs/api/%s.rst", package, package)
    for info in pkgutil.walk_packages(kagreport.__path__, "kagreport."):
        private = any(part.startswith("_") for part in info.name.split("."))
        if (
            info.ispkg
            and not private
            and info.name not in listed
            and getattr(importlib.import_module(info.name), "__all__", None)
        ):
            logger.warning("public package %s has no API page (docs/conf.py)", info.name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("kagreport_api_packages", [], "env")
    app.add_directive("kagreport-api", ApiDirective)
    app.add_directive("kagreport-cli", CliDirective)
    app.add_directive("optional-glob-toctree", OptionalGlobTocTree)
    app.connect("missing-reference", _resolve)
    app.connect("doctree-read", _type_words)
    app.connect("autodoc-process-docstring", _own_footnotes)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("autodoc-process-signature", _signature)
    app.connect("autodoc-process-docstring", _no_inline_type, priority=400)
    app.connect("env-check-consistency", _check_pages)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
