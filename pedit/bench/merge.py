"""Several saved runs (pedit bench --json) as one: a backend measured twice keeps the later runs of a task."""

from __future__ import annotations


def merge(datas: list[dict]) -> dict:
    """Several saved runs as one report, in order: results of another backend or model are
    added; for the same backend and model, a run with only the sampling check (--repeats 0
    --seeds N) joins the earlier result, and a timed run of some tasks (--tasks) replaces
    those tasks' runs in it ("rerun") or adds them ("later": a suite run in parts); every
    ratio is still against plain decoding of the same process; the limit stays the first
    run's."""
    if len(datas) == 1:
        return datas[0]
    out = dict(datas[0])
    results: list[dict] = []
    for d in datas:
        for r in d["results"]:
            home = next(
                (h for h in results if (h["backend"], h["model"]) == (r["backend"], r["model"])), None
            )
            if home is None:
                results.append({**r, "runs": list(r["runs"]), "sampled": list(r.get("sampled", []))})
                continue
            if r["runs"] and not home["runs"]:
                home.update({k: r[k] for k in ("runs", "cost", "limit", "versions") if k in r})
                home["device"] = r.get("device", "")
            elif r["runs"]:
                tasks = {x["task"] for x in r["runs"]}
                again = tasks & {x["task"] for x in home["runs"]}
                home["runs"] = [x for x in home["runs"] if x["task"] not in again] + list(r["runs"])
                for key, which in (("rerun", again), ("later", tasks - again)):
                    if which:
                        home.setdefault(key, []).append({"tasks": sorted(which), "started": d["started"]})
            home["sampled"] = [*home.get("sampled", []), *r.get("sampled", [])]
    out["results"] = results
    out["command"] = " and ".join(dict.fromkeys(d["command"] for d in datas))
    out["started"] = ", ".join(dict.fromkeys(d["started"] for d in datas))
    tasks = {t["id"]: t for d in datas for t in d["tasks"]}
    out["tasks"] = list(tasks.values())
    out["repeats"] = "/".join(dict.fromkeys(str(d["repeats"]) for d in datas if d["repeats"])) or "0"
    out["seeds"] = max(d.get("seeds", 0) for d in datas)
    return out
