"""HTTP endpoints: one module per endpoint family; each parses, calls the domain, renders."""
