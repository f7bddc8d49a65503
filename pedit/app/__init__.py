"""What the shells share: jobs and chunks, a refactor's run, the session, calibration, file I/O, config,
templates. The tools (pedit/tools) propose, the checks (pedit/checks) decide; this orchestrates."""
