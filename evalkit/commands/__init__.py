"""One module per subcommand beyond the core ones in :mod:`evalkit.cli`.

A module here defines ``register(commands)`` (``commands`` is argparse's
sub-parsers object): it adds its parser and sets ``handler`` to a function
``(args) -> int``. :func:`evalkit.cli.build_parser` finds the modules itself.
Heavy imports belong inside the handler, so ``evalkit --help`` stays fast.
"""
