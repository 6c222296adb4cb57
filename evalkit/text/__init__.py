"""Reading text as a careful reader does: what a sentence negates, supposes or advises
against (:mod:`.negation`), and what a passage says about itself (:mod:`.scope`)."""
