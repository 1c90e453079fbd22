"""Installed, the kit changes nothing in a user's own pytest session: a Hypothesis test of the user's draws the same
examples with the kit's plugin loaded as without it (Hypothesis mixes in constants of the user's own modules, and the
kit leaves that as it is outside its own runs), and the kit's profiles take no name a user's own may have."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LIBRARY = '''
MAGIC = 424242424
WORD = "needle-in-the-haystack"
'''

USER_TEST = '''
import json
import os

from hypothesis import given, seed, settings, strategies as st

import userlib


@seed(20261130)
@settings(max_examples=200, database=None)
@given(st.integers(), st.text())
def test_draws(n, s):
    with open(os.environ["DRAWS"], "a") as f:
        f.write(json.dumps([n, s]) + "\\n")


def test_the_kit_takes_no_profile_name_a_user_may_have():
    import pytest
    from hypothesis.errors import InvalidArgument

    for name in ("dev", "campaign"):
        with pytest.raises(InvalidArgument):
            settings.get_profile(name)
    assert "mqconform" not in os.environ["LOADED"] or settings.get_profile("mqconform-dev").max_examples == 50
'''


def _draws(tmp_path: Path, name: str, *pytest_args: str) -> list[str]:
    # the kit as a user installs it: its packages under a site-packages directory (an editable checkout's modules
    # are the user's own local code to Hypothesis, and their constants would be mixed in whatever the kit did)
    draws = tmp_path / f"{name.replace(' ', '-')}.jsonl"
    env = {**os.environ, "DRAWS": str(draws), "LOADED": name, "PYTHONPATH": str(tmp_path / "site-packages"),
           "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path / ".hypothesis")}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                           *pytest_args, "user"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return draws.read_text().splitlines()


def test_a_users_hypothesis_test_draws_the_same_with_the_plugin_loaded_as_without(tmp_path):
    installed = tmp_path / "site-packages"
    for package in ("conformance", "adapters", "reference_model", "reports"):
        shutil.copytree(ROOT / package, installed / package, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "userlib.py").write_text(LIBRARY)
    (tmp_path / "user" / "test_user.py").write_text(USER_TEST)
    without = _draws(tmp_path, "without", "-p", "no:mqconform")
    loaded = _draws(tmp_path, "with mqconform")   # the plugin loaded by its entry point, as pytest does once it is installed
    assert loaded == without
    # the user's own constants are in play (so that a kit switching them off for everyone would change the draws)
    assert any("424242424" in d or "needle-in-the-haystack" in d for d in without)
