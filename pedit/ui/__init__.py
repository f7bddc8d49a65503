"""Rendering for terminals: the provenance styles, the live view, diffs and figures."""
