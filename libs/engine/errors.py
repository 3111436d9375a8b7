"""The exceptions the engine raises for a refused command, and for a table setting out of bounds."""

from __future__ import annotations


class RuleViolation(Exception):
    """A command the rules do not allow; the state is left untouched.

    ``rule`` is the rule ID from RULES.md (``"P6"``, ``"T5"``...) so that
    clients, logs and the gRPC layer can point at the exact rule.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule
        self.message = message


class SettingRefused(ValueError):
    """A table setting out of its rule's bounds (X5, H5): a ValueError that names the rule, so a
    service refusing the table can point at it as it does at a refused command."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule
