"""Measurements about evalkit itself (not part of the scoring flow)."""
