"""docker-compose.yml names services that exist, commands that point at real modules, ports that agree."""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path

import yaml

from servicekit import provision
from servicekit import settings as kit
from servicekit.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
#: What compose runs besides the platform's services.
INFRASTRUCTURE = {"bus-secrets", "nats", "postgres", "prometheus", "grafana"}
#: The services that use the bus (the gateway does not).
BUS_SERVICES = {"table", "auction", "trade", "casino", "rating", "matchmaking"}


#: A key for reading settings: compose's TOKEN_SECRET is a required variable, not a value.
KEY = {"TOKEN_SECRET": "compose-test-" + "k" * 32, "TOKEN_SECRETS": ""}


def _settings(service: str, env: dict[str, str]) -> Settings:
    """The common settings a service reads from `env` (its own `services/<name>/settings.py`), but the
    files of mounted secrets, which exist in the containers only."""
    env = {k: v for k, v in env.items() if not k.endswith("_FILE")}
    env = {**env, **KEY}
    return importlib.import_module(f"services.{service}.settings").common(env)  # type: ignore[no-any-return]


def _compose() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # type: ignore[no-any-return]


def _ports() -> dict:  # type: ignore[type-arg]
    """The developers' override (docker-compose.ports.yml): the ports compose itself does not publish."""
    return yaml.safe_load((ROOT / "docker-compose.ports.yml").read_text())["services"]  # type: ignore[no-any-return]


def test_every_platform_service_in_compose_exists_in_the_repo() -> None:
    services = _compose()["services"]
    assert {"nats", "postgres"} <= services.keys()
    platform = {name for name in services if name not in INFRASTRUCTURE}
    assert platform, "no platform service in docker-compose.yml"
    for name in platform:
        folder = ROOT / "services" / name
        # A stateless service (the gateway) has no store and no migrations, and its package says so.
        stateless = "stateless" in (folder / "__init__.py").read_text() and not (folder / "store.py").exists()
        parts = ("main.py", "api.py", "handlers.py") + (() if stateless else ("store.py", "migrations"))
        for part in parts:
            assert (folder / part).exists(), f"services/{name}/{part} is missing"
        assert not stateless or not (folder / "migrations").exists()
        assert services[name]["build"] == "."


def test_commands_point_at_real_modules() -> None:
    for name, spec in _compose()["services"].items():
        if "build" not in spec:
            continue
        command = spec["command"]
        assert command[:2] == ["python", "-m"]
        module = command[2]
        assert importlib.util.find_spec(module) is not None, f"{name}: no module {module}"


def test_ports_and_urls_agree_with_the_settings() -> None:
    services = _compose()["services"]
    table = services["table"]
    settings = _settings("table", {k: str(v) for k, v in table["environment"].items()})
    ports = _ports()
    assert f"127.0.0.1:{settings.grpc_port}:{settings.grpc_port}" in ports["table"]["ports"]
    assert f"127.0.0.1:{settings.metrics_port}:{settings.metrics_port}" in ports["table"]["ports"]
    assert settings.nats_url == "tls://nats:4222"
    assert "@postgres:5432/" in settings.database_url
    assert "127.0.0.1:4222:4222" in ports["nats"]["ports"] and "-c" in services["nats"]["command"]
    assert _settings("table", {}).grpc_port == settings.grpc_port  # the defaults match compose


def test_every_service_in_the_repo_is_in_compose_with_its_ports() -> None:
    services = _compose()["services"]
    in_repo = {p.parent.name for p in (ROOT / "services").glob("*/main.py")}
    assert in_repo == set(services) - INFRASTRUCTURE
    for name in in_repo:
        spec = services[name]
        env = {k: str(v) for k, v in spec["environment"].items()}
        settings = _settings(name, env)
        defaults = _settings(name, {})
        assert (settings.grpc_port, settings.metrics_port) == (defaults.grpc_port, defaults.metrics_port), name
        published = _ports()[name]["ports"]
        assert f"127.0.0.1:{settings.grpc_port}:{settings.grpc_port}" in published, name
        assert f"127.0.0.1:{settings.metrics_port}:{settings.metrics_port}" in published, name
        assert kit.table_target(env) == "table:50051"
        # one key for all, and none by default: compose refuses to start without TOKEN_SECRET
        assert env["TOKEN_SECRET"] == services["table"]["environment"]["TOKEN_SECRET"]
        assert env["TOKEN_SECRET"].startswith("${TOKEN_SECRET:?"), env["TOKEN_SECRET"]


def test_prometheus_and_grafana_get_the_deploy_config_and_dashboards() -> None:
    services = _compose()["services"]
    mounts = {
        name: {v.split(":")[0]: v.split(":")[1] for v in services[name]["volumes"]}
        for name in ("prometheus", "grafana")
    }
    assert mounts["prometheus"]["./deploy/prometheus/prometheus.yml"] == "/etc/prometheus/prometheus.yml"
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    (rules,) = config["rule_files"]
    assert rules.startswith(mounts["prometheus"]["./deploy/prometheus/rules"] + "/")
    assert mounts["grafana"]["./deploy/grafana/provisioning"] == "/etc/grafana/provisioning"
    provider = yaml.safe_load(
        (ROOT / "deploy" / "grafana" / "provisioning" / "dashboards" / "monopoly.yml").read_text()
    )
    assert provider["providers"][0]["options"]["path"] == mounts["grafana"]["./deploy/grafana/dashboards"]
    sources = yaml.safe_load(
        (ROOT / "deploy" / "grafana" / "provisioning" / "datasources" / "monopoly.yml").read_text()
    )
    urls = {d["uid"]: d["url"] for d in sources["datasources"]}
    assert urls["prometheus"] == f"http://prometheus:{services['prometheus']['ports'][0].split(':')[1]}"
    assert urls["postgres"] == "postgres:5432"
    home = services["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert (ROOT / "deploy" / "grafana" / "dashboards" / Path(home).name).exists()
    # every service's metrics port, as compose publishes it, is a target
    targets = {j["job_name"]: j["static_configs"][0]["targets"][0] for j in config["scrape_configs"]}
    for name in set(services) - INFRASTRUCTURE:
        metrics_port = services[name]["environment"][f"{name.upper()}_METRICS_PORT"]
        assert targets[name] == f"{name}:{metrics_port}", name


def test_no_database_bus_or_grpc_port_is_published_and_what_is_listens_on_loopback() -> None:
    services = _compose()["services"]
    for name, spec in services.items():
        for port in spec.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)
    assert not {"nats", "postgres"} & {n for n, s in services.items() if s.get("ports")}
    published = {n for n, s in services.items() if s.get("ports")}
    assert published == {"gateway", "prometheus", "grafana"}, published
    assert services["gateway"]["ports"] == ["127.0.0.1:8080:8080"]  # the lobby, not its gRPC
    for name, spec in _ports().items():  # the override publishes on loopback only, too
        assert all(p.startswith("127.0.0.1:") for p in spec["ports"]), name


def test_each_bus_service_logs_in_as_its_own_user_with_its_own_password_only() -> None:
    services = _compose()["services"]
    assert services["bus-secrets"]["command"] == ["python", "-m", "servicekit.provision", "/secrets"]
    assert services["nats"]["depends_on"]["bus-secrets"]["condition"] == "service_completed_successfully"
    nats_mount = next(v for v in services["nats"]["volumes"] if isinstance(v, dict))
    assert nats_mount["volume"]["subpath"] == "nats" and nats_mount["target"] == provision.NATS_DIR
    assert services["nats"]["command"][:2] == ["-c", f"{provision.NATS_DIR}/nats.conf"]
    for name in BUS_SERVICES:
        env = {k: str(v) for k, v in services[name]["environment"].items()}
        settings = _settings(name, env)
        assert settings.nats_user == name  # NATS_USER: the service's name
        (mount,) = services[name]["volumes"]
        assert mount["source"] == "bus-secrets" and mount["read_only"] and mount["volume"]["subpath"] == name
        assert env["NATS_PASSWORD_FILE"] == f"{mount['target']}/password"
    assert "NATS_PASSWORD_FILE" not in services["gateway"]["environment"]


def test_every_service_serves_and_calls_with_mtls_on_its_own_certificate() -> None:
    services = _compose()["services"]
    for name in BUS_SERVICES | {"gateway"}:
        assert name in provision.PRINCIPALS
        env = {k: str(v) for k, v in services[name]["environment"].items()}
        (mount,) = services[name]["volumes"]
        assert mount["volume"]["subpath"] == name
        tls = _settings(name, env).tls
        assert tls.server and tls.client and tls.require_client_cert, name
        assert (tls.cert, tls.key, tls.ca) == tuple(f"{mount['target']}/{f}" for f in ("cert.pem", "key.pem", "ca.pem"))
        assert _settings(name, env).nats_url.startswith("tls://")


def test_the_provisioned_folder_gives_each_container_its_own_secrets_only(tmp_path: Path) -> None:
    provision.write(tmp_path)
    passwords = json.loads((tmp_path / "users.json").read_text())
    for name in BUS_SERVICES:
        assert (tmp_path / name / "password").read_text() == passwords[name]
        assert {p.name for p in (tmp_path / name).iterdir()} == {"password", "cert.pem", "key.pem", "ca.pem"}
    assert not (tmp_path / "gateway" / "password").exists()  # the gateway is not on the bus
    config = json.loads((tmp_path / "nats" / "nats.conf").read_text())
    assert config["tls"]["verify"] is True and config["tls"]["cert_file"].startswith(provision.NATS_DIR)
    assert {u["user"] for u in config["authorization"]["users"]} == set(passwords)
    assert not any(p.name == "ca-key.pem" for p in (tmp_path / "nats").iterdir())  # the CA's key stays in ca/
    provision.write(tmp_path)  # again: the same passwords and CA
    assert json.loads((tmp_path / "users.json").read_text()) == passwords


def test_every_long_running_container_is_started_again_when_it_dies() -> None:
    """A crash, an OOM kill: compose starts it again (bus-secrets is a one-shot job and must not be)."""
    services = _compose()["services"]
    for name, service in services.items():
        expected = None if name == "bus-secrets" else "unless-stopped"
        assert service.get("restart") == expected, name
