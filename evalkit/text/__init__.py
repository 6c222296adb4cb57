"""Reading text as a keyword judge must: scope (what a passage says about itself)."""
