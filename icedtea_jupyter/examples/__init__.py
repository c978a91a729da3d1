"""Example pipelines used by the notebooks and the tests."""
