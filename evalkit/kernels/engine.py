"""papermill's nbclient engine, saving the notebook when it starts and ends, not at every cell.

papermill writes the whole output notebook before and after each cell, so that a reader can
follow a long run on disk; for a record that takes a second, that is some forty writes of a
notebook holding three images, more work than a cell. :class:`RecordEngine` is papermill's
``nbclient`` engine with one difference: the notebook is written when execution starts and
when it ends, whatever ended it (a failing cell, a timeout, a dead kernel), so a failed record
is kept as today. The executed notebook is the same: papermill still sets every cell's
metadata as it goes.
"""

from __future__ import annotations

from typing import Any

from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

ENGINE_NAME = "evalkit-record"


class _SavingAtEnds(NotebookExecutionManager):  # type: ignore[misc]
    """papermill's execution manager, without the saves around each cell."""

    def cell_start(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> None:
        self._without_saving(super().cell_start, cell, cell_index, **kwargs)

    def cell_complete(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> None:
        self._without_saving(super().cell_complete, cell, cell_index, **kwargs)

    def _without_saving(self, step: Any, *args: Any, **kwargs: Any) -> None:
        output_path = getattr(self, "output_path", None)
        self.output_path = None
        try:
            step(*args, **kwargs)
        finally:
            self.output_path = output_path


class RecordEngine(NBClientEngine):  # type: ignore[misc]
    """papermill's ``nbclient`` engine with :class:`_SavingAtEnds` as its manager."""

    @classmethod
    def execute_notebook(
        cls,
        nb: Any,
        kernel_name: str,
        output_path: str | None = None,
        progress_bar: bool = True,
        log_output: bool = False,
        autosave_cell_every: int = 30,
        **kwargs: Any,
    ) -> Any:
        # papermill's Engine.execute_notebook, with the manager above.
        nb_man = _SavingAtEnds(
            nb,
            output_path=output_path,
            progress_bar=progress_bar,
            log_output=log_output,
            autosave_cell_every=autosave_cell_every,
        )
        nb_man.notebook_start()
        try:
            cls.execute_managed_notebook(nb_man, kernel_name, log_output=log_output, **kwargs)
        finally:
            nb_man.cleanup_pbar()
            nb_man.notebook_complete()
        return nb_man.nb


papermill_engines.register(ENGINE_NAME, RecordEngine)
