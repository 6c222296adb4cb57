"""evalkit: score a security detection agent's reports against a range checklist."""

from ._version import __version__

__all__ = ["__version__"]
