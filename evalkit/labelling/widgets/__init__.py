"""The thin ipywidgets layer of the labelling and adjudication notebooks.

ipywidgets is the Jupyter project's own widget library, well kept, and runs in
JupyterLab with no extension to build (its JupyterLab extension ships prebuilt
in the ``jupyterlab_widgets`` package). Every widget here only displays and
forwards to :mod:`evalkit.labelling`; tests drive the apps in Python.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AdjudicationApp", "LabellingApp", "show"]


def __getattr__(name: str) -> Any:
    if name == "LabellingApp":
        from .label_app import LabellingApp

        return LabellingApp
    if name == "AdjudicationApp":
        from .adjudicate_app import AdjudicationApp

        return AdjudicationApp
    raise AttributeError(name)


def show(app: Any) -> None:
    """Display ``app`` in the notebook, with the small script keys, selection and scrolling
    need (:mod:`.browser`)."""
    from IPython.display import Javascript, display

    from .browser import SCRIPT

    display(Javascript(SCRIPT))  # type: ignore[no-untyped-call]
    display(app.widget)  # type: ignore[no-untyped-call]
