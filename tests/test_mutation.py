"""scripts/mutation.sh's parts (the mutation run itself is a benchmark, run by hand): the tests that kill
mutants can fail, the score is counted as documented, and mutmut's configuration names real files."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "mutation"))
import score  # noqa: E402


def _kill_tests(faults: str, which: str = "core") -> subprocess.CompletedProcess:
    env = {**os.environ, "MQCONFORM_MUTATION_FAULTS": faults, "MQCONFORM_MUTATION_EXAMPLES": "40"}
    return subprocess.run([sys.executable, "-m", "pytest", "mutation/", "-q", "-p", "no:cacheprovider", "-k", which],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_the_kit_kills_a_queue_manager_that_departs_and_spares_one_that_does_not():
    clean = _kill_tests("")
    assert clean.returncode == 0 and "2 passed" in clean.stdout, clean.stdout[-2000:]
    faulty = _kill_tests("priority-ignored")
    assert faulty.returncode == 1 and "failed" in faulty.stdout, faulty.stdout[-2000:]
    assert "CORE-04" in faulty.stdout


def test_the_kill_tests_of_concurrent_clients_and_of_the_dlq_host_browsing_by_calls_can_fail():
    """Two kill tests besides one per area and platform: concurrent cases (a race fault is found) and the DLQ area
    with its handler host reading the queue by calls (a DLQ fault is found); both pass on a clean queue manager."""
    clean = _kill_tests("", "browsing or concurrent")
    assert clean.returncode == 0 and "2 passed" in clean.stdout, clean.stdout[-2000:]
    race = _kill_tests("get-not-atomic", "concurrent")
    assert race.returncode == 1 and "1 failed" in race.stdout and "a race" in race.stdout, race.stdout[-2000:]
    dlq = _kill_tests("dlq-ignore-not-assumed", "browsing")
    assert dlq.returncode == 1 and "1 failed" in dlq.stdout, dlq.stdout[-2000:]


RESULTS = """
    adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_1: killed
    adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_2: survived
    adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_3: timeout
    adapters.simulated.queue_manager.xǁQueueManagerǁget__mutmut_1: no tests
    adapters.simulated.queue_manager.xǁQueueManagerǁget__mutmut_2: not checked
    adapters.simulated.x_create__mutmut_1: killed
    adapters.dlq_handler.handler.x_run__mutmut_4: survived
"""


def test_the_score_counts_killed_over_checked_per_file_leaving_out_equivalents(tmp_path):
    results = tmp_path / "results.txt"
    results.write_text(RESULTS, encoding="utf-8")
    equiv = tmp_path / "equivalent.txt"
    equiv.write_text("# name reason\nadapters.dlq_handler.handler.x_run__mutmut_4  only renames a local\n")
    out = io.StringIO()
    assert score.main([str(results), "--equivalent", str(equiv)], out=out) == 0
    text = out.getvalue()
    assert "adapters/simulated/queue_manager.py   50.0%  (2 of 4 killed)" in text
    assert "adapters/simulated/__init__.py       100.0%  (1 of 1 killed)" in text
    assert "handler" not in text.split("all")[0]          # the equivalent mutant is left out
    assert "60.0%  (3 of 5 killed; 1 equivalent left out)" in text
    assert "xǁQueueManagerǁget__mutmut_1 (no tests)" in text and "put__mutmut_2 (survived)" in text


def test_an_equivalent_mutant_without_a_reason_is_refused(tmp_path):
    equiv = tmp_path / "equivalent.txt"
    equiv.write_text("adapters.simulated.x_create__mutmut_1\n")
    with pytest.raises(SystemExit, match="needs a one-line reason"):
        score.equivalent(equiv)


def test_mutmut_is_configured_with_files_that_exist():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]
    for key in ("source_paths", "also_copy", "do_not_mutate", "pytest_add_cli_args_test_selection"):
        for path in conf[key]:
            assert (ROOT / path).exists(), (key, path)
    # every package the kill tests import is copied beside the mutants
    copied = {Path(p).parts[0] for p in conf["also_copy"]}
    assert {"adapters", "reference_model", "conformance", "mutation"} <= copied


DIFFS = '''# adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_7: survived
--- adapters/simulated/queue_manager.py
+++ adapters/simulated/queue_manager.py
@@ -1,3 +1,3 @@
 def _put(self, q):
-    if q.depth() >= q.attrs["MAXDEPTH"] and not self._fault("q-full-ignored"):
+    if q.depth() >= q.attrs["MAXDEPTH"] and not self._fault("XXq-full-ignoredXX"):
         raise MQError(C.MQRC_Q_FULL)

# adapters.dlq_handler.handler.x_run__mutmut_4: survived
--- adapters/dlq_handler/handler.py
+++ adapters/dlq_handler/handler.py
@@ -1,2 +1,2 @@
-    mode = C.MQOO_INPUT_SHARED if "dlq-opens-shared" in self.faults else C.MQOO_INPUT_AS_Q_DEF
+    mode = C.MQOO_INPUT_SHARED if None in self.faults else C.MQOO_INPUT_AS_Q_DEF

# adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_2: survived
--- adapters/simulated/queue_manager.py
+++ adapters/simulated/queue_manager.py
@@ -1,2 +1,2 @@
-    if q.depth() >= q.attrs["MAXDEPTH"] and not self._fault("q-full-ignored"):
+    if q.depth() > q.attrs["MAXDEPTH"] and not self._fault("q-full-ignored"):

# adapters.dlq_handler.handler.x_dest__mutmut_9: survived
--- adapters/dlq_handler/handler.py
+++ adapters/dlq_handler/handler.py
@@ -1,2 +1,2 @@
-    restore = not keep and "dlq-format-not-restored" not in self.faults
+    restore = None
'''


def test_a_mutant_that_only_renames_a_catalogue_fault_is_left_out_and_no_other(tmp_path):
    """A clean queue manager switches no fault on under any name; a change beside the name counts."""
    renamed = score.fault_renamed(DIFFS)
    assert renamed == {"adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_7": score.FAULT_RENAMED,
                       "adapters.dlq_handler.handler.x_run__mutmut_4": score.FAULT_RENAMED}
    results, diffs = tmp_path / "results.txt", tmp_path / "survivors.diff"
    results.write_text(RESULTS, encoding="utf-8")
    diffs.write_text(DIFFS, encoding="utf-8")
    out = io.StringIO()
    assert score.main([str(results), "--diffs", str(diffs)], out=out) == 0
    assert "(3 of 5 killed; 1 equivalent left out)" in out.getvalue()   # put__mutmut_7 was not checked


def test_a_results_or_changes_file_that_is_not_there_is_one_line_and_exit_2(tmp_path, capsys):
    results = tmp_path / "results.txt"
    results.write_text(RESULTS, encoding="utf-8")
    assert score.main([str(tmp_path / "none.txt")], out=io.StringIO()) == 2
    assert score.main([str(results), "--diffs", str(tmp_path / "none.diff")], out=io.StringIO()) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"mutation/score.py: no such file: {tmp_path / 'none.txt'}",
                   f"mutation/score.py: no such file: {tmp_path / 'none.diff'}"]


SOURCE = '''\
def _put(self, q, md, first):
    level = min(md.priority, 9)
    if self._fault("priority-ignored"):
        level = 0
    if q.depth() >= q.attrs["MAXDEPTH"] and not self._fault("q-full-ignored"):
        raise MQError(C.MQRC_Q_FULL)
    if first and q.open and self._fault("q-full-ignored"):
        q.reset()
    expiry = 600 if self._fault("priority-ignored") else -1
    mark = first and self._fault("priority-ignored")
    return level, expiry, mark
'''


def _show(name: str, old: str, new: str) -> str:
    """A ``mutmut show`` of the one-line change of SOURCE's line ``old`` to ``new``."""
    lines = SOURCE.splitlines()
    i = lines.index(old)
    before, after = lines[max(0, i - 3):i], lines[i + 1:i + 4]
    body = [f" {ln}" for ln in before] + [f"-{old}", f"+{new}"] + [f" {ln}" for ln in after]
    return (f"# mod.x__put__mutmut_{name}: survived\n--- mod.py\n+++ mod.py\n"
            f"@@ -{i - len(before) + 1},7 +{i - len(before) + 1},7 @@\n" + "\n".join(body) + "\n")


@pytest.mark.parametrize("old,new,reason", [
    # code that runs only with a fault on
    ("        level = 0", "        level = None", score.FAULT_ONLY),
    ("    expiry = 600 if self._fault(\"priority-ignored\") else -1",
     "    expiry = 601 if self._fault(\"priority-ignored\") else -1", score.FAULT_ONLY),
    # a condition false without a fault, before and after
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",
     "    if first and not q.open and self._fault(\"q-full-ignored\"):", score.FAULT_ONLY),
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",
     "    if (first and q.open and self._fault(\"q-full-ignored\")) and False:", score.FAULT_ONLY),
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",
     "    if first and q.open and self._fault(\"XXq-full-ignoredXX\"):", score.FAULT_RENAMED),
    # what a clean queue manager does
    ("    level = min(md.priority, 9)", "    level = min(md.priority, 10)", None),
    ("    if q.depth() >= q.attrs[\"MAXDEPTH\"] and not self._fault(\"q-full-ignored\"):",
     "    if q.depth() > q.attrs[\"MAXDEPTH\"] and not self._fault(\"q-full-ignored\"):", None),
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",
     "    if first or q.open and self._fault(\"q-full-ignored\"):", None),
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",
     "    if first and q.open and not self._fault(\"q-full-ignored\"):", None),
    ("    if first and q.open and self._fault(\"q-full-ignored\"):",   # a new call ahead of the fault's test
     "    if first and q.reopen() and self._fault(\"q-full-ignored\"):", None),
    ("    mark = first and self._fault(\"priority-ignored\")",        # a value, not a condition: 0 and None differ
     "    mark = None and self._fault(\"priority-ignored\")", None),
    ("    expiry = 600 if self._fault(\"priority-ignored\") else -1",
     "    expiry = 600 if self._fault(\"priority-ignored\") else -2", None),
])
def test_a_change_a_clean_queue_manager_never_runs_is_left_out_and_no_other(old, new, reason):
    found = score.fault_equivalents(_show("1", old, new), source=lambda name: SOURCE,
                                    faults={"priority-ignored", "q-full-ignored"})
    assert found == ({"mod.x__put__mutmut_1": reason} if reason else {})


def test_the_changed_function_is_read_from_the_source():
    text = score.function_source("adapters.simulated.queue_manager.xǁSimulatedQueueManagerǁ_discard__mutmut_3")
    assert text is not None and text.lstrip().startswith("def _discard(")
    assert score.function_source("adapters.simulated.queue_manager.xǁSimulatedQueueManagerǁno_such__mutmut_1") is None


def test_a_change_on_a_continued_line_is_found_in_the_source_whatever_its_indentation():
    """mutmut dedents a method's lines but not the continuation of a line: the change is still placed."""
    method = '''\
    def _select(self, q, after):
        for m in q.messages:
            if after is not None and self._fault("browse-next-skips") \\
                    and self._remaining(q, m) >= 2:
                continue
            return m
'''
    diff = '''# mod.xǁQMǁ_select__mutmut_9: survived
--- mod.py
+++ mod.py
@@ -1,6 +1,6 @@
 def _select(self, q, after):
     for m in q.messages:
         if after is not None and self._fault("browse-next-skips") \\
-                    and self._remaining(q, m) >= 2:
+                    and self._remaining(None, m) >= 2:
             continue
         return m
'''
    found = score.fault_equivalents(diff, source=lambda name: method, faults={"browse-next-skips"})
    assert found == {"mod.xǁQMǁ_select__mutmut_9": score.FAULT_ONLY}
    unguarded = diff.replace('self._fault("browse-next-skips")', 'self.ready()')
    assert score.fault_equivalents(unguarded, source=lambda name: method.replace(
        'self._fault("browse-next-skips")', 'self.ready()'), faults={"browse-next-skips"}) == {}


def test_the_kill_tests_empty_every_cache_of_the_code_under_mutation():
    """mutmut forks each mutant's run from a process that ran the clean tests: a cache filled there would
    answer for the mutant.  Every cache of the mutated code is emptied before each kill test, and every
    module-level dict that the mutated code fills at run time is one of the caches emptied."""
    import ast

    import test_kit_kills
    from adapters.dlq_handler import rules_table
    from adapters.registry import create_adapter
    from reference_model import language as L
    rules_table.read("ACTION(DISCARD)\n")
    adapter = create_adapter("simulated", {})
    adapter.start_case("c", "distributed")
    adapter.execute(L.DefineQueue(queue="Q"))
    from adapters import base
    assert rules_table.read.cache_info().currsize and rules_table._entry.cache_info().currsize
    assert base._HANDLERS   # each class's method for each operation (the mutated classes' among them)
    test_kit_kills.empty_caches()
    assert not rules_table.read.cache_info().currsize and not rules_table._entry.cache_info().currsize
    assert not base._HANDLERS
    listed = set(test_kit_kills.DICT_CACHES)
    for path, text in score._mutated_sources().items():
        tree = ast.parse(text)
        module = ".".join(Path(path).with_suffix("").parts)
        dicts = {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                 for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                 if isinstance(t, ast.Name) and isinstance(n.value, (ast.Dict, ast.Set))}
        filled = {n.value.id for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  for a in ast.walk(f) if isinstance(a, ast.Assign)
                  for n in a.targets if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                  and n.value.id in dicts}
        assert {(module, name) for name in filled} <= listed, (module, filled)


def test_a_function_used_only_where_a_fault_is_on_is_left_out_and_no_other():
    source = '''
class QM:
    def get(self, q):
        if self._fault("race") and q:
            self._slow(q)
        n = self._count(q) if self._fault("other") else 0
        if q and self._fault("race") and self._helper(q):
            pass
        return self._both(q) + n

    def put(self, q):
        if "race" in self.faults:
            return self._both(q)
        return self._common(q)

    def _slow(self, q):
        return self._inner(q)

    def _inner(self, q): return q
    def _count(self, q): return q
    def _helper(self, q): return q
    def _both(self, q): return q
    def _common(self, q): return q
    def _unused(self, q): return q
'''
    found = score.fault_called({"qm.py": source}, {"race", "other"})
    assert found == {"_slow", "_inner", "_count", "_helper"}
    assert score._function_of("adapters.simulated.queue_manager.xǁQMǁ_slow__mutmut_1") == "_slow"
    assert score._function_of("adapters.dlq_handler.rules_table.x__rule__mutmut_32") == "_rule"
    # the simulated queue manager's own: the race faults' helper
    assert "_let_others_run" in score.fault_called(score._mutated_sources())


GUARDED = '''\
def _get(self, q, o, pieces):
    if o & 4 and not self.sync:
        if not self._fault("mark-honoured"):
            raise MQError(2046)
        o |= 2
        o &= ~4
    each = len(pieces) > 1 and self._fault("segment-each")
    lost = next((m for m in q.all()
                 if m.persistent), None) if self._fault("loses") else None
    return o, each, lost
'''


def _shown(source: str, old: list[str], new: str) -> str:
    """A ``mutmut show`` of ``source``'s consecutive lines ``old`` made the one line ``new``."""
    lines = source.splitlines()
    i = lines.index(old[0])
    assert lines[i:i + len(old)] == old
    before, after = lines[max(0, i - 3):i], lines[i + len(old):i + len(old) + 3]
    body = [f" {ln}" for ln in before] + [f"-{ln}" for ln in old] + [f"+{new}"] + [f" {ln}" for ln in after]
    return (f"# mod.x__get__mutmut_1: survived\n--- mod.py\n+++ mod.py\n"
            f"@@ -{i - len(before) + 1},9 +{i - len(before) + 1},8 @@\n" + "\n".join(body) + "\n")


@pytest.mark.parametrize("old,new,reason", [
    # after a guard that raises unless the fault is on
    (["        o &= ~4"], "        o |= ~4", score.FAULT_ONLY),
    (["        o |= 2"], "        o |= 3", score.FAULT_ONLY),
    # a value that is False either way without the fault: only comparisons ahead of its test
    (["    each = len(pieces) > 1 and self._fault(\"segment-each\")"],
     "    each = len(pieces) >= 1 and self._fault(\"segment-each\")", score.FAULT_ONLY),
    # one statement over two lines, made one line by the mutant
    (["    lost = next((m for m in q.all()", "                 if m.persistent), None) if self._fault(\"loses\") else None"],
     "    lost = None if self._fault(\"loses\") else None", score.FAULT_ONLY),
    # what a clean queue manager does
    (["    if o & 4 and not self.sync:"], "    if o & 4 or not self.sync:", None),
    (["    each = len(pieces) > 1 and self._fault(\"segment-each\")"],   # pieces itself, [] and False differ
     "    each = pieces and self._fault(\"segment-each\")", None),
    (["    lost = next((m for m in q.all()", "                 if m.persistent), None) if self._fault(\"loses\") else None"],
     "    lost = next((m for m in q.all() if m.persistent), None) if self._fault(\"loses\") else 0", None),
])
def test_guarded_code_values_false_either_way_and_statements_over_lines_are_judged_too(old, new, reason):
    found = score.fault_equivalents(_shown(GUARDED, old, new), source=lambda name: GUARDED,
                                    faults={"mark-honoured", "segment-each", "loses"})
    assert found == ({"mod.x__get__mutmut_1": reason} if reason else {})
    # without the guard the statements after it run in a clean queue manager
    if old[0].startswith("        o "):
        unguarded = GUARDED.replace('if not self._fault("mark-honoured")', 'if not self.ready()')
        assert score.fault_equivalents(_shown(unguarded, old, new), source=lambda name: unguarded,
                                       faults={"mark-honoured"}) == {}
