"""The interactive session (Textual): `pedit FILE` / `pedit tui FILE`. See app.py."""
