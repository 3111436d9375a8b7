"""Simulation: bots play whole games through the engine; the `monopoly` command."""
