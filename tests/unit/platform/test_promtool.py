"""The Prometheus config and rules pass `promtool check`, and the alerts behave as
deploy/prometheus/tests/platform.yml says (`promtool test rules`). promtool comes with Debian's
`prometheus` package, which .ci/run installs; elsewhere these tests are skipped with that message."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PROMETHEUS = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is not installed (apt-get install prometheus; .ci/run does it)")
    return subprocess.run([tool, *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120)


def test_the_rules_are_valid() -> None:
    done = promtool("check", "rules", "rules/platform.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_scrape_config_is_valid() -> None:
    """Debian's build has no Kubernetes discovery, so kubernetes.yml is checked by test_observability.py."""
    done = promtool("check", "config", "--syntax-only", "prometheus.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_alerts_fire_on_what_they_should_and_only_then() -> None:
    done = promtool("test", "rules", "tests/platform.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    """promtool test rules really compares: the same test expecting a different annotation fails."""
    text = (PROMETHEUS / "tests" / "platform.yml").read_text().replace("waiting 2m 0s for", "waiting 9m 0s for")
    (tmp_path / "wrong.yml").write_text(
        text.replace("../rules/platform.yml", str(PROMETHEUS / "rules" / "platform.yml"))
    )
    done = promtool("test", "rules", str(tmp_path / "wrong.yml"))
    assert done.returncode != 0
