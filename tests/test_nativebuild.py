"""llama.cpp built for this CPU (pedit/models/nativebuild.py): the tiers in order, the flags
that leave AMX out, a crash that moves the install to the next tier, and the names the
build's instruction sets are shown by (pedit/machine/build.py)."""

from __future__ import annotations

import json
import platform
import shlex
import shutil
import subprocess
import sys

import pytest

from pedit.machine import build
from pedit.models import nativebuild

X86 = platform.machine().lower() in ("x86_64", "amd64")
needs_x86_cc = pytest.mark.skipif(not (X86 and shutil.which("cc")), reason="an x86-64 C compiler")


@pytest.mark.parametrize(
    ("features", "said"),
    [(["AVX2", "FMA", "AVX512", "AVX512_VNNI", "AVX512_VBMI", "AVX512_BF16"], "AVX-512 (VNNI, VBMI, BF16)"),
     (["AVX2", "AVX512", "AVX512_VNNI", "AMX_INT8"], "AMX + AVX-512 (VNNI)"),
     (["SSE3", "AVX", "AVX2", "FMA", "F16C", "BMI2", "LLAMAFILE", "OPENMP", "REPACK"], "AVX2 (FMA, F16C)"),
     (["AVX2", "AVX_VNNI", "FMA"], "AVX2 (AVX-VNNI, FMA)"),
     (["NEON", "DOTPROD", "MATMUL_INT8"], "NEON (dotprod, i8mm)"),
     (["SSE3", "SSSE3"], "no SIMD beyond SSE")],
)  # fmt: skip
def test_a_build_is_named_by_its_widest_family_and_its_extensions(features, said):
    assert nativebuild.describe(features) == said


@needs_x86_cc
def test_leaving_amx_out_takes_ggml_s_amx_kernels_out_and_nothing_else():
    """ggml compiles its AMX kernels under __AMX_INT8__ (ggml-cpu/amx): -mno-amx-int8 on a
    Sapphire Rapids target removes that and keeps AVX-512 and its extensions."""
    with_amx = nativebuild.isa(["-march=sapphirerapids"])
    flags = shlex.split(nativebuild.NO_AMX)  # as scikit-build-core splits CMAKE_ARGS
    assert flags == ["-DCMAKE_C_FLAGS=-mno-amx-int8", "-DCMAKE_CXX_FLAGS=-mno-amx-int8"]
    without = nativebuild.isa(["-march=sapphirerapids", flags[0].split("=", 1)[1]])
    assert "AMX_INT8" in with_amx and without == [f for f in with_amx if f != "AMX_INT8"]
    assert {"AVX512", "AVX512_VNNI", "AVX512_BF16"} <= set(without)


@needs_x86_cc
def test_the_avx2_tier_runs_avx2_and_no_avx512():
    assert nativebuild.isa_of_tier("avx2") == ["AVX2", "FMA", "F16C"]


@needs_x86_cc
def test_the_native_tier_runs_what_this_cpu_has():
    native = set(nativebuild.isa_of_tier("native"))
    assert nativebuild.unused(native) == []  # -march=native leaves nothing of this CPU's unused


SPR = {"avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "amx_int8"}  # a Xeon's flags, in part


@pytest.mark.skipif(not X86, reason="x86's tiers")
@pytest.mark.parametrize(
    ("flags", "amx", "tiers"),
    [({"avx2", "fma"}, "", ["native", "avx2"]),  # no AVX-512, no AMX: native, else AVX2
     ({"avx2", "avx512f", "avx512_vnni"}, "", ["native", "avx512", "avx2"]),  # a Zen 4
     (SPR, "runs", ["native", "native-noamx", "avx512", "avx2"]),
     (SPR, "the kernel does not grant AMX's tile state", ["native-noamx", "avx512", "avx2"]),
     (SPR, "a tile multiply died of SIGSEGV", ["native-noamx", "avx512", "avx2"])],
)  # fmt: skip
def test_x86_tiers_go_from_fastest_to_safest_and_leave_amx_out_where_its_tiles_do_not_run(
    monkeypatch, flags, amx, tiers
):
    monkeypatch.setattr(nativebuild, "cpu_flags", lambda: flags)
    monkeypatch.setattr(nativebuild, "amx", lambda: amx)
    got = dict(nativebuild.tiers())
    assert list(got) == tiers
    assert got.get("native", "-DGGML_NATIVE=ON").endswith("-DGGML_NATIVE=ON")  # llama.cpp's default
    assert got.get("native-noamx", nativebuild.NO_AMX).endswith(nativebuild.NO_AMX)
    assert got["avx2"].endswith(nativebuild.AVX2) and "-DGGML_NATIVE=OFF" in got["avx2"]
    if "avx512" in got:  # ggml's flags for what this CPU has, no more
        wanted = {"-DGGML_AVX512=ON"} | {f"-DGGML_{n}=ON" for f, n in
                                          (("avx512_vnni", "AVX512_VNNI"), ("avx512_bf16", "AVX512_BF16"),
                                           ("avx512vbmi", "AVX512_VBMI")) if f in flags}  # fmt: skip
        assert {f for f in got["avx512"].split() if "AVX512" in f} == wanted


@needs_x86_cc
def test_the_avx512_tier_runs_ggml_s_avx512_sets(monkeypatch):
    monkeypatch.setattr(nativebuild, "cpu_flags", lambda: {"avx2", "avx512f", "avx512_vnni", "avx512_bf16"})
    monkeypatch.setattr(nativebuild, "amx", lambda: "")
    assert nativebuild.isa_of_tier("avx512") == [
        "AVX2",
        "FMA",
        "F16C",
        "AVX512",
        "AVX512_VNNI",
        "AVX512_BF16",
    ]


@needs_x86_cc
def test_the_amx_check_program_compiles(tmp_path):
    """The program amx() runs where the CPU has AMX compiles wherever the build's compiler
    does (it runs only on a CPU with amx_int8)."""
    (tmp_path / "amx.c").write_text(nativebuild.AMX_C)
    done = subprocess.run(
        ["cc", "-O1", "-mamx-tile", "-mamx-int8", str(tmp_path / "amx.c"), "-o", str(tmp_path / "amx")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_cpu_without_amx_needs_no_amx_check(monkeypatch):
    monkeypatch.setattr(nativebuild, "cpu_flags", lambda: {"avx2", "avx512f"})
    assert nativebuild.amx() == ""


def test_unused_names_what_the_cpu_has_beyond_the_build_but_not_amx(monkeypatch):
    monkeypatch.setattr(
        nativebuild, "cpu_flags", lambda: {"avx2", "fma", "f16c", "avx512f", "avx512_vnni", "amx_int8"}
    )
    assert nativebuild.unused(["AVX2", "FMA", "F16C"]) == ["AVX512", "AVX512_VNNI"]
    assert nativebuild.unused(["AVX2", "FMA", "F16C", "AVX512", "AVX512_VNNI"]) == []


# --- a crash at install: the tier is remembered as crashing and the next one installed ---------


class Ran:
    def __init__(self, code: int, stderr: str = ""):
        self.returncode, self.stderr = code, stderr


def test_a_tier_that_crashes_is_remembered_and_the_next_one_is_installed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(nativebuild, "tiers", lambda: [("native", "-DA"), ("avx2", "-DB")])
    installed = {"tier": "native"}
    monkeypatch.setattr(nativebuild, "installed_tier", lambda: installed["tier"])

    def reinstall() -> str:  # install()'s choice: the first tier not known to crash
        installed["tier"] = next(t for t, _ in nativebuild.tiers() if t not in nativebuild.crashes())
        return installed["tier"]

    probes = []

    def probe(folder):  # the native build dies of SIGSEGV, the avx2 one runs
        probes.append(installed["tier"])
        return Ran(-11 if installed["tier"] == "native" else 0)

    tier = nativebuild.check(probe=probe, reinstall=reinstall, diagnose=lambda folder: "#0 ggml_fn ()")
    assert tier == "avx2" and probes == ["native", "avx2"]
    assert nativebuild.crashes() == {"native": "SIGSEGV: #0 ggml_fn ()"}
    assert json.loads(nativebuild.crashes_path().read_text()) == nativebuild.crashes()
    assert "native build crashed on this CPU (SIGSEGV: #0 ggml_fn ())" in capsys.readouterr().out
    assert reinstall() == "avx2"  # a later install on this CPU goes straight to the tier that runs


def test_a_probe_that_fails_without_a_signal_stops_the_install(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(nativebuild, "installed_tier", lambda: "native")
    with pytest.raises(SystemExit, match="build check failed: no room"):
        nativebuild.check(probe=lambda folder: Ran(1, "no room"), reinstall=pytest.fail)
    assert nativebuild.crashes() == {}


def test_the_command_line_names_the_instruction_sets_a_native_build_runs():
    done = subprocess.run([sys.executable, nativebuild.__file__, "isa", "native"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.split() == nativebuild.isa(nativebuild.native_flags())


# --- what pedit says it runs ---------------------------------------------------------------


def test_the_installed_build_is_named_by_what_its_cpu_backend_runs():
    from pedit.backends.llama_cpp import cpu_features

    features = cpu_features()
    assert build.features() == tuple(features) and build.variant().startswith(nativebuild.describe(features))
    assert build.line().startswith(build.variant())


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb names where a crash happened")
def test_a_crash_is_located_by_function_and_instruction(tmp_path):
    """A child that dies of SIGSEGV in native code: gdb's signal line, its frame and the
    faulting instruction."""
    crash = [sys.executable, "-c", "import ctypes; ctypes.memmove(8, 16, 64)"]  # libc's memmove, at 0x8
    where = nativebuild.where_it_died(str(tmp_path), command=lambda folder: crash)
    assert "SIGSEGV" in where and "#0" in where and "=> 0x" in where


def test_a_llama_cpp_run_names_the_build_it_ran_on(tmp_path, tiny_gguf):
    """The real CLI on a llama.cpp model: --stats-json's device is the CPU with the build's
    instruction sets, as its CPU backend reports them."""
    from pedit.backends.llama_cpp import cpu_features

    (tmp_path / "n.md").write_text("Their is a eror.\n")
    stats = tmp_path / "stats.json"
    done = subprocess.run(
        [sys.executable, "-m", "pedit", "fix", "n.md", "--stdout", "-m", str(tiny_gguf), "--max-tokens", "4",
         "--stats-json", str(stats)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 5) and "Traceback" not in done.stderr  # 5: cut off at --max-tokens
    assert json.loads(stats.read_text())["device"] == f"cpu, {nativebuild.describe(cpu_features())}"


def test_the_installed_tier_is_named_only_while_its_libraries_are_installed(tmp_path, monkeypatch):
    record = tmp_path / "pedit-llama-build.json"
    monkeypatch.setattr(nativebuild, "RECORD", record)
    monkeypatch.setattr(nativebuild, "_installed", None)
    monkeypatch.setattr(nativebuild, "libraries", lambda: ["libllama.so|3935024"])
    assert nativebuild.installed_tier() == ""  # none recorded: pip's build
    record.write_text(json.dumps({"tier": "native", "libraries": ["libllama.so|3935024"]}))
    assert nativebuild.installed_tier() == "native"
    monkeypatch.setattr(nativebuild, "libraries", lambda: ["libllama.so|4100000"])  # reinstalled since
    assert nativebuild.installed_tier() == ""
