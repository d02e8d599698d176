"""Helper servers the scenarios start (mock bidders)."""
