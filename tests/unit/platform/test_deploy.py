"""deploy/kubernetes renders (kubectl's kustomize), validates against the Kubernetes schemas
(kubernetes-validate, offline), and agrees with servicekit.settings, docker-compose.yml and the code."""

from __future__ import annotations

import functools
import importlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from servicekit import grpcserver, natsauth
from servicekit import settings as kit
from servicekit.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
KUBE = ROOT / "deploy" / "kubernetes"
OVERLAYS = ("dev", "prod")
#: The oldest Kubernetes the manifests are written for (gRPC probes are GA since 1.27).
KUBERNETES_VERSION = "1.30.0"
SERVICES = sorted(p.parent.name for p in (ROOT / "services").glob("*/main.py"))

Doc = dict[str, Any]


#: A key for reading settings: the manifests take TOKEN_SECRET from a Secret, never a value.
KEY = {"TOKEN_SECRET": "deploy-test-" + "k" * 32, "TOKEN_SECRETS": ""}


def service_settings(service: str, env: dict[str, str]) -> Settings:
    """The common settings `service` reads from `env` (its own `services/<name>/settings.py`), but the
    files of mounted secrets (compose's), which exist in the containers only."""
    env = {k: v for k, v in env.items() if not k.endswith("_FILE")}
    env = {**env, **KEY}
    return importlib.import_module(f"services.{service}.settings").common(env)  # type: ignore[no-any-return]


@functools.cache
def render(overlay: str) -> tuple[Doc, ...]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl (its built-in kustomize renders deploy/kubernetes) is not installed")
    out = subprocess.run(
        [kubectl, "kustomize", str(KUBE / "overlays" / overlay)], check=True, capture_output=True, text=True
    ).stdout
    return tuple(d for d in yaml.safe_load_all(out) if d)


def of_kind(docs: tuple[Doc, ...], kind: str) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def workloads(docs: tuple[Doc, ...]) -> dict[str, Doc]:
    """Each service's pods: a Deployment, or the table service's StatefulSet (stable names for redirects)."""
    return {**of_kind(docs, "Deployment"), **of_kind(docs, "StatefulSet")}


def container_env(deployment: Doc, docs: tuple[Doc, ...]) -> dict[str, str]:
    """The environment a service's container sees: the ConfigMap's keys and its own values."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(of_kind(docs, "ConfigMap")[source["configMapRef"]["name"]]["data"])
    for var in container.get("env", []):
        env[var["name"]] = var["value"] if "value" in var else "<from " + next(iter(var["valueFrom"])) + ">"
    return env


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_rendered_resource_is_valid_kubernetes(overlay: str) -> None:
    docs = render(overlay)
    checked = 0
    for doc in docs:
        if doc["apiVersion"].startswith(("postgresql.cnpg.io/", "cert-manager.io/")):
            continue  # operators' kinds: test_postgres_cluster_... and test_every_service_has_its_certificate_...
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        checked += 1
    assert checked >= len(SERVICES) * 3


def test_the_validator_refuses_a_wrong_field() -> None:
    """The check above can fail: a misspelt probe field is refused."""
    deployment = dict(workloads(render("dev"))["table"])
    broken = yaml.safe_load(yaml.safe_dump(deployment).replace("readinessProbe", "readinesProbe"))
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_has_its_deployment_service_and_budget(overlay: str) -> None:
    docs = render(overlay)
    assert sorted(workloads(docs)) == SERVICES
    assert sorted(of_kind(docs, "PodDisruptionBudget")) == SERVICES
    assert sorted(of_kind(docs, "Service")) == sorted([*SERVICES, "table-headless"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_ports_probes_and_settings_agree_with_the_code(overlay: str) -> None:
    docs = render(overlay)
    services = of_kind(docs, "Service")
    policy = of_kind(docs, "NetworkPolicy")["monopoly-internal-apis"]
    allowed = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    for name, deployment in workloads(docs).items():
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["command"] == ["python", "-m", f"services.{name}.main"]
        env = container_env(deployment, docs)
        settings = service_settings(name, env)
        grpc_port, metrics_port = settings.grpc_port, settings.metrics_port
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        if name == "gateway":  # browsers' HTTP and WebSocket besides its health and metrics
            assert ports.pop("http") == int(env["GATEWAY_HTTP_PORT"])
        # gRPC serves TLS only; the kubelet's probes (no TLS) check the plaintext health-only port
        assert ports.pop("health") == settings.health_port != 0, name
        assert ports == {"grpc": grpc_port, "metrics": metrics_port}, name
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == settings.health_port, (name, probe)
        # liveness asks the name that stays SERVING through a Postgres or NATS outage (a normal event the
        # service rides out: readiness follows it), so an outage never restarts a pod
        assert container["livenessProbe"]["grpc"]["service"] == grpcserver.LIVENESS, name
        assert "service" not in container["readinessProbe"]["grpc"], name
        served = {p["name"]: p["port"] for p in services[name]["spec"]["ports"]}
        served.pop("http", None)
        assert served == ports, name
        assert {grpc_port, metrics_port} <= allowed, name
        assert settings.host == "0.0.0.0"  # reachable from other pods, not only loopback
        assert kit.table_target(env) == f"table:{service_settings('table', {}).grpc_port}"
        assert settings.nats_url.split(",") == [f"tls://nats-{i}.nats-headless:4222" for i in range(3)]
        tls = settings.tls
        assert tls.server and tls.client and tls.require_client_cert, name  # mTLS
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["tls"]["secret"]["secretName"] == f"{name}-tls"  # its own certificate only
        assert {tls.cert, tls.key, tls.ca} == {f"{mounts['tls']}/{f}" for f in ("tls.crt", "tls.key", "ca.crt")}
        # secrets come from Secrets, never from a value in a manifest
        secret_refs = {
            v["name"]: v["valueFrom"]["secretKeyRef"]
            for v in container["env"]
            if "secretKeyRef" in v.get("valueFrom", {})
        }
        assert secret_refs["TOKEN_SECRET"] == {"name": "monopoly-token", "key": "TOKEN_SECRET"}
        if name == "gateway":  # no store: the one service facing the internet holds no database password
            assert "DATABASE_URL" not in secret_refs
        else:
            assert secret_refs["DATABASE_URL"] == {"name": "monopoly-pg-app", "key": "uri"}
        if name in natsauth.ROLES:  # its own bus user, its password only
            assert settings.nats_user == name
            assert secret_refs["NATS_PASSWORD"] == {"name": "monopoly-nats", "key": name}
        else:
            assert "NATS_PASSWORD" not in secret_refs
        assert deployment["metadata"]["labels"]["app.kubernetes.io/part-of"] == "monopoly"
        # SIGTERM: 2 s of gRPC grace, the message in hand, the NATS drain; preStop 5 s comes first
        assert pod["terminationGracePeriodSeconds"] >= 30
        assert "memory" in container["resources"]["limits"] and "cpu" in container["resources"]["requests"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_has_its_certificate_from_the_platform_ca(overlay: str) -> None:
    """cert-manager's kinds are not in the Kubernetes schemas: the fields the platform relies on."""
    docs = render(overlay)
    certificates = of_kind(docs, "Certificate")
    issuers = of_kind(docs, "Issuer")
    assert certificates["monopoly-ca"]["spec"]["isCA"] is True
    assert issuers["monopoly-ca"]["spec"]["ca"]["secretName"] == certificates["monopoly-ca"]["spec"]["secretName"]
    assert certificates["monopoly-ca"]["spec"]["issuerRef"]["name"] in issuers
    for name in [*SERVICES, "nats"]:
        spec = certificates[f"{name}-tls"]["spec"]
        assert spec["secretName"] == f"{name}-tls" and name in spec["dnsNames"], name
        assert set(spec["usages"]) == {"server auth", "client auth"}  # mTLS: served and presented
        assert spec["issuerRef"] == {"name": "monopoly-ca", "kind": "Issuer"}
    for doc in certificates.values():
        assert doc["apiVersion"] == "cert-manager.io/v1"
    values = yaml.safe_load((ROOT / "deploy" / "nats" / "values.yaml").read_text())
    assert values["config"]["nats"]["tls"] == {"enabled": True, "secretName": "nats-tls", "merge": {"verify": True}}
    assert values["tlsCA"]["secretName"] == "nats-tls"


def test_the_compose_file_and_the_manifests_run_the_same_services_on_the_same_ports() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    docs = render("prod")
    for name, deployment in workloads(docs).items():
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert compose[name]["command"] == container["command"], name
        kube = service_settings(name, container_env(deployment, docs))
        local = service_settings(name, {k: str(v) for k, v in compose[name]["environment"].items()})
        for port in ("grpc_port", "metrics_port"):
            assert getattr(kube, port) == getattr(local, port), (name, port)
        for key in ("EXTERNAL_SUBPROTOCOLS", "RATING_TARGET"):
            assert container_env(deployment, docs)[key] == str(compose[name]["environment"][key]), (name, key)


def test_every_configured_variable_is_read_by_the_code() -> None:
    """A key of the ConfigMap that nothing reads is a typo or a setting that went away."""
    code = "\n".join(p.read_text() for d in ("libs/servicekit", "services") for p in (ROOT / d).rglob("*.py"))
    for name, deployment in workloads(render("prod")).items():
        for key in container_env(deployment, render("prod")):
            assert f'"{key}"' in code or f"{name.upper()}_" in key, f"{key} is set for {name} but read nowhere"


def test_the_hpa_scales_the_table_service_from_its_replicas_up() -> None:
    docs = render("prod")
    (hpa,) = of_kind(docs, "HorizontalPodAutoscaler").values()
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "table"}
    table = workloads(docs)["table"]
    assert hpa["spec"]["minReplicas"] == table["spec"]["replicas"] == 3
    assert hpa["spec"]["maxReplicas"] > hpa["spec"]["minReplicas"]
    # never more instances than partitions: each must be able to hold a share
    partitions = int(container_env(table, docs)["TABLE_PARTITIONS"])
    assert hpa["spec"]["maxReplicas"] <= partitions


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_runs_several_instances_spread_over_nodes_with_a_budget(overlay: str) -> None:
    docs = render(overlay)
    budgets = of_kind(docs, "PodDisruptionBudget")
    for name, workload in workloads(docs).items():
        spec, pod = workload["spec"], workload["spec"]["template"]["spec"]
        replicas = spec["replicas"]
        assert replicas >= (3 if name == "table" else 2), name
        if workload["kind"] == "Deployment":  # a new pod is up before an old one goes
            assert spec["strategy"]["type"] == "RollingUpdate", name
            assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0, name
        else:
            assert spec["updateStrategy"]["type"] == "RollingUpdate", name
        # a drain takes one pod at a time, never the last
        budget = budgets[name]["spec"]
        assert "maxUnavailable" not in budget, name
        assert budget["minAvailable"] == replicas - 1 >= 1, name
        assert budget["selector"] == spec["selector"], name
        spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
        node = spread["kubernetes.io/hostname"]
        assert node["whenUnsatisfiable"] == "DoNotSchedule" and node["maxSkew"] == 1, name
        assert node["labelSelector"] == spec["selector"], name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_each_instance_is_named_after_its_pod(overlay: str) -> None:
    """<NAME>_INSTANCE_ID from the downward API wherever the service reads it, and <NAME>_REPLICAS only
    where a service acts on it (trade's shortcut), equal to the replicas that run."""
    docs = render(overlay)
    for name, workload in workloads(docs).items():
        (container,) = workload["spec"]["template"]["spec"]["containers"]
        env = {v["name"]: v for v in container["env"]}
        if name == "gateway":  # no runner, no ready line: it reads no instance id
            assert "GATEWAY_INSTANCE_ID" not in env
            continue
        assert env[f"{name.upper()}_INSTANCE_ID"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}, name
        replicas = {k for k in env if k.endswith("_REPLICAS")}
        assert replicas == ({"TRADE_REPLICAS"} if name == "trade" else set()), name
    trade = workloads(docs)["trade"]
    assert service_settings("trade", container_env(trade, docs)).replicas == trade["spec"]["replicas"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_table_instances_advertise_a_name_their_certificate_covers(overlay: str) -> None:
    """`served-by` names TABLE_ADVERTISE_ADDRESS: the pod's stable name under the headless Service, on the
    gRPC port, a name the table's certificate covers (clients verify it like any mTLS call)."""
    from services.table.settings import TableSettings

    docs = render(overlay)
    table = workloads(docs)["table"]
    assert table["kind"] == "StatefulSet"
    headless = of_kind(docs, "Service")[table["spec"]["serviceName"]]["spec"]
    assert headless["clusterIP"] == "None" and headless["selector"] == table["spec"]["selector"]["matchLabels"]
    (container,) = table["spec"]["template"]["spec"]["containers"]
    env = {v["name"]: v for v in container["env"]}
    advertised = env["TABLE_ADVERTISE_ADDRESS"]["value"]
    # what the kubelet makes of it for pod table-1: $(TABLE_INSTANCE_ID) is the pod's name
    pod_env = {**container_env(table, docs), "TABLE_INSTANCE_ID": "table-1"}
    pod_env["TABLE_ADVERTISE_ADDRESS"] = advertised.replace("$(TABLE_INSTANCE_ID)", "table-1")
    settings = TableSettings.from_env({**pod_env, **KEY})
    assert settings.instance_id == "table-1"
    host, port = settings.address.rsplit(":", 1)
    assert host == f"table-1.{table['spec']['serviceName']}" and int(port) == settings.base.grpc_port
    assert int(port) in {p["port"] for p in headless["ports"]}
    names = of_kind(docs, "Certificate")["table-tls"]["spec"]["dnsNames"]
    # each instance the HPA may run by its own name: OpenSSL matches no wildcard over a one-dot name
    (hpa,) = of_kind(docs, "HorizontalPodAutoscaler").values()
    assert {f"table-{i}.{table['spec']['serviceName']}" for i in range(hpa["spec"]["maxReplicas"])} <= set(names)
    # SIGTERM hands the leases back after the preStop pause, gRPC's 2 s grace and the actors' stop: the grace
    # period must outlast that hand-off, with room for the actors' last commits (30 s)
    pod = table["spec"]["template"]["spec"]
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pod["terminationGracePeriodSeconds"] >= pause + 2 + 30


def test_nats_runs_three_nodes_and_every_stream_has_three_copies() -> None:
    """The services list every node of the chart's StatefulSet (nats-<i>.nats-headless) and keep each stream
    on all of them: a node may go."""
    from servicekit.bus import Retention

    values = yaml.safe_load((ROOT / "deploy" / "nats" / "values.yaml").read_text())
    nodes = values["config"]["cluster"]["replicas"]
    assert nodes == 3
    docs = render("prod")
    for name, workload in workloads(docs).items():
        env = container_env(workload, docs)
        urls = service_settings(name, env).nats_url.split(",")
        assert urls == [f"tls://nats-{i}.nats-headless:4222" for i in range(nodes)], name
        retention = Retention.from_env(env)
        assert retention.stream_replicas == retention.replicas == nodes, name
    nats_names = of_kind(docs, "Certificate")["nats-tls"]["spec"]["dnsNames"]
    # the services' NATS client checks the host of each URL: every node by name (a wildcard over the
    # one-dot "nats-headless" matches none of them for OpenSSL)
    assert {f"nats-{i}.nats-headless" for i in range(nodes)} <= set(nats_names)
    # the cluster's routes (6222) only from NATS itself: a pod joined as a route bypasses every user's permissions
    policy = of_kind(docs, "NetworkPolicy")["monopoly-nats"]["spec"]
    route_rules = [r for r in policy["ingress"] if {"protocol": "TCP", "port": 6222} in r["ports"]]
    assert [r["from"] for r in route_rules] == [[{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "nats"}}}]]
    # the prod namespace enforces the restricted Pod Security Standard: the chart's pods must meet it
    assert values["podTemplate"]["merge"]["spec"]["securityContext"]["runAsNonRoot"] is True
    for container in ("container", "reloader", "promExporter"):
        assert values[container]["merge"]["securityContext"]["capabilities"] == {"drop": ["ALL"]}, container


def test_postgres_takes_every_pool_at_the_most_replicas() -> None:
    """max_connections covers each service's pool (ServiceSpec.pool_size) at its most pods (the HPA's maximum,
    or the replicas plus a rollout's surge), each with one connection more (the schema's creation at start; the
    table's instance lock), and some for the operator, the exporter and reports."""
    from services.table.settings import TableSettings

    docs = render("prod")
    (cluster,) = (d for d in docs if d["kind"] == "Cluster")
    (hpa,) = of_kind(docs, "HorizontalPodAutoscaler").values()
    needed = 0
    for name, workload in workloads(docs).items():
        if name == "gateway":  # no Postgres
            continue
        env = {**container_env(workload, docs), **KEY}
        module = importlib.import_module(f"services.{name}.main")
        if name == "table":
            spec = module.spec(TableSettings.from_env(env))
            pods = hpa["spec"]["maxReplicas"]  # a StatefulSet rolls without surge
            extra = 2
        else:
            spec = module.spec(_settings_of(name, env))
            pods = workload["spec"]["replicas"] + workload["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
            extra = 1
        needed += pods * (spec.pool_size + extra)
    assert int(cluster["spec"]["postgresql"]["parameters"]["max_connections"]) >= needed + 20


def _settings_of(name: str, env: dict[str, str]) -> Any:
    """What `services.<name>.main.main` hands its `spec`."""
    module = importlib.import_module(f"services.{name}.settings")
    for attr in ("MatchmakingSettings", "RatingSettings", "TradeSettings"):
        if hasattr(module, attr):
            return getattr(module, attr).from_env(env)
    return module.common(env)


def test_no_overlay_carries_a_token_key() -> None:
    """The key is created beside the manifests (`kubectl create secret`, deploy/README.md), in dev too:
    a key written in a manifest is a public key."""
    for overlay in ("prod", "dev"):
        assert "monopoly-token" not in of_kind(render(overlay), "Secret"), overlay
    manifests = "\n".join(p.read_text() for p in (ROOT / "deploy").rglob("*.yaml"))
    assert "monopoly-dev-secret" not in manifests
    assert all(d["metadata"].get("namespace") == "monopoly" for d in render("prod") if d["kind"] != "Namespace")


def test_postgres_cluster_is_what_the_services_connect_to() -> None:
    """The CloudNativePG Cluster: its app Secret is the services' DATABASE_URL, its database compose's."""
    (cluster,) = (d for d in render("prod") if d["kind"] == "Cluster")
    assert cluster["apiVersion"] == "postgresql.cnpg.io/v1"
    spec = cluster["spec"]
    assert spec["instances"] == 3 and re.fullmatch(r"\d+Gi", spec["storage"]["size"])
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    database = service_settings("table", compose["table"]["environment"]).database_url.rsplit("/", 1)[1]
    assert spec["bootstrap"]["initdb"]["database"] == database
    assert f"{cluster['metadata']['name']}-app" == "monopoly-pg-app"  # the operator's Secret for the owner
    for role in spec["managed"]["roles"]:
        assert role["ensure"] == "present" and "passwordSecret" in role
    assert of_kind(render("dev"), "Cluster")["monopoly-pg"]["spec"]["instances"] == 1


#: Top-level keys of the NATS chart's values, version 2.12.6 (what `helm template` would accept).
NATS_CHART_KEYS = {
    "global", "nameOverride", "fullnameOverride", "namespaceOverride", "tlsCA", "config", "container", "reloader",
    "promExporter", "service", "statefulSet", "podTemplate", "headlessService", "configMap", "podDisruptionBudget",
    "serviceAccount", "natsBox", "extraResources",
}  # fmt: skip


def test_nats_values_describe_a_three_node_jetstream_cluster_for_the_pinned_chart() -> None:
    """`helm template` needs the chart, which cannot be fetched here: check the values' structure instead."""
    path = ROOT / "deploy" / "nats" / "values.yaml"
    text = path.read_text()
    values = yaml.safe_load(text)
    assert set(values) <= NATS_CHART_KEYS, set(values) - NATS_CHART_KEYS
    chart = re.search(r"chart `nats` version (\d+\.\d+\.\d+)", text)
    assert chart, "the values name the chart version they are for"
    cluster, jetstream = values["config"]["cluster"], values["config"]["jetstream"]
    assert cluster["enabled"] and cluster["replicas"] >= 3 and cluster["replicas"] % 2 == 1
    assert jetstream["enabled"] and jetstream["fileStore"]["enabled"] and jetstream["fileStore"]["pvc"]["enabled"]
    assert values["config"]["monitor"]["enabled"]  # the exporter reads the monitor port
    assert values["promExporter"]["enabled"]
    assert values["container"]["image"]["tag"].startswith(chart.group(1))
    major, minor, _ = (int(x) for x in chart.group(1).split("."))
    assert (major, minor) >= (2, 10)  # multi-subject durable consumers (servicekit.consumers)
    assert f"helm upgrade --install nats nats/nats --version {chart.group(1)}" in text


def test_nats_values_carry_every_bus_user_with_the_permissions_of_the_code() -> None:
    """The chart's authorization is natsauth's, password by password from the Secret `monopoly-nats`."""
    values = yaml.safe_load((ROOT / "deploy" / "nats" / "values.yaml").read_text())
    users = {u["user"]: u for u in values["config"]["merge"]["authorization"]["users"]}
    assert set(users) == set(natsauth.USERS)
    env = values["container"]["env"]
    for name, user in users.items():
        variable = f"NATS_{name.upper()}_PASSWORD"
        assert user["password"] == f"<< ${variable} >>"
        assert env[variable] == {"valueFrom": {"secretKeyRef": {"name": "monopoly-nats", "key": name}}}
        if name == natsauth.ADMIN:
            assert "permissions" not in user
        else:
            assert user["permissions"] == natsauth.ROLES[name].permissions(), name
    prod = of_kind(render("prod"), "Secret")
    assert "monopoly-nats" not in prod  # created from the secret store
    dev = of_kind(render("dev"), "Secret")["monopoly-nats"]
    assert set(dev["data"]) == set(natsauth.USERS)
