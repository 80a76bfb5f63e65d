"""A real S3 endpoint on 127.0.0.1 (moto's server, in its own process) and a Dask
``LocalCluster`` of two single-threaded worker processes, shared by the tests of this folder.

Nothing here reaches the network: the S3 client is pointed at the local server, with
throw-away credentials, and botocore's instance-metadata lookup is off.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("s3fs")
pytest.importorskip("moto")
pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from s3server import moto_server


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a moto S3 server on 127.0.0.1 (a free port), stopped after the session."""
    try:
        with moto_server() as url:
            yield url
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def storage_options(s3_endpoint: str) -> dict[str, Any]:
    return {"endpoint_url": s3_endpoint}


@pytest.fixture(scope="session")
def s3(storage_options: dict[str, Any]) -> Any:
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True, **storage_options)


_buckets = iter(range(1_000_000))


def upload(s3: Any, local: Path, bucket: str | None = None) -> str:
    """Copy a local folder into a new bucket; return its ``s3://`` URL."""
    name = bucket or f"kagreport-test-{os.getpid()}-{next(_buckets)}"
    s3.mkdir(name)
    files = {
        f"{name}/{path.relative_to(local).as_posix()}": path.read_bytes()
        for path in sorted(local.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }
    s3.pipe(files)
    return f"s3://{name}"


@contextlib.contextmanager
def local_cluster(workers: int, **kwargs: Any) -> Iterator[Any]:
    """A Dask client of a LocalCluster of ``workers`` single-threaded worker processes on
    127.0.0.1 (no dashboard port clash), closed afterwards."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=50, **kwargs,
    )  # fmt: skip
    client = Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close(timeout=10)
        cluster.close(timeout=10)


@pytest.fixture(scope="session")
def dask_client(s3_endpoint: str) -> Iterator[Any]:
    """A Dask client of a LocalCluster: 2 worker processes of 1 thread (the S3 variables
    are set before it starts, so its workers inherit them)."""
    with local_cluster(2) as client:
        yield client
