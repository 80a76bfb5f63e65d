"""The MMLU-Pro example shipped as one archive, unpacked into a per-user cache on first use."""

from __future__ import annotations

import io
import lzma
import os
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

import kagreport.examples._archive as archive_module
from kagreport import KagreportError
from kagreport.examples import mmlu_pro_philosophy
from kagreport.examples._archive import cache_folder, pack, tar_bytes, unpacked
from kagreport.examples._attribution import MMLU_PRO_ATTRIBUTION

REPO = Path(__file__).resolve().parents[2]
TREE = REPO / "examples" / "mmlu-pro-philosophy"
PACKAGED = REPO / "src" / "kagreport" / "examples" / "mmlu-pro-philosophy"
ARCHIVE = PACKAGED / "mmlu-pro-philosophy.tar.xz"


def _files(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _tar_xz(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    path.write_bytes(lzma.compress(buffer.getvalue()))
    return path


def _member(name: str, kind: bytes = tarfile.REGTYPE, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KAGREPORT_CACHE", str(folder))
    return folder


def test_the_archive_holds_exactly_the_repository_tree() -> None:
    # examples/mmlu-pro-philosophy/ is the reviewable form, the archive what ships: the
    # archive's tar stream must be the one packed from the tree now (names, bytes, order,
    # owner, mode and time), so that the two cannot drift.
    shipped = lzma.decompress(ARCHIVE.read_bytes())
    assert shipped == tar_bytes(TREE)
    with tarfile.open(fileobj=io.BytesIO(shipped)) as tar:
        members = tar.getmembers()
    assert len(members) == 2 + 2986  # README.md, datasets.json, 6 x 499 results less 8 missing
    assert [m.name for m in members] == sorted(m.name for m in members)
    assert {(m.mode, m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {
        (0o644, 0, 0, 0, "", "")
    }
    assert all(m.isreg() for m in members)


def test_the_attribution_ships_beside_the_archive_and_inside_it(cache: Path) -> None:
    readme = (PACKAGED / "README.md").read_text(encoding="utf-8")
    assert readme == (TREE / "README.md").read_text(encoding="utf-8")
    assert MMLU_PRO_ATTRIBUTION in readme
    assert sorted(p.name for p in PACKAGED.iterdir()) == ["README.md", ARCHIVE.name]
    example = mmlu_pro_philosophy()
    assert (example.datasets.parent / "README.md").read_text(encoding="utf-8") == readme
    assert example.attribution == MMLU_PRO_ATTRIBUTION


def test_pack_writes_the_same_bytes_twice(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "b" / "c").mkdir(parents=True)
    (tree / "z.json").write_text("{}\n")
    (tree / "b" / "c" / "x.json").write_bytes(b'{"a": 1}')
    (tree / "a.md").write_text("é\n", encoding="utf-8")
    os.utime(tree / "a.md", (1, 123456789))
    pack(tree, tmp_path / "one.tar.xz")
    os.utime(tree / "a.md", (1, 987654321))  # a file's time is not in the archive
    pack(tree, tmp_path / "two.tar.xz")
    assert (tmp_path / "one.tar.xz").read_bytes() == (tmp_path / "two.tar.xz").read_bytes()
    with tarfile.open(tmp_path / "one.tar.xz") as tar:
        assert tar.getnames() == ["a.md", "b/c/x.json", "z.json"]
    (tree / "link").symlink_to(tree / "z.json")
    with pytest.raises(ValueError, match="not a regular file"):
        tar_bytes(tree)


def test_first_use_unpacks_the_tree_into_a_folder_named_after_the_archives_hash(
    cache: Path,
) -> None:
    example = mmlu_pro_philosophy()
    root = example.datasets.parent
    assert root.parent == cache / "examples"
    assert root.name.startswith("mmlu-pro-philosophy-")
    assert len(root.name.removeprefix("mmlu-pro-philosophy-")) == 16
    assert example.results == root / "results"
    assert _files(root) == _files(TREE)
    assert sorted(p.name for p in (cache / "examples").iterdir()) == [root.name]
    # Later calls read the folder: nothing is written again.
    before = example.datasets.stat().st_mtime_ns, example.datasets.stat().st_ino
    again = mmlu_pro_philosophy()
    assert again == example
    assert (again.datasets.stat().st_mtime_ns, again.datasets.stat().st_ino) == before


def test_another_archive_is_unpacked_into_another_folder(cache: Path, tmp_path: Path) -> None:
    old = _tar_xz(tmp_path / "old.tar.xz", [(_member("data.txt"), b"old\n")])
    new = _tar_xz(tmp_path / "new.tar.xz", [(_member("data.txt"), b"new\n")])
    first, second = unpacked(old, "run"), unpacked(new, "run")
    assert first != second
    assert (first / "data.txt").read_bytes() == b"old\n"
    assert (second / "data.txt").read_bytes() == b"new\n"


def test_a_staging_folder_a_killed_process_left_is_swept_on_the_next_unpack(
    cache: Path, tmp_path: Path
) -> None:
    # SIGKILL during the first use leaves `.run-XXXX.partial`; an hour later it is nobody's.
    examples = cache / "examples"
    examples.mkdir(parents=True)
    abandoned, current = examples / ".run-dead.partial", examples / ".run-live.partial"
    for folder in (abandoned, current):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "data.txt").write_bytes(b"half")
    hour_ago = time.time() - 3601
    os.utime(abandoned, (hour_ago, hour_ago))
    unpacked(_tar_xz(tmp_path / "a.tar.xz", [(_member("data.txt"), b"new\n")]), "run")
    assert not abandoned.exists()
    assert (current / "sub" / "data.txt").read_bytes() == b"half"  # maybe another's, kept


def test_the_cache_folder_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("KAGREPORT_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_folder() == tmp_path / "home" / ".cache" / "kagreport"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # the XDG spec ignores it
    assert cache_folder() == tmp_path / "home" / ".cache" / "kagreport"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "kagreport"
    monkeypatch.setenv("KAGREPORT_CACHE", "")
    assert cache_folder() == tmp_path / "xdg" / "kagreport"
    monkeypatch.setenv("KAGREPORT_CACHE", str(tmp_path / "mine"))
    assert cache_folder() == tmp_path / "mine"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KAGREPORT_CACHE", "rel")
    assert cache_folder() == tmp_path / "rel"


@pytest.mark.parametrize(
    ("member", "why"),
    [
        (_member("/tmp/evil.txt"), "an absolute path"),
        (_member("../evil.txt"), "a path with '..'"),
        (_member("results/../../evil.txt"), "a path with '..'"),
        (_member("evil", tarfile.SYMTYPE, "/etc/passwd"), "a link"),
        (_member("evil", tarfile.LNKTYPE, "data.txt"), "a link"),
        (_member("evil", tarfile.CHRTYPE), "not a regular file or folder"),
        (_member("evil", tarfile.BLKTYPE), "not a regular file or folder"),
        (_member("evil", tarfile.FIFOTYPE), "not a regular file or folder"),
        (_member("."), "an unusual name"),
        (_member("a\\..\\..\\evil"), "an unusual name"),
    ],
)
def test_unsafe_members_are_refused_and_nothing_is_left(
    cache: Path, tmp_path: Path, member: tarfile.TarInfo, why: str
) -> None:
    bad = _tar_xz(tmp_path / "bad.tar.xz", [(_member("data.txt"), b"x"), (member, b"y")])
    with pytest.raises(KagreportError, match="refusing to unpack") as caught:
        unpacked(bad, "run")
    message = str(caught.value)
    assert why in message
    assert str(bad) in message
    assert repr(member.name) in message
    assert "\n" not in message
    assert list((cache / "examples").iterdir()) == []  # no target, no partial copy
    assert not (tmp_path / "evil.txt").exists()


def test_a_damaged_archive_is_one_line(cache: Path, tmp_path: Path) -> None:
    good = _tar_xz(tmp_path / "good.tar.xz", [(_member("data.txt"), b"x" * 5000)])
    damaged = tmp_path / "damaged.tar.xz"
    damaged.write_bytes(good.read_bytes()[:-40])
    with pytest.raises(KagreportError, match=r"damaged .*; reinstall kagreport$"):
        unpacked(damaged, "run")
    with pytest.raises(KagreportError, match="cannot be read"):
        unpacked(tmp_path / "absent.tar.xz", "run")
    assert list((cache / "examples").iterdir()) == []


def test_an_unwritable_cache_names_the_folder_and_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A folder under a regular file cannot be made, even by root.
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("KAGREPORT_CACHE", str(tmp_path / "file" / "cache"))
    with pytest.raises(KagreportError) as caught:
        mmlu_pro_philosophy()
    message = str(caught.value)
    assert message == (
        f"cannot write the kagreport cache folder {tmp_path / 'file' / 'cache' / 'examples'} "
        "(Not a directory); set KAGREPORT_CACHE to a folder you can write"
    )
    done = subprocess.run(
        [sys.executable, "-m", "kagreport", "demo"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "KAGREPORT_CACHE": str(tmp_path / "file" / "cache")},
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"kagreport: error: {message}"]


def test_a_read_only_cache_that_holds_the_folder_is_read(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = mmlu_pro_philosophy()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache was written")

    monkeypatch.setattr(archive_module, "_extract", refuse)
    monkeypatch.setattr(archive_module.tempfile, "mkdtemp", refuse)
    assert mmlu_pro_philosophy() == example


def test_the_process_that_loses_the_race_uses_the_winners_folder(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = _tar_xz(tmp_path / "a.tar.xz", [(_member("data.txt"), b"whole\n")])
    extract = archive_module._extract
    winners: list[Path] = []
    calls: list[Path] = []

    def extract_then_lose(source: Path, data: bytes, into: Path) -> None:
        calls.append(into)
        extract(source, data, into)
        if len(calls) == 1:  # another process unpacks and renames first, meanwhile
            winners.append(unpacked(archive, "run"))

    monkeypatch.setattr(archive_module, "_extract", extract_then_lose)
    folder = unpacked(archive, "run")
    assert winners == [folder]
    assert len(calls) == 2
    assert (folder / "data.txt").read_bytes() == b"whole\n"
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]  # copy removed


@pytest.mark.slow
def test_two_processes_unpacking_at_once_both_get_a_whole_folder(
    cache: Path, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    # Each process imports kagreport, says it is ready, waits for the same go, then asks for
    # the example; it reports (on stderr) when it has unpacked a whole copy of its own.
    script = textwrap.dedent(
        """
        import os, sys, time
        import kagreport.examples._archive as archive
        from kagreport.examples import mmlu_pro_philosophy

        extract = archive._extract
        def reporting(*args):
            extract(*args)
            print("extracted", file=sys.stderr)
        archive._extract = reporting
        open(sys.argv[1], "w").close()
        while not os.path.exists(sys.argv[2]):
            time.sleep(0.001)
        folder = mmlu_pro_philosophy().datasets.parent
        # Whole when this process gets it, not only once both are done.
        print(folder, sum(len(files) for _, _, files in os.walk(folder)))
        """
    )
    ready = [tmp_path / f"ready-{i}" for i in range(2)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(flag), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for flag in ready
    ]
    try:
        deadline = time.monotonic() + 60
        while not all(flag.exists() for flag in ready) and time.monotonic() < deadline:
            time.sleep(0.01)
        go.touch()
        outputs = [p.communicate(timeout=60) for p in processes]
    finally:
        for p in processes:
            p.kill()
            p.wait()
    assert [p.returncode for p in processes] == [0, 0], outputs
    # Both unpacked (the race happened): one renamed its copy into place, the other's was
    # removed, and both read the same whole folder.
    assert [err.split() for _, err in outputs] == [["extracted"], ["extracted"]]
    seen = {tuple(out.rsplit(maxsplit=1)) for out, _ in outputs}
    assert len(seen) == 1
    ((name, count),) = seen
    assert count == "2988"
    folder = Path(name)
    assert _files(folder) == _files(TREE)
    assert sorted(p.name for p in folder.parent.iterdir()) == [folder.name]
