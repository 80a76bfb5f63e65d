"""How and where a kag result tree is graded: ``EngineOptions``, one frozen object that
every entry point (``grade``, ``find``, ``watch``, the command line, ``StatsView.follow``,
the site build) takes whole, checked once when it is made.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import os
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kagreport._errors import InputError
from kagreport.grading.engine._store import GradeStore

if TYPE_CHECKING:
    from typing import Self

__all__ = ["ENGINES", "EngineOptions", "scheduler_address"]

#: The grading engines: this machine's processes, or a Dask cluster.
ENGINES = ("local", "dask")


@dataclasses.dataclass(frozen=True, slots=True, init=False)
class EngineOptions:
    """Where a result tree is read and graded, and what is kept between grades.

    Made once (each field checked here, with a message naming it), then passed whole:
    ``grade(..., options=...)``, ``find``, ``watch``, ``StatsView.follow``,
    ``build_site(..., engine_options=...)``. Their keyword arguments of the same meaning
    (``engine=``, ``workers=``, ``client=``, ``store=``, ``storage_options=``,
    ``interval=``) are a shorthand: each one given replaces its field
    (:meth:`with_keywords`). Equal options grade the same way; the report never depends
    on them.

    Parameters
    ----------
    engine : {"local", "dask"}, default "local"
        ``"local"``: this machine's processes. ``"dask"``: a Dask cluster
        (``pip install 'kagreport[dask]'``): tasks of about 2,000 result files, merged
        here in order.
    workers : int, optional
        Processes that read and decode result files (>= 1). Local engine: default the
        CPU count, at most 8; large local trees only, on Linux (forked from this process,
        or from a fork server when it has other threads); ``1`` grades in this process.
        Dask engine without a ``scheduler``: the worker processes of the ``LocalCluster``
        started for the grade (same default).
    scheduler : str or distributed.Client, optional
        Dask engine only: a ``tcp://HOST:PORT`` (or ``HOST:PORT``) scheduler address, or
        a ``distributed.Client``. Default: a ``LocalCluster`` on this machine, closed
        afterwards.
    store : GradeStore or path, optional
        Where graded files are kept between grades (a folder, made if missing; needs
        ``pip install 'kagreport[store]'``; a path becomes a ``GradeStore``): a
        rerun reads only files that are new or changed. ``find`` does not use it.
    storage_options : mapping, optional
        fsspec options for URLs (``endpoint_url``, ``anon``, ``profile``, ...); kept as
        a read-only copy.
    interval : float, default 2.0
        Following a running benchmark (``watch``, ``StatsView.follow``): seconds between
        the end of one pass and the start of the next (> 0).

    Raises
    ------
    InputError
        A ValueError too: a field out of range or of a type it cannot take; the message
        names the field and what it may be.
    """

    engine: str
    workers: int | None
    scheduler: Any
    store: GradeStore | None
    storage_options: Mapping[str, Any] | None
    interval: float

    # Long: one check per field, each with its own message.
    def __init__(
        self,
        *,
        engine: str = "local",
        workers: int | None = None,
        scheduler: Any = None,
        store: GradeStore | str | os.PathLike[str] | None = None,
        storage_options: Mapping[str, Any] | None = None,
        interval: float = 2.0,
    ) -> None:
        if engine not in ENGINES:
            allowed = ", ".join(map(repr, ENGINES))
            raise InputError(f"`engine` must be one of {allowed}, not {engine!r}")
        if workers is not None:
            count = _count(workers)
            if count is None:
                raise InputError(f"`workers` must be an int >= 1 or None, not {workers!r}")
            workers = count
        if scheduler is not None:
            if engine != "dask":
                raise InputError("`scheduler` goes with engine='dask'")
            if workers is not None:
                raise InputError(
                    "`workers` does not go with `scheduler` (the cluster has its own workers)"
                )
            if isinstance(scheduler, str):
                scheduler_address(scheduler)
        if isinstance(store, str | os.PathLike):
            store = GradeStore(store)
        elif store is not None and not isinstance(store, GradeStore):
            raise InputError(
                f"`store` must be a GradeStore, a folder or None, not {type(store).__name__}"
            )
        if storage_options is not None:
            if not isinstance(storage_options, Mapping) or not all(
                isinstance(key, str) for key in storage_options
            ):
                raise InputError("`storage_options` must be a mapping with str keys, or None")
            storage_options = types.MappingProxyType(dict(storage_options))
        if (
            isinstance(interval, bool)
            or not isinstance(interval, int | float)
            or not (interval > 0 and math.isfinite(interval))
        ):
            raise InputError(f"`interval` must be a positive number of seconds, not {interval!r}")
        set_field = object.__setattr__
        set_field(self, "engine", engine)
        set_field(self, "workers", workers)
        set_field(self, "scheduler", scheduler)
        set_field(self, "store", store)
        set_field(self, "storage_options", storage_options)
        set_field(self, "interval", float(interval))

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through the constructor (the read-only storage options do not pickle).
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if fields["storage_options"] is not None:
            fields["storage_options"] = dict(fields["storage_options"])
        return _rebuild, (type(self), fields)

    def with_keywords(self, **fields: Any) -> Self:
        """These options with each field given as a keyword, and not None, replaced.

        The one place where the keyword shorthands of the entry points (``grade(...,
        engine=, workers=, client=, store=, storage_options=)``, ...) become options.

        Raises
        ------
        InputError
            For a name that is not a field, or a value the constructor refuses.
        """
        names = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(set(fields) - set(names))
        if unknown:
            raise InputError(
                f"EngineOptions has no field {unknown[0]!r}; fields: {', '.join(names)}"
            )
        given = {name: value for name, value in fields.items() if value is not None}
        if not given:
            return self
        return type(self)(**{name: getattr(self, name) for name in names} | given)


def _rebuild(cls: type[EngineOptions], fields: dict[str, Any]) -> EngineOptions:
    return cls(**fields)


def _count(value: Any) -> int | None:
    """``value`` as an int if it is an integer >= 1 (a NumPy integer too, not a bool)."""
    if isinstance(value, bool):
        return None
    try:
        number = operator.index(value)
    except TypeError:
        return None
    return number if number >= 1 else None


def scheduler_address(address: str) -> str:
    """``address`` if it names a Dask scheduler by TCP: ``tcp://HOST:PORT`` or ``HOST:PORT``
    (an IPv6 host in brackets: ``tcp://[::1]:8786``).

    Raises
    ------
    InputError
        For anything else (other transports need a ``distributed.Client`` made by the
        caller, with its security settings).
    """
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    if location.startswith("["):
        host, bracket, port = location[1:].partition("]:")
        ok = bool(bracket)
    else:
        host, colon, port = location.rpartition(":")
        ok = bool(colon) and ":" not in host
    ok = ok and scheme == "tcp" and bool(host) and port.isascii() and port.isdigit()
    if not (ok and 0 < int(port) < 65536):
        raise InputError(
            f"not a Dask scheduler address: {address!r} (expected tcp://HOST:PORT; for "
            "another transport, pass a distributed.Client)"
        )
    return address
