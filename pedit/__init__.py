"""pedit: rewrite a file from an instruction with a local model, the file itself as the draft."""

__version__ = "0.1.0"
