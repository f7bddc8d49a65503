"""What belongs to this machine, beside the model cache (pedit/models): its CPUs, and the
caches made on it (the cost model's prices and passes, the prompt's saved start)."""
