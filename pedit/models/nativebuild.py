"""llama.cpp built for the CPU it runs on: the fastest build that runs here, from one command.

    python pedit/models/nativebuild.py [install|check|isa native|isa FLAGS...]
    python -m pedit.models.nativebuild          # once pedit is installed: install, then check

llama-cpp-python has no wheel: pip compiles llama.cpp, and a build for AVX2 leaves a Zen 4's
AVX-512 unused (prompts and draft verification 1.33x slower, docs/models.md). llama.cpp's own
default, GGML_NATIVE=ON (-march=native), uses every instruction the CPU has, so that is the
build (the "native" tier). Two things can make it unsafe, and each has its answer:

- AMX. -march=native on a Xeon with AMX compiles ggml's AMX tile kernels. They run only when
  the kernel grants the process AMX's tile state (arch_prctl ARCH_REQ_XCOMP_PERM) and the
  hypervisor passes the tiles through. Before building, `amx` compiles and runs a tiny program
  that asks for the permission and multiplies one tile (AMX_C): when that does not give the
  right answer, the build leaves AMX out (-mno-amx-int8: ggml's AMX code needs __AMX_INT8__).
- Anything else the build runs and the machine will not. After installing, `check` runs the
  build check's probe (probe.py: a tiny model quantized and run by this build, in a child). A
  probe killed by a signal marks the tier as crashing on this CPU (with the function it died
  in, from gdb when the machine has it), and the next tier is built: native without AMX,
  then ggml's own AVX-512 flags (without what only -march=native enables: AVX512-FP16,
  AVX-VNNI, the tuning), then the AVX2 build every x86-64 machine here runs. On Arm: native
  (NEON, dotprod, i8mm as the CPU has them; Metal on Apple silicon, llama.cpp's default),
  then generic.

A wheel, once built and checked, is kept per CPU and tier in the user cache (wheels/): a
second install on the same kind of machine reuses it, and pip's own wheel cache (keyed by
the sdist, not by the flags that built it) never hands one CPU's build to another.

Standard library only: the Makefile runs this file by path before pedit's dependencies are
installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "0.3.36"  # llama-cpp-python's, as pyproject.toml pins it (tests/test_nativebuild.py)
COMMON = "-DLLAVA_BUILD=OFF"  # its multimodal part is not needed
AVX2 = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
NO_AMX = "-DCMAKE_C_FLAGS='-mno-amx-int8' -DCMAKE_CXX_FLAGS='-mno-amx-int8'"

# The instruction sets pedit names, as ggml's CPU backend names its features (ggml-cpu.cpp
# ggml_backend_cpu_get_features), and the compiler's macro for each.
MACROS = {
    "__AVX2__": "AVX2", "__FMA__": "FMA", "__F16C__": "F16C", "__AVX512F__": "AVX512",
    "__AVX512VNNI__": "AVX512_VNNI", "__AVX512VBMI__": "AVX512_VBMI", "__AVX512BF16__": "AVX512_BF16",
    "__AVXVNNI__": "AVX_VNNI", "__AMX_INT8__": "AMX_INT8", "__ARM_NEON": "NEON",
    "__ARM_FEATURE_DOTPROD": "DOTPROD", "__ARM_FEATURE_MATMUL_INT8": "MATMUL_INT8",
    "__ARM_FEATURE_SVE": "SVE", "__ARM_FEATURE_SVE2": "SVE2",
}  # fmt: skip

# ...and the CPU's flag for each (Linux /proc/cpuinfo, x86 and Arm).
CPU_FLAGS = {
    "avx2": "AVX2", "fma": "FMA", "f16c": "F16C", "avx512f": "AVX512", "avx512_vnni": "AVX512_VNNI",
    "avx512vbmi": "AVX512_VBMI", "avx512_bf16": "AVX512_BF16", "avx_vnni": "AVX_VNNI",
    "amx_int8": "AMX_INT8", "asimd": "NEON", "asimddp": "DOTPROD", "i8mm": "MATMUL_INT8", "sve": "SVE",
    "sve2": "SVE2",
}  # fmt: skip
# How each family is named, widest first: (the family's feature, its name, its extensions)
FAMILIES = (
    ("AVX512", "AVX-512", (("AVX512_VNNI", "VNNI"), ("AVX512_VBMI", "VBMI"), ("AVX512_BF16", "BF16"))),
    ("AVX2", "AVX2", (("AVX_VNNI", "AVX-VNNI"), ("FMA", "FMA"), ("F16C", "F16C"))),
    ("NEON", "NEON", (("DOTPROD", "dotprod"), ("MATMUL_INT8", "i8mm"), ("SVE", "SVE"), ("SVE2", "SVE2"))),
)


def describe(features) -> str:
    """A build's instruction sets in words: "AVX-512 (VNNI, VBMI, BF16)", "AMX + AVX-512
    (VNNI)", "AVX2 (FMA, F16C)", "NEON (dotprod, i8mm)"; "no SIMD beyond SSE" for none."""
    have = set(features)
    for family, name, extensions in FAMILIES:
        if family in have:
            ext = [label for feature, label in extensions if feature in have]
            text = name + (f" ({', '.join(ext)})" if ext else "")
            return ("AMX + " if "AMX_INT8" in have else "") + text
    return "no SIMD beyond SSE"


def unused(features) -> list[str]:
    """What this CPU has that a build with these features leaves unused (AMX aside: a native
    build leaves it out where its tiles do not run): ["AVX512", ...]."""
    have = {CPU_FLAGS[f] for f in cpu_flags() if f in CPU_FLAGS} - {"AMX_INT8"}
    return sorted(have - set(features))


# AMX: the permission, one 16x64 int8 tile times another, 1 * 2 summed over 64: 128.
AMX_C = r"""
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
struct cfg { uint8_t palette, start; uint8_t reserved[14]; uint16_t colsb[16]; uint8_t rows[16]; };
int main(void) {
    if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */)) {
        puts("the kernel does not grant AMX's tile state");
        return 2;
    }
    static int8_t a[16 * 64], b[16 * 64];
    static int32_t c[16 * 16];
    struct cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 3; i++) { cfg.rows[i] = 16; cfg.colsb[i] = 64; }
    memset(a, 1, sizeof a);
    memset(b, 2, sizeof b);
    _tile_loadconfig(&cfg);
    _tile_zero(0);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, b, 64);
    _tile_dpbssd(0, 1, 2);
    _tile_stored(0, c, 64);
    _tile_release();
    printf("%d\n", c[0]);
    return c[0] == 128 ? 0 : 3;
}
"""


RECORD = Path(sys.prefix, "pedit-llama-build.json")  # the tier installed into this environment
_installed: dict | None = None  # ...as this process installed it


def cache_dir() -> Path:
    """The user cache's wheels/ (platformdirs' folder, as models.cache_root, without it)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "pedit" / "wheels"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pedit" / "wheels"


def cpuinfo(key: str) -> str:
    """The first `key: value` of Linux's /proc/cpuinfo ('' elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return value.strip()
    except OSError:
        pass
    return ""


def cpu_flags() -> set[str]:
    """The CPU's feature flags as Linux names them (x86 "flags", Arm "Features")."""
    return set((cpuinfo("flags") or cpuinfo("Features")).split())


def cpu_key() -> str:
    """This kind of CPU: architecture, model name, flags (what -march=native reads)."""
    flags = " ".join(sorted(cpu_flags()))
    return hashlib.sha256(f"{platform.machine()}|{cpuinfo('model name')}|{flags}".encode()).hexdigest()[:16]


def compiler() -> str:
    return os.environ.get("CC") or "cc"


def isa(flags: list[str]) -> list[str]:
    """The instruction sets (MACROS' names) the compiler enables with these flags."""
    done = subprocess.run([compiler(), *flags, "-dM", "-E", "-x", "c", os.devnull],
                          capture_output=True, text=True, check=False)  # fmt: skip
    defined = {ln.split()[1] for ln in done.stdout.splitlines() if ln.startswith("#define ")}
    return [name for macro, name in MACROS.items() if macro in defined]


def native_flags() -> list[str]:
    """-march=native (x86) or -mcpu=native (Arm), as llama.cpp's GGML_NATIVE builds."""
    return ["-mcpu=native"] if platform.machine().lower() in ("arm64", "aarch64") else ["-march=native"]


def amx() -> str:
    """'runs', or why AMX tiles do not run in a process here ('' when the CPU has none)."""
    if "amx_int8" not in cpu_flags():
        return ""
    with tempfile.TemporaryDirectory(prefix="pedit-amx-") as tmp:
        src, exe = Path(tmp, "amx.c"), Path(tmp, "amx")
        src.write_text(AMX_C)
        built = subprocess.run([compiler(), "-O1", "-mamx-tile", "-mamx-int8", str(src), "-o", str(exe)],
                               capture_output=True, text=True, check=False)  # fmt: skip
        if built.returncode:
            return f"the compiler cannot build AMX code: {built.stderr.strip().splitlines()[-1:]}"
        ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=False)
    if ran.returncode == 0:
        return "runs"
    if ran.returncode < 0:
        return f"a tile multiply died of {signal.Signals(-ran.returncode).name}"
    return ran.stdout.strip() or f"a tile multiply gave a wrong answer ({ran.returncode})"


def tiers() -> list[tuple[str, str]]:
    """(name, CMAKE_ARGS) from the fastest build to the safest, for this machine."""
    arch = platform.machine().lower()
    if arch in ("x86_64", "amd64"):
        tiles = amx()  # '': the CPU has no AMX, and native has none to leave out
        native = [("native", f"{COMMON} -DGGML_NATIVE=ON")] if tiles in ("", "runs") else []
        noamx = [("native-noamx", f"{COMMON} -DGGML_NATIVE=ON {NO_AMX}")] if tiles else []
        return [*native, *noamx, *avx512(), ("avx2", f"{COMMON} {AVX2}")]
    return [("native", f"{COMMON} -DGGML_NATIVE=ON"), ("generic", f"{COMMON} -DGGML_NATIVE=OFF")]


def avx512() -> list[tuple[str, str]]:
    """The AVX-512 tier, where the CPU has AVX-512: ggml's own flags for AVX-512 and the
    extensions ggml uses that this CPU has (VNNI, VBMI, BF16), and nothing else -march=native
    would enable (AVX512-FP16, AVX-VNNI, AMX, the tuning): the fallback of a native build
    that crashes for one of those."""
    flags = cpu_flags()
    if "avx512f" not in flags:
        return []
    ext = {"avx512_vnni": "AVX512_VNNI", "avx512vbmi": "AVX512_VBMI", "avx512_bf16": "AVX512_BF16"}
    on = " ".join(f"-DGGML_{name}=ON" for flag, name in ext.items() if flag in flags)
    return [("avx512", f"{COMMON} {AVX2} -DGGML_AVX512=ON {on}".rstrip())]


def crashes_path() -> Path:
    return cache_dir() / f"{cpu_key()}-crashes.json"


def crashes() -> dict[str, str]:
    """{tier: how it died} for the tiers whose builds crashed on this kind of CPU."""
    try:
        found = json.loads(crashes_path().read_text(encoding="utf-8"))
        return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}


def wheel_dir(args: str) -> Path:
    key = f"{VERSION}|{args}|{cpu_key()}|{shutil.which(compiler())}"
    return cache_dir() / hashlib.sha256(key.encode()).hexdigest()[:20]


def build(name: str, args: str) -> Path:
    """The tier's wheel: from the cache, else compiled now (minutes) and kept there."""
    folder = wheel_dir(args)
    found = sorted(folder.glob("llama_cpp_python-*.whl"))
    if found:
        print(f"llama.cpp {name} build for this CPU: {found[-1]} (built before)", flush=True)
        return found[-1]
    print(f"compiling llama.cpp ({name}: CMAKE_ARGS={args}), a few minutes...", flush=True)
    with tempfile.TemporaryDirectory(prefix="pedit-wheel-") as tmp:
        env = {**os.environ, "CMAKE_ARGS": args}
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-cache-dir",
                        "--no-binary", "llama-cpp-python", "-w", tmp, f"llama-cpp-python=={VERSION}"],
                       env=env, check=True)  # fmt: skip
        wheel = next(Path(tmp).glob("llama_cpp_python-*.whl"))
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(wheel, folder / (wheel.name + ".part"))
        os.replace(folder / (wheel.name + ".part"), folder / wheel.name)
    (folder / "build.json").write_text(json.dumps({"tier": name, "cmake_args": args}) + "\n")
    return folder / wheel.name


def install() -> str:
    """Build (or reuse) and install the fastest tier not known to crash here; its name."""
    for name, args in tiers():
        if name in crashes():
            continue
        wheel = build(name, args)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps",
                        str(wheel)], check=True)  # fmt: skip
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", str(wheel)], check=True)
        global _installed
        _installed = {"tier": name, "cmake_args": args, "libraries": libraries()}
        with contextlib.suppress(OSError):  # a prefix this user cannot write: this process knows
            RECORD.write_text(json.dumps(_installed) + "\n")
        return name
    raise SystemExit("no llama.cpp build runs on this CPU: every tier crashed (" + str(crashes()) + ")")


def libraries() -> list[str]:
    """The installed llama-cpp-python's libraries, "name|size": what a record is of."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(spec.submodule_search_locations[0]) / "lib"
    return sorted(f"{p.name}|{p.stat().st_size}" for p in folder.glob("*") if p.is_file())


def installed_tier() -> str:
    """The tier nativebuild installed, while its libraries are the installed ones ('' for a
    build it did not install: pip's, or one reinstalled since)."""
    record = _installed
    if record is None:
        try:
            record = json.loads(RECORD.read_text())
        except (OSError, ValueError):
            return ""
    ok = isinstance(record, dict) and record.get("libraries") == libraries()
    return str(record.get("tier", "")) if ok else ""


def probe_command(folder: str) -> list[str]:
    """The build check's probe (probe.py) on the installed build."""
    return [sys.executable, "-P", "-m", "pedit.models.probe", folder]


def where_it_died(folder: str, command=probe_command) -> str:
    """Where a crashing probe dies, from gdb when the machine has it ('' without): the
    signal, the innermost frames (function and library) and the faulting instruction, e.g.
    "Thread 3 received signal SIGSEGV / #0 0x7f... in ggml_vec_dot_q4_K_q8_K () from
    libggml-cpu.so / => 0x7f...: vmovdqa64 (%rax),%zmm0"."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return ""
    cmd = [gdb, "-batch", "-nx", "-ex", "run", "-ex", "bt 2", "-ex", "x/i $pc", "--args", *command(folder)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    except subprocess.TimeoutExpired:
        return ""
    keep = ("#0", "#1", "=>", "Thread", "Program received")
    lines = [" ".join(ln.split()) for ln in done.stdout.splitlines() if ln.lstrip().startswith(keep)]
    return " / ".join(lines[-4:])


def run_probe(folder: str) -> subprocess.CompletedProcess:
    """The probe in a child."""
    return subprocess.run(probe_command(folder), capture_output=True, text=True, timeout=600, check=False)


def check(probe=run_probe, reinstall=install, diagnose=where_it_died) -> str:
    """Run the probe on the installed build; on a crash, mark its tier as crashing on this
    CPU and install the next one, until one runs. The tier that runs."""
    while True:
        tier = installed_tier()
        with tempfile.TemporaryDirectory(prefix="pedit-buildcheck-") as tmp:
            ran = probe(tmp)
            if ran.returncode >= 0:
                if ran.returncode:
                    raise SystemExit(f"the llama.cpp build check failed: {ran.stderr.strip()[-2000:]}")
                said = f"llama.cpp's {tier} build, {describe(isa_of_tier(tier))}," if tier else "llama.cpp"
                print(f"{said} runs on this CPU")
                return tier
            how = signal.Signals(-ran.returncode).name
            where = diagnose(tmp)
        print(
            f"llama.cpp's {tier} build crashed on this CPU ({how}{': ' + where if where else ''})", flush=True
        )
        if not tier:
            raise SystemExit(f"the installed llama.cpp crashes here ({how}); {sys.executable} "
                             "-m pedit.models.nativebuild builds one for this CPU")  # fmt: skip
        record = crashes() | {tier: how + (f": {where}" if where else "")}
        crashes_path().parent.mkdir(parents=True, exist_ok=True)
        crashes_path().write_text(json.dumps(record, indent=1) + "\n")
        reinstall()


def isa_of_tier(tier: str) -> list[str]:
    """The instruction sets a tier's build runs on this machine (the compiler's view)."""
    args = dict(tiers()).get(tier, "")
    if "GGML_NATIVE=ON" in args:
        return isa(native_flags() + (["-mno-amx-int8"] if "mno-amx" in args else []))
    ons = [f.removeprefix("-DGGML_").removesuffix("=ON") for f in shlex.split(args) if f.endswith("=ON")]
    # ggml's CMakeLists: GGML_X=ON is -mx, AVX512 is its five base sets (F, CD, VL, DQ, BW)
    flags = [f"-m{f.lower().replace('_', '')}" for f in ons if f.startswith(("AVX", "FMA", "F16C", "BMI2"))]
    base = (
        ["-mavx512f", "-mavx512cd", "-mavx512vl", "-mavx512dq", "-mavx512bw"] if "-mavx512" in flags else []
    )
    return isa(base + [f for f in flags if f != "-mavx512"])


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "all"
    if what == "isa":  # the instruction sets a build with these compiler flags runs
        flags = native_flags() if argv[1:] in ([], ["native"]) else argv[1:]
        print(" ".join(isa(flags)))
    elif what == "install":
        install()
    elif what == "check":
        check()
    elif what == "all":
        install()
        check()
    else:
        raise SystemExit(f"unknown command {what!r}: install, check, all or isa")


if __name__ == "__main__":
    main(sys.argv[1:])
