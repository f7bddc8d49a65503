"""The git pre-commit hook: rules (rules.py), git plumbing (git.py), the run (run.py),
the result cache (cache.py), native install (install.py). Shell: pedit/cli/hook.py."""
