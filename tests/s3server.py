"""A real S3 endpoint on 127.0.0.1: moto's server in its own process, with throw-away
credentials (used by the tests of ``tests/remote`` and by ``benchmarks/bench_scale.py``).

Nothing reaches the network: clients are pointed at the local server, and botocore's
instance-metadata lookup is off.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

#: What an S3 client needs to talk to the local server and nothing else.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_CONFIG_FILE": os.devnull,
}


@contextlib.contextmanager
def moto_server(start_within: float = 60.0) -> Iterator[str]:
    """Run moto's S3 server on a free port of 127.0.0.1; yield its URL.

    The AWS variables of :data:`AWS_ENV` are set while it runs (and restored after),
    so processes started meanwhile (Dask workers) inherit them.

    Raises
    ------
    RuntimeError
        If the server ends or does not listen within ``start_within`` seconds.
    """
    saved = {k: os.environ.get(k) for k in AWS_ENV}
    os.environ.update(AWS_ENV)
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    drain = None
    try:
        deadline = time.monotonic() + start_within
        url = None
        assert proc.stdout is not None
        while url is None:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"moto's server ended before it listened (exit {proc.poll()})")
            found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
            if found:
                url = found.group(0)
            elif time.monotonic() > deadline:
                raise RuntimeError(f"moto's server did not start within {start_within:g} s")
        # Keep reading its request log: a full pipe would stop the server mid-run.
        drain = threading.Thread(target=proc.stdout.read, daemon=True)
        drain.start()
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=30)
        if drain is not None:
            drain.join(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
