"""The replay engine: jump and step through a recorded run."""
