"""The `monopoly` command, the top layer: it may import every other package, none imports it.

Layers, top to bottom (import-linter checks them in `make lint`, see pyproject.toml):
monopoly_cli > client > services > servicekit | sim > bots > engine. One module per command group
(`simulate`, `play`, `platform` for run/demo, `casino`, `verify`); a new group is a module with `add(subcommands)`
listed in `main.COMMANDS`.
"""
