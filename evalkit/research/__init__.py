"""Research tools: statistics over judge verdicts (stability, calibration, comparison)."""
