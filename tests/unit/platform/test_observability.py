"""The Grafana dashboards and the Prometheus rules are well formed and ask only for metrics the services
export (their names collected from the services' own registries), and the scrape configs reach every
service's metrics port. The rules' behaviour is `promtool test rules` (tests/unit/platform/test_promtool.py)."""

from __future__ import annotations

import functools
import importlib
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.registry import CollectorRegistry

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
SERVICES = sorted(p.parent.name for p in (ROOT / "services").glob("*/main.py"))

#: What Prometheus itself provides: the scrape's `up` and the rules' `ALERTS`.
PROMETHEUS_SERIES = {"up", "ALERTS", "ALERTS_FOR_STATE"}
#: PromQL words that are not metric names.
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
    "inf", "nan", "le",
}  # fmt: skip


def _series_names(text: str) -> set[str]:
    """The series names an exposition (`generate_latest`) declares, with each type's suffixes."""
    names: set[str] = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        if kind == "counter":  # the TYPE line names it with or without `_total` (whether it has samples yet)
            base = name.removesuffix("_total")
            names |= {base + "_total", base + "_created"}
        elif kind == "histogram":
            names |= {name + s for s in ("_bucket", "_sum", "_count", "_created")}
        elif kind == "summary":
            names |= {name, name + "_sum", name + "_count", name + "_created"}
        else:
            names.add(name)
    return names


@functools.cache
def exported() -> frozenset[str]:
    """Every series name the services can export: their modules' metrics and the table's collector."""
    for name in SERVICES:
        importlib.import_module(f"services.{name}.main")
    from services.table.observe import TablesCollector

    registry = CollectorRegistry()
    registry.register(TablesCollector(SimpleNamespace(actors={})))
    return frozenset(
        _series_names(generate_latest(REGISTRY).decode()) | _series_names(generate_latest(registry).decode())
    )


def recorded() -> set[str]:
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "platform.yml").read_text())
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (labels, ranges, functions and keywords left out)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # strings
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for m in re.finditer(r"(?<![\w$.])([A-Za-z_:][\w:]*)(\s*\()?", expr):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in PROMQL_WORDS:
            continue
        names.add(word)
    return names


def test_the_expression_parser_finds_the_names() -> None:
    expr = 'histogram_quantile(0.99, sum by (le, job) (rate(table_commit_seconds_bucket{job=~"$job"}[5m]))) > 0.25'
    assert metric_names(expr) == {"table_commit_seconds_bucket"}
    assert metric_names("max(x_total) / on (job) group_left y and z offset 5m") == {"x_total", "y", "z"}


def test_the_services_export_what_an_operator_needs() -> None:
    """The list of the issue, as it exists today (lease metrics come with scale-out)."""
    needed = {
        "table_tables", "table_commands_total", "table_command_seconds_bucket", "table_commit_seconds_bucket",
        "table_deadline_overdue_seconds", "outbox_pending_messages", "outbox_oldest_pending_age_seconds",
        "consumer_pending_messages", "consumer_ack_pending_messages", "consumer_messages_total",
        "auction_settlements_total", "casino_bets_total", "trade_proposals_total", "casino_jackpot_pool_dollars",
        "matchmaking_waiting_tickets", "matchmaking_wait_seconds_bucket", "matchmaking_oldest_wait_seconds",
        "rating_games_total", "grpc_server_handled_total", "grpc_server_handling_seconds_bucket",
    }  # fmt: skip
    assert needed <= exported(), needed - exported()


def test_metric_names_follow_the_prometheus_conventions() -> None:
    text = generate_latest(REGISTRY).decode()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        if kind == "gauge":
            assert not name.endswith("_total"), f"{name}: a gauge named like a counter"
        if kind == "histogram":  # durations in seconds; a count names what it counts
            assert name.endswith(("_seconds", "_commits")), f"{name}: a histogram says its unit"


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in dashboard["panels"] if p["type"] != "row"]


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_dashboard_is_well_formed(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    assert dashboard["uid"].startswith("monopoly-") and dashboard["title"] and dashboard["schemaVersion"] >= 36
    sources = yaml.safe_load((DEPLOY / "grafana" / "provisioning" / "datasources" / "monopoly.yml").read_text())
    uids = {d["uid"]: d["type"] for d in sources["datasources"]}
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    for panel in _panels(dashboard):
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0, panel["title"]
        assert uids.get(panel["datasource"]["uid"]) == panel["datasource"]["type"], panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target.get("expr") or target.get("rawSql"), panel["title"]


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.stem)
def test_every_panel_asks_for_metrics_the_services_export(path: Path) -> None:
    known = exported() | recorded() | PROMETHEUS_SERIES
    dashboard = json.loads(path.read_text())
    for panel in _panels(dashboard):
        for target in panel["targets"]:
            if "expr" in target:
                unknown = metric_names(target["expr"]) - known
                assert not unknown, f"{path.name}: {panel['title']!r} reads {unknown}, which nothing exports"


def test_every_rule_reads_metrics_the_services_export() -> None:
    known = exported() | recorded() | PROMETHEUS_SERIES
    rules = yaml.safe_load((DEPLOY / "prometheus" / "rules" / "platform.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            unknown = metric_names(rule["expr"]) - known
            assert not unknown, f"{rule.get('alert') or rule.get('record')} reads {unknown}, which nothing exports"


def test_the_scrape_configs_reach_every_service() -> None:
    compose = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in compose["scrape_configs"]}
    for name in SERVICES:
        (static,) = jobs[name]["static_configs"]
        key = {"TOKEN_SECRET": "3f9a1c7e5b2d40868e1f6a2c9d3b7e05"}  # settings need a key; the ports are the defaults
        defaults = importlib.import_module(f"services.{name}.settings").common(key)
        assert static["targets"] == [f"{name}:{defaults.metrics_port}"]
    kube = yaml.safe_load((DEPLOY / "prometheus" / "kubernetes.yml").read_text())
    (platform,) = (j for j in kube["scrape_configs"] if j["job_name"] == "monopoly")
    keep = {tuple(r["source_labels"]): r.get("regex") for r in platform["relabel_configs"] if r.get("action") == "keep"}
    assert keep[("__meta_kubernetes_pod_container_port_name",)] == "metrics"  # the Deployments' port name
    assert any(r.get("target_label") == "job" for r in platform["relabel_configs"])


def test_every_metric_is_documented() -> None:
    """docs/METRICS.md lists every metric the services define, with its meaning."""
    exported()  # every service's modules imported
    doc = (ROOT / "docs" / "METRICS.md").read_text()
    text = generate_latest(REGISTRY).decode()
    missing = []
    for name, _kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        if name.startswith(("process_", "python_")) or name.endswith("_created"):
            continue
        counter = name if name.endswith("_total") else name + "_total"
        if f"`{name}`" not in doc and f"`{counter}`" not in doc:
            missing.append(name)
    for name in ("table_tables", "table_deadline_overdue_seconds"):  # the table's collector
        if f"`{name}`" not in doc:
            missing.append(name)
    assert not missing, f"not in docs/METRICS.md: {missing}"
