"""EngineOptions from one flat set of keywords, for tests that vary any of its fields."""

from __future__ import annotations

from dataclasses import fields

from pedit.app.options import EngineOptions
from pedit.engine.options import EditOptions
from pedit.tools.options import ToolOptions


def engine_options(**given) -> EngineOptions:
    """EngineOptions with each keyword on the part that has it: the engine's, the tools' or its own."""
    parts = {"edit": EditOptions, "tools": ToolOptions}
    own = {f.name for f in fields(EngineOptions)} - set(parts)
    unknown = set(given) - own - {f.name for p in parts.values() for f in fields(p)}
    assert not unknown, f"no such option: {unknown}"
    made = {k: cls(**{f.name: given[f.name] for f in fields(cls) if f.name in given and f.name not in own})
            for k, cls in parts.items()}  # fmt: skip
    return EngineOptions(**made, **{k: v for k, v in given.items() if k in own})
