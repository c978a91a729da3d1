"""Runs as the user sees them: the Run API, the registry of runs, DAG and metrics."""
