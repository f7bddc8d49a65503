"""The decoder: prompt, decode, speculative, verify, sampling, planner, costmodel, drafters.

stdlib + numpy only (tests/test_layout.py)."""
