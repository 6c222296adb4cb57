"""Reading plain text the way a careful reader does, for any judge: :mod:`.negation`."""
