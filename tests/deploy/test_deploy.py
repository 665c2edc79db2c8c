"""The deployment files, checked as files: docker-compose.yml, the Dockerfile, .env.example and
deploy/requirements.lock. `docker compose config` would check the compose file further, but the
suite runs where there is no Docker engine, so these checks are what runs; they test what the
files promise each other (service names, URLs, ports, volumes, settings, pins)."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
import sys
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from pydantic import SecretStr

from threadsage.settings.environment import Settings, env_names

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES: dict[str, dict] = COMPOSE["services"]
# Services that are started with `docker compose up` and stay up (ingest is a one-off tool).
LONG_RUNNING = {name for name, service in SERVICES.items() if not service.get("profiles")}
ALIASES = set(env_names().values())
COMPOSE_ONLY = {"POSTGRES_PASSWORD"}  # read by docker-compose.yml, not by threadsage
ENV_LINE = re.compile(r"^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$")
PIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$")


# --- helpers -----------------------------------------------------------------------------------


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {key: "" if value is None else str(value) for key, value in env.items()}


def depends_on(service: dict) -> dict[str, str]:
    deps = service.get("depends_on") or {}
    if isinstance(deps, list):
        return dict.fromkeys(deps, "service_started")
    return {name: (spec or {}).get("condition", "service_started") for name, spec in deps.items()}


def has_healthcheck(service: dict) -> bool:
    check = service.get("healthcheck")
    if not check or check.get("disable"):
        return False
    test = check.get("test")
    if isinstance(test, str):
        return bool(test.strip())
    return isinstance(test, list) and len(test) >= 2 and test[0] in ("CMD", "CMD-SHELL")


def healthcheck_text(service: dict) -> str:
    test = service["healthcheck"]["test"]
    return test if isinstance(test, str) else " ".join(test)


def volume_sources(service: dict) -> list[str]:
    sources = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            if volume.get("source"):
                sources.append(volume["source"])
        elif ":" in volume:
            sources.append(volume.split(":", 1)[0])
    return sources


def is_named(source: str) -> bool:
    return not source.startswith((".", "/", "~", "$"))


def env_example() -> list[tuple[bool, str, str]]:
    """(commented out, name, value) of every assignment in .env.example."""
    entries = []
    for line in (REPO / ".env.example").read_text().splitlines():
        match = ENV_LINE.match(line.strip())
        if match:
            entries.append((match.group(1) is not None, match.group(2), match.group(3)))
    return entries


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical, current = [], ""
    for raw in (REPO / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    assert not current, "the Dockerfile ends in a continuation line"
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1] if " " in text else "") for text in logical]


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "deploy" / "requirements.lock").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        assert PIN.match(line), f"not a name==version pin: {line!r}"
        name, version = line.split("==")
        assert canonicalize_name(name) not in pins, f"{name} is pinned twice"
        pins[canonicalize_name(name)] = version
    return pins


def seconds(duration: str) -> float:
    parts = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", str(duration))
    assert parts and any(parts.groups()), f"cannot read the duration {duration!r}"
    return int(parts.group(1) or 0) * 60 + int(parts.group(2) or 0)


# --- docker-compose.yml --------------------------------------------------------------------------


def test_compose_has_the_whole_stack():
    assert {"postgres", "redis", "milvus", "etcd", "minio", "serve", "worker", "ingest"} <= set(SERVICES)
    assert SERVICES["serve"]["command"] == ["serve"]
    assert SERVICES["worker"]["command"] == ["worker"]
    assert SERVICES["ingest"]["command"][0] == "ingest"
    assert SERVICES["ingest"]["profiles"] == ["tools"], "ingest must not start with `docker compose up`"
    assert "./knowledge:/knowledge:ro" in SERVICES["ingest"]["volumes"]
    assert {"serve", "worker", "postgres", "redis", "milvus", "etcd", "minio"} <= LONG_RUNNING


def test_every_service_has_a_build_or_a_pinned_image():
    for name, service in SERVICES.items():
        assert "image" in service or "build" in service, f"{name} has neither image nor build"
        image = service.get("image")
        if image is None:
            continue
        assert "$" not in image, f"{name}: the image must not depend on a variable: {image}"
        if "@sha256:" in image:
            continue
        _, _, tag = image.rpartition("/")[2].partition(":")
        assert tag, f"{name}: {image} has no tag"
        assert tag != "latest", f"{name}: {image} is not pinned"
    for name in ("serve", "worker", "ingest"):
        assert SERVICES[name]["build"] in (".", {"context": "."}), f"{name} is built from this repository"
    assert SERVICES["milvus"]["command"] == ["milvus", "run", "standalone"]


def test_the_milvus_server_is_of_the_sdks_line_as_the_docs_say():
    """Milvus pairs each server line with an SDK line (pymilvus 3.0.x with Milvus 3.0.x): the
    compose file's server, pyproject's range, the lock and docs/operations.md agree on one."""
    image = SERVICES["milvus"]["image"]
    server = Version(image.rpartition(":v")[2])
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    [requirement] = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "pymilvus"]
    line = f"{server.major}.{server.minor}"
    assert requirement.specifier.contains(f"{line}.99"), f"{requirement} leaves out later SDKs of Milvus {line}"
    next_line = f"{server.major}.{server.minor + 1}.0"
    assert not requirement.specifier.contains(next_line), f"{requirement} admits the SDK of another server line"
    assert Version(lock_pins()["pymilvus"]).release[:2] == server.release[:2]
    operations = (REPO / "docs" / "operations.md").read_text()
    assert f"`{image}`" in operations and f"pymilvus {line}" in operations
    assert "milvusdb/milvus:v2" not in operations
    # Milvus's own compose file of that line: etcd and MinIO, the MinIO health check without curl.
    assert SERVICES["milvus"]["depends_on"] == {
        "etcd": {"condition": "service_healthy"},
        "minio": {"condition": "service_healthy"},
    }
    assert healthcheck_text(SERVICES["minio"]) == "CMD mc ready local"


def test_long_running_services_restart_and_report_their_health():
    for name in LONG_RUNNING:
        service = SERVICES[name]
        assert service.get("restart") in ("always", "unless-stopped", "on-failure"), f"{name} does not restart"
        assert has_healthcheck(service), f"{name} has no healthcheck"
    for name in ("serve", "worker"):
        assert "8080/healthz" in healthcheck_text(SERVICES[name]), f"{name} checks its own /healthz"
    assert "pg_isready" in healthcheck_text(SERVICES["postgres"])
    assert "redis-cli" in healthcheck_text(SERVICES["redis"]) and "ping" in healthcheck_text(SERVICES["redis"])
    assert "9091/healthz" in healthcheck_text(SERVICES["milvus"])


def test_redis_keeps_the_queue_across_restarts():
    command = SERVICES["redis"]["command"]
    command = command if isinstance(command, list) else command.split()
    assert command[0] == "redis-server"
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == "always"  # acknowledged = on disk
    assert any(target.endswith(":/data") for target in SERVICES["redis"]["volumes"])


def test_only_serve_publishes_a_port_and_workers_can_be_scaled():
    published = [
        str(port) if not isinstance(port, dict) else f"{port.get('published')}:{port['target']}"
        for port in SERVICES["serve"].get("ports", [])
    ]
    assert any(port.rsplit(":", 1)[-1].split("/")[0] == "8080" for port in published), published
    assert environment(SERVICES["serve"]).get("THREADSAGE_HTTP_PORT", "8080") == "8080"
    # A published host port or a fixed container name would make `--scale worker=N` fail.
    for name in ("worker", "ingest"):
        assert "ports" not in SERVICES[name], f"{name} publishes a port"
    for name in ("serve", "worker"):
        assert "container_name" not in SERVICES[name], f"{name} has a fixed container name"
    # SIGTERM: the worker finishes its turns in flight; Docker's 10 s default would cut them.
    assert seconds(SERVICES["worker"]["stop_grace_period"]) >= 30


@pytest.mark.parametrize(
    ("service", "variable", "scheme", "host", "port"),
    [
        ("serve", "REDIS_URL", "redis", "redis", 6379),
        ("worker", "REDIS_URL", "redis", "redis", 6379),
        ("worker", "DATABASE_URL", "postgresql", "postgres", 5432),
        ("worker", "MILVUS_URI", "http", "milvus", 19530),
        ("ingest", "MILVUS_URI", "http", "milvus", 19530),
    ],
)
def test_application_services_get_in_network_urls(service, variable, scheme, host, port):
    url = environment(SERVICES[service]).get(variable)
    assert url, f"{service} has no {variable}"
    parts = urlsplit(url)
    assert (parts.scheme, parts.hostname, parts.port) == (scheme, host, port), url
    assert host in SERVICES, f"{variable} points at {host}, which is not a service"


def test_database_url_matches_the_postgres_service():
    postgres = environment(SERVICES["postgres"])
    url = urlsplit(environment(SERVICES["worker"])["DATABASE_URL"])
    credentials = url.netloc.rpartition("@")[0]
    user, _, password = credentials.partition(":")
    assert user == postgres["POSTGRES_USER"]
    assert url.path == "/" + postgres["POSTGRES_DB"]
    assert password == postgres["POSTGRES_PASSWORD"], "both must expand ${POSTGRES_PASSWORD} the same way"
    assert password.startswith("${POSTGRES_PASSWORD"), "no password is written into the compose file"


def test_dependencies_exist_are_healthy_and_acyclic():
    for name, service in SERVICES.items():
        for target, condition in depends_on(service).items():
            assert target in SERVICES, f"{name} depends on {target}, which does not exist"
            if condition == "service_healthy":
                assert has_healthcheck(SERVICES[target]), f"{name} waits for {target} to be healthy: no healthcheck"
    assert depends_on(SERVICES["serve"]).get("redis") == "service_healthy"
    for target in ("postgres", "redis", "milvus"):
        assert depends_on(SERVICES["worker"]).get(target) == "service_healthy", f"worker must wait for {target}"
    assert depends_on(SERVICES["ingest"]).get("milvus") == "service_healthy"
    assert {"etcd", "minio"} <= set(depends_on(SERVICES["milvus"]))

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"dependency cycle: {' -> '.join((*path, name))}"
        for target in depends_on(SERVICES[name]):
            visit(target, (*path, name))

    for name in SERVICES:
        visit(name, ())


def test_data_lives_in_declared_named_volumes():
    declared = set(COMPOSE.get("volumes") or {})
    used = set()
    for name, service in SERVICES.items():
        for source in volume_sources(service):
            if is_named(source):
                assert source in declared, f"{name} uses the undeclared volume {source}"
                used.add(source)
    assert declared == used, f"declared but unused volumes: {declared - used}"
    for name in ("postgres", "redis", "etcd", "minio", "milvus"):
        assert any(is_named(source) for source in volume_sources(SERVICES[name])), f"{name} keeps its data in no volume"


def test_compose_secrets_come_from_the_environment():
    text = (REPO / "docker-compose.yml").read_text()
    names = set(re.findall(r"\$\{([A-Z0-9_]+)", text))
    documented = {name for _, name, _ in env_example()}
    assert names <= documented, f"compose reads variables .env.example does not mention: {names - documented}"
    for name in ("serve", "worker", "ingest"):
        assert SERVICES[name].get("env_file") in (".env", [".env"]), f"{name} does not read .env"
        env = environment(SERVICES[name])
        for key in env:
            if key.endswith(("TOKEN", "SECRET", "KEY")):
                assert env[key].startswith("${"), f"{name}: {key} is written into the compose file"


# --- .env.example --------------------------------------------------------------------------------


def test_env_example_names_every_setting_and_nothing_else():
    names = [name for _, name, _ in env_example()]
    duplicates = {name for name in names if names.count(name) > 1}
    assert not duplicates, f"named twice in .env.example: {duplicates}"
    # The queue's settings are listed even before they are in config.py; once they are, the
    # general rule covers them.
    assert {"THREADSAGE_TURN_TIMEOUT", "THREADSAGE_WORKER_CONCURRENCY", "THREADSAGE_TURN_MAX_TRIES"} <= set(names)
    assert ALIASES - set(names) == set(), f"settings missing from .env.example: {sorted(ALIASES - set(names))}"
    unknown = set(names) - ALIASES - COMPOSE_ONLY
    assert not unknown, f".env.example names variables threadsage does not read: {sorted(unknown)}"


def test_env_example_sets_nothing_by_accident():
    # An empty value counts as set (an empty SLACK_APP_TOKEN turns Socket Mode on), so every line
    # of the example is commented out; secrets have no value at all.
    for commented, name, _value in env_example():
        assert commented, f"{name} is set in .env.example; comment it out"
    secret_fields = {
        env_names()[name] for name, field in Settings.model_fields.items() if "SecretStr" in str(field.annotation)
    }
    assert "SLACK_BOT_TOKEN" in secret_fields
    for _, name, value in env_example():
        if name in secret_fields or name in COMPOSE_ONLY:
            assert value == "", f"{name} must be empty in .env.example"


def test_env_example_shows_the_real_defaults(monkeypatch):
    by_alias = {env_names()[name]: (name, field) for name, field in Settings.model_fields.items()}
    for alias in ALIASES:
        monkeypatch.delenv(alias, raising=False)
    shown = [(name, value) for _, name, value in env_example() if value and name in by_alias]
    assert len(shown) >= 20, "the example shows the defaults"
    for alias, value in shown:
        field_name, field = by_alias[alias]
        monkeypatch.setenv(alias, value)
        parsed = getattr(Settings(_env_file=None), field_name)
        monkeypatch.delenv(alias)
        default = field.get_default(call_default_factory=True)
        if isinstance(parsed, SecretStr):
            parsed = parsed.get_secret_value()
        assert parsed == default, f".env.example shows {alias}={value}, the default is {default!r}"


# --- Dockerfile, lock, .dockerignore -------------------------------------------------------------


def test_dockerfile_builds_a_slim_non_root_image_from_the_lock():
    instructions = dockerfile_instructions()
    kinds = [kind for kind, _ in instructions]
    stages = {args.split()[-1] for kind, args in instructions if kind == "FROM" and " AS " in args.upper()}
    for kind, args in instructions:
        if kind == "FROM":
            base = args.split()[0]
            assert base == "python:3.11-slim" or base in stages, f"unexpected base image {base}"

    users = [args for kind, args in instructions if kind == "USER"]
    assert users, "the image runs as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0"), f"the image runs as {users[-1]}"
    assert kinds.index("USER") > max(i for i, k in enumerate(kinds) if k == "FROM"), "USER is set in the final stage"

    runs = [args for kind, args in instructions if kind == "RUN"]
    lock_install = next(i for i, run in enumerate(runs) if "-r deploy/requirements.lock" in run)
    package_install = next(i for i, run in enumerate(runs) if "--no-deps ." in run)
    assert lock_install < package_install, "dependencies come from the lock, then the package without resolving"
    assert "--no-cache-dir" in runs[lock_install] and "--no-cache-dir" in runs[package_install]
    assert any(kind == "COPY" and "deploy/requirements.lock" in args for kind, args in instructions)

    healthchecks = [args for kind, args in instructions if kind == "HEALTHCHECK"]
    assert healthchecks and "NONE" not in healthchecks[-1].upper()
    assert "urllib" in healthchecks[-1] and "/healthz" in healthchecks[-1] and "curl" not in healthchecks[-1]

    def json_args(kind: str) -> list[str]:
        return json.loads([args for k, args in instructions if k == kind][-1])

    assert json_args("ENTRYPOINT") == ["threadsage"]
    assert json_args("CMD") == ["serve"]
    assert any(kind == "EXPOSE" and "8080" in args.split() for kind, args in instructions)
    env = " ".join(args for kind, args in instructions if kind == "ENV")
    assert re.search(r"THREADSAGE_DATA_DIR[= ]/data\b", env)
    assert any(kind == "RUN" and "chown" in args and "/data" in args for kind, args in instructions)


def test_lock_pins_every_dependency_and_satisfies_pyproject():
    lines = (REPO / "deploy" / "requirements.lock").read_text().splitlines()
    header = " ".join(line for line in lines[: next(i for i, line in enumerate(lines) if not line.startswith("#"))])
    assert "make lock" in header and "pip freeze" in header, "the header says how the lock is made"
    assert re.search(r"^lock:", (REPO / "Makefile").read_text(), re.MULTILINE)
    pins = lock_pins()
    assert "threadsage" not in pins
    assert "torch" not in pins, "the image has no extras"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for spec in project["dependencies"]:
        requirement = Requirement(spec)
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in the lock"
        assert requirement.specifier.contains(Version(pins[name]), prereleases=True), (
            f"the lock pins {requirement.name}=={pins[name]}, pyproject.toml asks for {requirement.specifier}"
        )


def test_lock_has_every_library_the_package_imports():
    """What threadsage imports at module level is installed in the image: a dependency missing
    from pyproject.toml (and so from the lock) would only show in production."""
    pins = lock_pins()
    distributions = importlib.metadata.packages_distributions()
    missing = set()
    for path in (REPO / "threadsage").rglob("*.py"):
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top == "threadsage" or top in sys.stdlib_module_names or top == "__future__":
                    continue
                names = {canonicalize_name(d) for d in distributions.get(top, [top])}
                if not names & set(pins):
                    missing.add(f"{top} ({path.relative_to(REPO)})")
    assert not missing, f"imported but not in deploy/requirements.lock: {sorted(missing)}"


def test_dockerignore_keeps_secrets_and_local_state_out():
    ignored = {line.strip().rstrip("/") for line in (REPO / ".dockerignore").read_text().splitlines()}
    assert {".env", ".venv", ".git", "data"} <= ignored
