"""The ``icedtea`` comm between the kernel and JupyterLab: requests, replies, events."""
