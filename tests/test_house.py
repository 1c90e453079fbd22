"""The rules of the house, checked rather than remembered: ruff's chosen rule set and the type checker pass, and the
import contracts of pyproject.toml hold (the model imports nothing of the kit outside itself; the simulated queue manager and the DLQ
handler share no logic with the model; conformance/ is layered by role, the CLI on top; reports read records, never the
runner; adapters know nothing of the kit or Hypothesis), and are broken when a module breaks one on purpose."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PACKAGES = ("reference_model", "adapters", "conformance", "reports")


def _run(*argv, cwd=ROOT, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def test_ruff_passes_with_the_chosen_rules():
    proc = _run("ruff", "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_type_checker_passes_on_the_files_it_is_given():
    proc = _run("mypy", "--no-incremental", "--cache-dir", "/dev/null")
    assert proc.returncode == 0 and "Success" in proc.stdout, proc.stdout + proc.stderr


def test_the_import_contracts_hold():
    proc = _run("lint-imports", "--no-cache")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 kept, 0 broken" in proc.stdout


def _copy(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_a_model_module_importing_the_runner_breaks_a_contract(tmp_path):
    copy = _copy(tmp_path)
    with open(copy / "reference_model" / "expiry.py", "a") as f:
        f.write("\nimport conformance.checker.sequential  # noqa: E402,F401\n")
    proc = _run("lint-imports", "--no-cache", cwd=copy, env={"PYTHONPATH": str(copy)})
    assert proc.returncode != 0 and "The model is pure" in proc.stdout and "BROKEN" in proc.stdout, proc.stdout


def test_the_simulated_queue_manager_borrowing_the_models_logic_breaks_a_contract(tmp_path):
    copy = _copy(tmp_path)
    with open(copy / "adapters" / "simulated" / "queue_manager.py", "a") as f:
        f.write("\nfrom reference_model import core  # noqa: E402,F401\n")
    proc = _run("lint-imports", "--no-cache", cwd=copy, env={"PYTHONPATH": str(copy)})
    assert proc.returncode != 0 and "independent of the model" in proc.stdout, proc.stdout


@pytest.mark.parametrize("module, line, contract", [
    (("conformance", "records", "render.py"), "import conformance.runner.session", "layered by role"),
    (("conformance", "runner", "engine.py"), "import conformance.cli.common", "layered by role"),
    (("conformance", "checker", "blame.py"), "import conformance.records.history", "layered by role"),
    (("reports", "markdown.py"), "import conformance.runner.engine", "Reports read the records"),
    (("adapters", "rabbitmq", "adapter.py"), "import hypothesis", "Adapters know nothing"),
])
def test_a_module_crossing_a_layer_breaks_its_contract(tmp_path, module, line, contract):
    copy = _copy(tmp_path)
    with open(copy.joinpath(*module), "a") as f:
        f.write(f"\n{line}  # noqa: E402,F401\n")
    proc = _run("lint-imports", "--no-cache", cwd=copy, env={"PYTHONPATH": str(copy)})
    assert proc.returncode != 0 and contract in proc.stdout and "BROKEN" in proc.stdout, proc.stdout


def _module_scoped_fixtures(source: str) -> list[str]:
    """The fixtures ``source`` defines with ``scope="module"`` (or "class", "package")."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                scope = next((k.value for k in getattr(deco, "keywords", ()) if k.arg == "scope"), None)
                if isinstance(scope, ast.Constant) and scope.value in ("module", "class", "package"):
                    found.append(node.name)
    return found


def test_no_fixture_of_the_suite_is_made_once_per_module():
    """The workers take the longest tests first (tests/xdist_groups.py), so a module's tests are interleaved with
    other modules' and pytest makes a module's fixture again each time a worker comes back to the module (the
    genuine replay file of test_cli.py was made 13 times in one run): what is made once is made once per session."""
    assert _module_scoped_fixtures('@pytest.fixture(scope="module")\ndef made(): pass\n'
                                   '@pytest.fixture(scope="session")\ndef kept(): pass\n') == ["made"]
    found = {path.name: names for path in sorted((ROOT / "tests").glob("*.py"))
             if (names := _module_scoped_fixtures(path.read_text()))}
    assert found == {}, found
