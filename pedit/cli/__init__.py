"""The `pedit` command (Typer)."""
