"""A debugging session exported as a notebook that re-executes (export_notebook)."""
