"""A command's options for its runs: the engine's, the tools', and the app's own, built in
one place (config.Settings.engine_options) and importable before the engine loads (the
engine's options are declared in engine/options.py, which imports no numpy)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..engine.options import EditOptions
from ..tools.options import ToolOptions

if TYPE_CHECKING:
    from ..engine.costmodel import CostModel


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """Job makes each run's EditOptions from `edit`, with the run's kind, limit, biases and
    grammar over it (jobs.Job.run_options)."""

    edit: EditOptions = field(
        default_factory=EditOptions
    )  # sampling, speculation, limits, the user's grammar
    tools: ToolOptions = field(default_factory=ToolOptions)
    keep_bias: float | None = None  # β on the file's next token (engine/keepbias.py); None: the template's
    json_auto: bool = True  # a .json file that parses is rewritten under a JSON grammar
    prompt_cache: bool = True  # the prompt's shared start kept on disk across commands (prefixcache.py)
    skeleton: bool = True  # a fix's answer follows its file's skeleton grammar (tools/skeleton)
    reuse: str = "exact"  # a run starts from the prompt's start read alone, or "longest" held (config.KEYS)

    def costed(self, cost: CostModel | None) -> EngineOptions:
        """These options with the loaded model's cost model (the planner's prices)."""
        return replace(self, edit=replace(self.edit, cost=cost))
