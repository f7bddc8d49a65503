"""The benchmark's chart: decode speedup per task and configuration (matplotlib)."""

from __future__ import annotations

from pathlib import Path

from .cells import cells, config_names
from .run import BackendResult


def chart(data: dict, path: Path) -> bool:
    """Horizontal bars: decode speedup per task and configuration, one panel per backend.
    False (nothing written) when there are no timed runs (only the sampling check)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r for r in map(BackendResult.from_dict, data["results"]) if r.runs]
    if not results:
        return False
    n_tasks = max(len(cells(r)) for r in results)
    fig, axes = plt.subplots(1, len(results), figsize=(7 * len(results), 1.2 + 0.45 * n_tasks), squeeze=False)
    for ax, result in zip(axes[0], results, strict=True):
        table = cells(result)
        names = [c for c in config_names(result) if c not in ("plain",)]
        tasks = list(table)
        height = 0.8 / len(names)
        for i, name in enumerate(names):
            ys = [j + i * height for j in range(len(tasks))]
            xs = [table[t][name].decode if name in table[t] else 0 for t in tasks]
            ax.barh(ys, xs, height=height, label=name)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.axvline(result.cost.limit(), color="grey", linestyle="--", linewidth=0.8, label="limit")
        ax.set_yticks([j + 0.4 - height / 2 for j in range(len(tasks))], tasks, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("decode speedup vs plain decoding (same run)")
        ax.set_title(f"{result.backend} ({data['machine']['cores']} CPU cores)")
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
