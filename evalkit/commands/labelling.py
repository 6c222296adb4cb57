"""``evalkit label`` and ``evalkit adjudicate``: JupyterLab on the workspace's own copy of a
labelling notebook.

Opening the shipped ``notebooks/label.ipynb`` itself lets JupyterLab autosave the
app's outputs into a file the package tracks. Instead, each command copies the
shipped notebook (:func:`evalkit.notebook.template_path`) into the workspace, the
folder holding ``ranges/`` and ``runs/`` (:func:`evalkit.runplan.find_workspace`),
as ``<workspace>/labelling/<notebook>``, and starts JupyterLab on that copy with the
workspace as its root. The kernel starts beside the copy and finds the workspace
the notebook's way (``$EVALKIT_WORKSPACE``, which the command sets, else walking
up). The copy is the user's: an existing one is reused as it is, never replaced
unless ``--fresh`` asks for it, and the folder holds a ``.gitignore`` so that no git
repository the workspace sits in sees it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COPY_DIRNAME = "labelling"
# What the command writes beside the copies, so git never lists them (nor JupyterLab's
# .ipynb_checkpoints), in this repository or any other the workspace sits in.
GITIGNORE = "# evalkit label/adjudicate: the workspace's own copies of the notebooks.\n*\n"
LSP_SHADOW_ENV = "JP_LSP_VIRTUAL_DIR"  # jupyter-lsp's folder of shadow copies, root-relative

APPS: dict[str, tuple[str, str, str]] = {
    # command: (shipped notebook, help, description)
    "label": (
        "label.ipynb",
        "label a (run, range) pair in JupyterLab, on the workspace's copy of the notebook",
        "Copy notebooks/label.ipynb into <workspace>/labelling/ (once; an existing copy is"
        " reused) and start JupyterLab on that copy, with the workspace as its root: the"
        " package's own notebook is never opened, so labelling never modifies it.",
    ),
    "adjudicate": (
        "adjudicate.ipynb",
        "settle the disagreements of labels or judges in JupyterLab, on the workspace's copy",
        "Copy notebooks/adjudicate.ipynb into <workspace>/labelling/ (once; an existing copy"
        " is reused) and start JupyterLab on that copy, with the workspace as its root: the"
        " package's own notebook is never opened, so adjudicating never modifies it.",
    ),
}


def register(commands: Any) -> None:
    for name, (notebook, help_text, description) in APPS.items():
        parser = commands.add_parser(name, help=help_text, description=description)
        parser.add_argument(
            "--workspace",
            type=Path,
            metavar="DIR",
            help="the folder holding ranges/ and runs/ (default: $EVALKIT_WORKSPACE, else the"
            " nearest such folder at or above the working directory)",
        )
        parser.add_argument(
            "--fresh",
            action="store_true",
            help=f"replace the workspace's copy with the shipped {notebook}"
            " (whatever was saved in the copy is lost; drafts and labels are not)",
        )
        parser.add_argument(
            "--no-browser", action="store_true", help="start JupyterLab without opening a browser"
        )
        parser.add_argument(
            "--print-only",
            action="store_true",
            help="make the copy, print the JupyterLab command and stop, without starting it",
        )
        parser.add_argument(
            "jupyter_args",
            nargs="*",
            metavar="JUPYTER_ARG",
            help="more JupyterLab options, after --: evalkit label -- --port 8899",
        )
        parser.set_defaults(handler=cmd_labelling_notebook, labelling_notebook=notebook)


@dataclass(frozen=True)
class WorkspaceCopy:
    path: Path
    message: str  # what was done, in one line


def workspace_of(given: Path | None) -> Path:
    """The workspace: ``given``, else :func:`find_workspace`; it must hold ranges/ and runs/."""
    from ..bounded import check_path
    from ..errors import EvalkitError
    from ..workspace import find_workspace

    if given is not None:
        check_path(given, "workspace")
    root = given.resolve() if given is not None else find_workspace()
    if given is not None and not root.is_dir():
        raise EvalkitError("the workspace is not a folder", path=given)
    missing = [f"{name}/" for name in ("ranges", "runs") if not (root / name).is_dir()]
    if missing:
        how = "give --workspace DIR" if given is None else "give another --workspace"
        raise EvalkitError(
            f"{root} is not a workspace: it has no {' or '.join(missing)} (run this from the"
            f" folder holding ranges/ and runs/, {how}, or set EVALKIT_WORKSPACE)"
        )
    return root


def _code_cells(text: str) -> list[str]:
    """The code cells' sources of a notebook's JSON (read within the bounds every JSON
    input is read with); ValueError when it is not one."""
    from ..bounded import parse_json
    from ..errors import EvalkitError

    try:
        data = parse_json(text, what="notebook")
    except EvalkitError as exc:
        raise ValueError(exc.message) from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ValueError("no cells")
    return [
        "".join(cell.get("source", ""))
        for cell in cells
        if isinstance(cell, dict) and cell.get("cell_type") == "code"
    ]


def workspace_copy(workspace: Path, notebook: str, *, fresh: bool = False) -> WorkspaceCopy:
    """The workspace's copy of the shipped ``notebook``: made when absent (or ``fresh``),
    else reused as it is (see the module docstring)."""
    from ..errors import EvalkitError
    from ..fileio import write_text_atomic
    from ..notebook import template_path

    shipped = template_path(notebook).read_text(encoding="utf-8")
    folder = workspace / COPY_DIRNAME
    copy = folder / notebook
    shown = f"{COPY_DIRNAME}/{notebook}"
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise EvalkitError("refusing to use it: it is a symlink or not a folder", path=folder)
    if copy.is_symlink() or (copy.exists() and not copy.is_file()):
        raise EvalkitError("refusing to use it: it is a symlink or not a file", path=copy)
    if copy.is_file() and not fresh:
        try:
            mine = _code_cells(copy.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise EvalkitError(
                f"not a notebook ({exc}); --fresh replaces it with the shipped {notebook}",
                path=copy,
            ) from exc
        if mine != _code_cells(shipped):
            return WorkspaceCopy(
                copy,
                f"reusing {shown}: its code differs from the shipped notebook's (edited, or"
                " from an earlier evalkit); --fresh replaces it with the shipped one",
            )
        return WorkspaceCopy(copy, f"reusing {shown}")
    what = "replaced" if copy.exists() else "copied"
    write_text_atomic(copy, shipped, root=workspace)
    if not (folder / ".gitignore").exists():
        write_text_atomic(folder / ".gitignore", GITIGNORE, root=workspace)
    return WorkspaceCopy(
        copy, f"{shown}: {what} from the shipped notebook (git ignores the labelling/ folder)"
    )


def jupyter_command(
    copy: Path, workspace: Path, *, no_browser: bool, extra: list[str]
) -> list[str]:
    """JupyterLab of this Python, rooted at the workspace, opening ``copy``."""
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={workspace}"]
    if no_browser:
        command.append("--no-browser")
    return [*command, *extra, str(copy)]


def jupyter_environment(workspace: Path) -> dict[str, str]:
    """The variables JupyterLab is started with: the workspace, for the kernel; and, unless
    set already, where JupyterLab's language-server support keeps its shadow copies of
    open files (by default ``.virtual_documents`` at the root, the workspace, which may be
    this repository): beside the notebook copies, which git ignores."""
    from ..workspace import WORKSPACE_ENV

    variables = {WORKSPACE_ENV: str(workspace)}
    if not os.environ.get(LSP_SHADOW_ENV):
        variables[LSP_SHADOW_ENV] = f"{COPY_DIRNAME}/.virtual_documents"
    return variables


def cmd_labelling_notebook(args: argparse.Namespace) -> int:
    workspace = workspace_of(args.workspace)
    made = workspace_copy(workspace, args.labelling_notebook, fresh=args.fresh)
    command = jupyter_command(
        made.path, workspace, no_browser=args.no_browser, extra=list(args.jupyter_args)
    )
    variables = jupyter_environment(workspace)
    print(made.message)
    if args.print_only:
        print(shlex.join([*(f"{name}={value}" for name, value in variables.items()), *command]))
        return 0
    print(f"starting JupyterLab on {made.path}, rooted at {workspace} (Ctrl-C stops it)")
    sys.stdout.flush()
    sys.stderr.flush()
    # The server replaces this process, so Ctrl-C reaches it as if typed `jupyter lab`.
    os.execve(command[0], command, {**os.environ, **variables})
