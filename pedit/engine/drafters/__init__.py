"""Drafters: where draft tokens come from (the file, prompt lookup, adaptive n-grams)."""
