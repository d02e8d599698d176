"""Cross-cutting HTTP: CORS, request bodies, plain-text errors, the one middleware."""
