"""`pedit bench`: pedit against plain decoding and the peers, interleaved in one process.

corpus.py   the edit tasks shipped in corpus/ (tasks.toml, the files, SOURCES.md)
peers.py    the peers on the same model and prompt: llama-cpp-python's
            LlamaPromptLookupDecoding, transformers' generate(prompt_lookup_num_tokens)
run.py      configurations x tasks x repeats, interleaved (A B A B); one Run per try
report.py   ratios against the plain baseline of the same run; table, JSON, Markdown, chart
"""
