"""What the shells share: jobs and chunks, the session, calibration, file I/O, config, templates."""
