"""Views in the notebook: the live run panel."""
