"""The HTTP edge: who is asking (cookies, bearer tokens, CSRF), templates, security headers,
static files and the rendering of errors. Services never import from here."""
