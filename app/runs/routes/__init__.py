"""HTTP routes of this feature: thin handlers that parse, call a service and render."""
