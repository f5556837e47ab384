"""The lock files: requirements.lock pins what the service runs (the production image
installs it alone), requirements-esp.lock the same and the packages some ESPs' webhooks
need (an image built with LOCK=requirements-esp.lock), requirements-dev.lock all of it and
what tests and checks need besides. All come from pyproject.toml (``make lock``)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# This interpreter's environment markers, as the markers' evaluate() takes them.
ENVIRONMENT = {key: str(value) for key, value in default_environment().items()}


def pins(name: str) -> dict[str, str]:
    """Package -> version of a lock file, for this interpreter (markers evaluated)."""
    found: dict[str, str] = {}
    for line in (ROOT / name).read_text().splitlines():
        if not line or line.startswith(("#", " ")):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(ENVIRONMENT):
            (version,) = (spec.version for spec in requirement.specifier)
            found[canonicalize_name(requirement.name)] = version
    return found


def closure(roots: list[str]) -> set[str]:
    """Every package ``roots`` need, through the installed packages' own requirements."""
    needed: dict[str, set[str]] = {}
    todo = [Requirement(root) for root in roots]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = needed.get(name, set())
        if name in needed and set(requirement.extras) <= extras:
            continue
        needed[name] = extras | set(requirement.extras)
        for text in metadata.requires(name) or []:
            wanted = Requirement(text)
            if wanted.marker is None or any(
                wanted.marker.evaluate({**ENVIRONMENT, "extra": extra})
                for extra in needed[name] | {""}
            ):
                todo.append(wanted)
    return set(needed)


def test_the_runtime_lock_pins_exactly_what_the_service_runs() -> None:
    runtime = pins("requirements.lock")
    assert set(runtime) == closure(PROJECT["dependencies"])
    tools = {"mypy", "ruff", "playwright", "hypothesis", "pytest", "factory-boy", "aiosmtpd"}
    assert not tools & set(runtime)


def test_the_development_lock_adds_the_tools_at_the_same_runtime_pins() -> None:
    runtime, development = pins("requirements.lock"), pins("requirements-dev.lock")
    assert {name: development.get(name) for name in runtime} == runtime
    dev = PROJECT["optional-dependencies"]["dev"]
    assert set(development) == closure(PROJECT["dependencies"] + dev)


def test_this_environment_runs_the_locked_versions() -> None:
    for name, version in pins("requirements-dev.lock").items():
        assert metadata.version(name) == version, name


def test_the_esp_lock_adds_the_esp_extra_at_the_same_runtime_pins() -> None:
    runtime, esp = pins("requirements.lock"), pins("requirements-esp.lock")
    assert {name: esp.get(name) for name in runtime} == runtime
    assert set(esp) == closure(PROJECT["dependencies"] + PROJECT["optional-dependencies"]["esp"])
    # cryptography is the runtime's too: web push signs and encrypts with it.
    assert {"boto3", "svix"} <= set(esp) - set(runtime)
    assert "cryptography" in runtime
    development = pins("requirements-dev.lock")
    assert {name: development.get(name) for name in esp} == esp


def test_the_image_installs_the_runtime_lock_unless_built_with_the_esp_one() -> None:
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert re.findall(r"pip install[^\n]*", dockerfile) == ["pip install -r ${LOCK}"]
    assert re.findall(r"^ARG LOCK=(.*)$", dockerfile, re.M) == ["requirements.lock"]
    copied = re.findall(r"^COPY (?!--).*$", dockerfile, re.M)
    assert copied == ["COPY requirements.lock requirements-esp.lock pyproject.toml ./"]
    assert "requirements-dev.lock" not in "".join(copied)
