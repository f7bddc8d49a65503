"""The engine's choices by name, importable without the engine (no numpy): the drafters
and the speculation modes the shells offer and the config file checks."""

DRAFTERS = ("predicted", "lookup", "ngram")  # in the order a composite consults them
SPECULATE = ("auto", "fixed", "off")
