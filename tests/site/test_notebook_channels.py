"""A notebook's kernel replies are read even when a long wait on a channel misses them.

On a busy machine a cell that draws widgets sometimes timed out with its reply already
received (jupyter/nbclient issue 312): the wait on the shell channel was never woken, so the
site build waited the whole cell timeout (60 s in the tests, 600 s by default), then ran
the notebook again on a fresh kernel. The tests here stand in a channel that misses every
message that arrives while it waits (a new wait sees it at once), as the real one
sometimes does.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from queue import Empty
from typing import Any

import pytest

from kagreport.site import _notebooks
from kagreport.site._notebooks import poll_in_slices

ENDLESS = 10.0  # seconds a missed wait without a timeout stands for "never"
SLICE = 0.2  # POLL_SECONDS here (1 s in builds): the same waits, shorter


@pytest.fixture
def short_slices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_notebooks, "POLL_SECONDS", SLICE)


class _DeafChannel:
    """A channel whose wait never sees a message that comes while it waits."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.waits: list[float | None] = []

    async def get_msg(self, timeout: float | None = None) -> dict[str, Any]:
        self.waits.append(timeout)
        if self.messages:
            return self.messages.pop(0)
        if timeout is None:  # a wait that would never end: fail the test instead
            await asyncio.sleep(ENDLESS)
            raise AssertionError(f"a wait without a timeout missed its message for {ENDLESS} s")
        await asyncio.sleep(timeout)
        raise Empty


class _Client:
    def __init__(self) -> None:
        self.shell_channel = _DeafChannel()
        self.iopub_channel = _DeafChannel()


async def _arrive(channel: _DeafChannel, after: float) -> None:
    await asyncio.sleep(after)
    channel.messages.append({"msg_type": "execute_reply"})


def test_a_message_that_comes_during_a_wait_is_read_within_a_slice(short_slices: None) -> None:
    async def main() -> tuple[float, float, Any]:
        client = _Client()
        channel = client.shell_channel
        # Unchanged, the wait misses the reply and ends empty at its timeout.
        arrival = asyncio.create_task(_arrive(channel, 0.1))
        start = time.monotonic()
        with pytest.raises(Empty):
            await channel.get_msg(timeout=0.5)
        missed = time.monotonic() - start
        await arrival
        channel.messages.clear()
        poll_in_slices(client)
        arrival = asyncio.create_task(_arrive(channel, 0.1))
        start = time.monotonic()
        reply = await client.shell_channel.get_msg(timeout=30.0)
        await arrival
        return missed, time.monotonic() - start, reply

    missed, read, reply = asyncio.run(main())
    assert missed >= 0.5
    assert reply == {"msg_type": "execute_reply"}
    assert read < 5.0  # a slice or so (more on a busy machine), not the 30 s timeout


def test_the_slices_keep_the_timeout_and_the_endless_wait(short_slices: None) -> None:
    async def main() -> tuple[float, Any, list[float | None]]:
        client = _Client()
        poll_in_slices(client)
        start = time.monotonic()
        with pytest.raises(Empty):
            await client.shell_channel.get_msg(timeout=0.6)
        waited = time.monotonic() - start
        # No timeout (nbclient's wait for output): it goes on until a message comes.
        arrival = asyncio.create_task(_arrive(client.iopub_channel, 0.7))
        reply = await client.iopub_channel.get_msg()
        await arrival
        return waited, reply, client.iopub_channel.waits

    waited, reply, waits = asyncio.run(main())
    assert 0.6 <= waited < 0.6 + SLICE + 1.0
    assert reply == {"msg_type": "execute_reply"}
    assert len(waits) >= 3
    assert all(w is not None and w <= SLICE for w in waits)


@pytest.mark.notebook
def test_a_notebook_runs_on_a_kernel_whose_channels_miss_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every wait of the kernel client misses what comes meanwhile: the notebook still runs
    (it timed out twice, then failed the build, before)."""
    import nbformat
    from jupyter_client.channels import AsyncZMQSocketChannel

    from kagreport.site._notebooks import _execute

    real = AsyncZMQSocketChannel.get_msg

    async def deaf(self: Any, timeout: float | None = None) -> Any:
        if await self.socket.poll(0):  # already there: read at once
            return await real(self, timeout=0)
        await asyncio.sleep(ENDLESS if timeout is None else timeout)
        raise Empty

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", deaf)
    monkeypatch.setenv("KAGREPORT_NOTEBOOK_CELL_TIMEOUT", "5")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("6 * 7")]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    _execute(notebook, tmp_path / "deaf.ipynb")
    (output,) = notebook.cells[0].outputs
    assert output["data"]["text/plain"] == "42"
