"""HTTP routes: thin handlers that parse the request, call a service and render."""
