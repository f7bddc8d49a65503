"""The proposers: deterministic tools that propose a draft (or the candidates the model
scores) for the model to verify. They import the engine, never a shell."""
