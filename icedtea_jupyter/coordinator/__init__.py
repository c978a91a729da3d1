"""The driver-side end of the control channel: server, coordinator, agents' coordinator sides."""
