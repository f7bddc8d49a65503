"""pedit serve: the OpenAI-compatible server shell (docs/serve.md)."""
