"""Labelling and adjudication of gold labels, for the JupyterLab notebooks and for Python.

The logic is here, as pure functions over plain dataclasses; the notebooks
(``notebooks/label.ipynb``, ``notebooks/adjudicate.ipynb``) only display it
through the thin ipywidgets layer in :mod:`evalkit.labelling.widgets`.

* :mod:`.drafts`: a label being written (unset sub-scores, seen checkpoints,
  where the labeller is), changed one step at a time;
* :mod:`.store`: drafts beside the label, saved atomically on every change,
  resumed where the labeller stopped, finalised only when
  :func:`evalkit.gold_labels.check_labels` finds no problem;
* :mod:`.quotes`: a penalty's quote checked at once, with grounding's tolerance;
* :mod:`.readings`: a side (a label, or a judge's recorded verdicts) per checkpoint,
  for pre-filling and for adjudication;
* :mod:`.disagreements` and :mod:`.adjudication`: what sides read differently, and
  the adjudicated label that resolves it;
* :mod:`.render`: the documents, Facts and criteria as HTML a reader would see.

From Python::

    from evalkit.labelling import adjudication, readings, store
    rng, submission = evalkit.load_range("ranges", "ssh-miner"), ...
    sides = [readings.label_side(labels, Sources.of(submission)) for labels in ...]
    draft, disagreements = adjudication.start_adjudication(rng, "demo", sides, created=...)
    draft = adjudication.take_side(draft, disagreements[0].chk_id, disagreements[0].readings[0])
    store.finalise("runs", adjudication.settle(draft, rng, sides), rng, submission)
"""

from __future__ import annotations

from . import adjudication, disagreements, drafts, quotes, readings, render, store

__all__ = ["adjudication", "disagreements", "drafts", "quotes", "readings", "render", "store"]
