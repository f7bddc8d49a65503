"""The engine's choices by name, importable without the engine (no numpy): the drafters,
the speculation modes and the widest draft the shells offer and the config file checks."""

DRAFTERS = ("predicted", "lookup", "ngram")  # in the order a composite consults them
SPECULATE = ("auto", "fixed", "off")

# Most draft tokens verified in one pass (--draft-max's default): a pass of 256, the widest
# the cost model measures; the planner only goes that wide when the draft has held for long.
DRAFT_MAX = 255
