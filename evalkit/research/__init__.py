"""Research tools around the judge: how far it is from careful humans, and what changed.

* :mod:`evalkit.research.stats`: agreement statistics for binary labels, with
  bootstrap intervals (pure: numbers in, numbers out).
* :mod:`evalkit.research.calibration`: a judge's evaluations against the gold
  labels (``evalkit calibrate``).
* :mod:`evalkit.research.compare`: evaluation folders side by side
  (``evalkit compare``).
* :mod:`evalkit.research.stability`: how often a judge's repeated verdicts agree
  (``--repeats K``).
* :mod:`evalkit.research.robustness`: inflation of a judge's scores under the
  adversarial corpus (``evalkit robustness``).
"""
