"""The engine's choices by name, importable without the engine (no numpy): the drafters,
the speculation modes and the widest draft the shells offer and the config file checks."""

DRAFTERS = ("predicted", "lookup", "ngram")  # in the order a composite consults them
SPECULATE = ("auto", "fixed", "off")

# Most draft tokens verified in one pass (--draft-max's default): a pass of 256, the widest
# the cost model measures; the planner only goes that wide when the draft has held for long.
DRAFT_MAX = 255

# A draft is cut where a grammar forces a run this long (EditOptions.forced_run): the run rides
# in the next pass without logits. 0: never cut. scripts/measure_forced_run.py found 8, 16 and
# 32 within 1% of 0 on the skeleton set's READMEs (docs/engine.md): off
FORCED_RUN = 0
