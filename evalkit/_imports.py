"""Import-time choices made before anything else of evalkit loads.

jsonschema loads ``rfc3987_syntax`` for its "iri" format checker, which builds a
grammar at import: about 1 s, paid by every notebook kernel and CLI process.
evalkit's schemas use no IRI format, so the optional module is marked absent
(jsonschema then skips that one checker) unless something imported it already.
"""

from __future__ import annotations

import sys

sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
