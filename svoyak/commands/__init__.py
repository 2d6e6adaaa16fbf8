"""One module per ``svoyak`` subcommand: ``add_arguments(parser)`` and ``run(args) -> int``."""
