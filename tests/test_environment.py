"""The suite runs on the versions it was measured with (constraints.txt, installed by scripts/setup.sh).

A seed draws the same cases only under the same Hypothesis, and tests whose seed or budget was chosen by
measuring runs (tests/data/fault_seeds.json, the twelve-fault run, the fresh runs of the published compliance
seeds) would otherwise pass or fail by the day a machine was set up.
"""

from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
#: The extras scripts/setup.sh installs (everything but ibmmq, whose client library is IBM's).
INSTALLED_EXTRAS = ("all", "dev", "spark", "plots", "rabbitmq", "activemq", "examples")


def pinned(text: str) -> dict[str, str]:
    pins = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not name==version"
            pins[canonicalize_name(name)] = version
    return pins


def direct_requirements() -> set[str]:
    names = set()
    for spec in metadata.requires("mqconform") or ():
        requirement = Requirement(spec)
        if requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in INSTALLED_EXTRAS):
            names.add(canonicalize_name(requirement.name))
    return names - {"mqconform"}


def mismatches(pins: dict[str, str]) -> list[str]:
    """What the environment has that the pins do not say: a requirement not pinned, or installed at another version."""
    found = []
    for name in sorted(direct_requirements()):
        if name not in pins:
            found.append(f"{name} is required but not pinned")
    for name, version in sorted(pins.items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue   # pinned for a tool installed on demand (mutmut: scripts/mutation.sh)
        if installed != version:
            found.append(f"{name} {installed} installed, {version} pinned")
    return found


def test_the_environment_has_the_pinned_versions():
    found = mismatches(pinned((ROOT / "constraints.txt").read_text()))
    assert not found, ("the environment is not the one the suite was measured with (bash scripts/setup.sh --install "
                       "installs it; after a deliberate upgrade, bash scripts/constraints.sh): " + "; ".join(found))


def test_a_version_other_than_the_pinned_one_or_a_requirement_left_out_is_found():
    pins = pinned((ROOT / "constraints.txt").read_text())
    assert {"hypothesis", "pytest", "pytest-xdist", "attrs", "pyspark"} <= set(pins)
    assert mismatches({**pins, "hypothesis": "6.0.0"}) == [f"hypothesis {metadata.version('hypothesis')} installed, 6.0.0 pinned"]
    assert mismatches({k: v for k, v in pins.items() if k != "pika"}) == ["pika is required but not pinned"]
    # a pin for what is not installed is no mismatch
    assert mismatches({**pins, "no-such-package-here": "1.0"}) == []
