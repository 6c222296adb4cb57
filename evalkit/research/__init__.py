"""Research tools around the judge: how far it is from careful humans, and what changed.

* :mod:`evalkit.research.stats`: agreement statistics for binary labels, with
  bootstrap intervals (pure: numbers in, numbers out).
* :mod:`evalkit.research.resample`: bootstrap resamples of whole checkpoints, or
  pairs then checkpoints (the items compared are clustered).
* :mod:`evalkit.research.paired`: paired statistics of two raters on the same
  items (paired bootstrap differences, McNemar's exact test).
* :mod:`evalkit.research.calibration`: a judge's evaluations against the gold
  labels (``evalkit calibrate``), in steps: :mod:`~evalkit.research.pairs`
  (which pairs), :mod:`~evalkit.research.cases` (read, check and judge them),
  :mod:`~evalkit.research.items` (labels and evaluations as per-target items),
  :mod:`~evalkit.research.agreement` (agreement per target and scope, the human
  band) and :mod:`~evalkit.research.calibration_report` (its outputs).
* :mod:`evalkit.research.compare`: evaluation folders side by side
  (``evalkit compare``).
* (:mod:`evalkit.stability`, in the core: how often a judge's repeated verdicts agree)
  (``--repeats K``).
* :mod:`evalkit.research.robustness`: inflation of a judge's scores under the
  adversarial corpus (``evalkit robustness``).
"""
