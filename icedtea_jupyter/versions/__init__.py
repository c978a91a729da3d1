"""Versions of a pipeline (Drove): fingerprints, results stored once, reuse, equivalence."""
