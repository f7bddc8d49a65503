"""The checks: what decides whether an answer is written (the guard, the intent's check
and its early verdict). They import the tools and the engine, never a shell."""
