"""The one exception the engine raises for a refused command."""

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
