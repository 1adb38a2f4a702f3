"""Mutation testing as a habit: a fixed sample of mutants of the checks, each of which a meta-test must kill.

``tools.mutate`` breaks one check at a time in every package it covers (``tools.mutants.TARGETS``) and
runs the meta-tests that execute it. Here CI runs a fixed sample of those mutants (a few
minutes on 2 cores); a survivor not listed as equivalent fails the run, so a new check
that no meta-test proves shows in review. The whole run is
``python -m zarr_jpeg_conformance.tools.mutate``. The other tests prove the tool: the
operators produce the mutants the hand-made search of issue 18 found, keys do not move
with unrelated edits, the equivalents file names current mutants, and the runner reports
a survivor with where it is, what changed and which tests ran.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.tools import mutate, mutation_map
from zarr_jpeg_conformance.tools.mutants import OPERATORS, Mutant, all_mutants, mutants_of

ROOT = Path(__file__).resolve().parents[1]
#: The CI sample, drawn from the mutants of the code as it is, and its time box in seconds
#: (a mutant started inside it may finish up to a minute later).
SAMPLE, SEED, BUDGET = 12, 18, 240


@pytest.fixture(scope="module")
def mutants() -> list[Mutant]:
    return all_mutants(ROOT, mutate.requirement_ids())


def _keys(source: str, path: str = "core/x.py") -> set[str]:
    return {m.key for m in mutants_of(source.encode(), path, ["JPEG-A-01", "JPEG-A-02"])}


def test_every_operator_has_mutants_in_the_checks(mutants: list[Mutant]) -> None:
    assert {m.operator for m in mutants} == set(OPERATORS)


def test_the_mutants_issue_18_found_by_hand_are_made(mutants: list[Mutant]) -> None:
    keys = {m.key for m in mutants}
    assert "core/markers.py::<module>::number::12 => 11" in keys  # ADOBE_MIN_PAYLOAD
    assert any(k.startswith("core/markers.py::_parse_dht::deleted::walk.problem(") and "256" in k for k in keys)
    # A refusal of what is required let through: the hand search broke `call`, a helper no suite uses any more
    # (removed); the refusal helper the suites share is judge_refusal.
    assert any(k.startswith("judging/checks.py::judge_refusal::deleted::judge.require(False, requirement") for k in keys)
    assert any(k.startswith("judging/checks.py::owned::true-condition::") for k in keys)


def test_operators_on_a_small_check() -> None:
    keys = _keys(
        'def check(judge, x, p):\n'
        '    """Docstrings and f-strings are not mutated."""\n'
        '    if x < 3 and p:\n'
        '        raise ValueError(f"x is {x + 1}")\n'
        '    judge.require(x != 0.5, "JPEG-A-01", "obs")\n'
        '    judge.finish(Outcome.FAIL, "m")\n'
        '    return x >= 2\n'
    )
    assert keys == {
        "core/x.py::check::negate::x < 3 and p => not (x < 3 and p)",
        "core/x.py::check::and-or::x < 3 and p => x < 3 or p",
        "core/x.py::check::compare::x < 3 => x <= 3",
        "core/x.py::check::number::3 => 4",
        "core/x.py::check::number::3 => 2",
        'core/x.py::check::raise::raise ValueError(f"x is {x + 1}") => pass',
        'core/x.py::check::deleted::judge.require(x != 0.5, "JPEG-A-01", "obs") => pass',
        "core/x.py::check::true-condition::x != 0.5 => True",
        "core/x.py::check::compare::x != 0.5 => x == 0.5",
        "core/x.py::check::number::0.5 => 1.0",
        "core/x.py::check::number::0.5 => 0.25",
        "core/x.py::check::requirement::\"JPEG-A-01\" => 'JPEG-A-02'",
        'core/x.py::check::deleted::judge.finish(Outcome.FAIL, "m") => pass',
        "core/x.py::check::outcome::Outcome.FAIL => Outcome.UNSUPPORTED",
        "core/x.py::check::forced-return::x >= 2 => True",
        "core/x.py::check::forced-return::x >= 2 => False",
        "core/x.py::check::compare::x >= 2 => x > 2",
        "core/x.py::check::number::2 => 3",
        "core/x.py::check::number::2 => 1",
    }


def test_tables_of_numbers_and_lookup_keys_are_data_not_checks() -> None:
    assert _keys("SIZES = [(1, 1), (7, 13), (1, 37), (29, 1)]\nFLOORS = {('gray', 50): 28.0}\n") == {
        "core/x.py::<module>::number::28.0 => 56.0", "core/x.py::<module>::number::28.0 => 14.0",
    }


def test_keys_survive_unrelated_edits_and_number_repeats() -> None:
    source = "def f(a):\n    return a > 1 or a > 1\n"
    keys = _keys(source)
    assert "core/x.py::f::compare::a > 1 => a >= 1 #2" in keys
    assert _keys("import os\n\n\n# moved down\n" + source) == keys


def test_every_mutant_applies_to_code_that_compiles_and_differs(mutants: list[Mutant]) -> None:
    sources = {m.path: (ROOT / m.path).read_bytes() for m in mutants}
    for m in mutants[::37]:
        mutated = m.apply(sources[m.path])
        assert mutated != sources[m.path]
        compile(mutated, m.path, "exec")


def test_equivalents_name_current_mutants_with_a_reason(mutants: list[Mutant]) -> None:
    listed = json.loads((ROOT / mutate.EQUIVALENTS_FILE).read_text(encoding="utf-8"))["equivalent"]
    keys = {m.key for m in mutants}
    stale = [e["key"] for e in listed if e["key"] not in keys]
    assert not stale, f"{mutate.EQUIVALENTS_FILE} lists mutants the code no longer has (remove them): {stale}"
    assert all(len(e["reason"]) > 20 for e in listed), "every equivalent mutant says why it cannot change an outcome"
    assert len({e["key"] for e in listed}) == len(listed)


def test_module_level_limits_run_the_tests_of_the_functions_that_use_them(mutants: list[Mutant]) -> None:
    """ADOBE_MIN_PAYLOAD: the tests of _parse_app, which reads it, and those of the module's own test file."""
    table = {"functions": {"core/markers.py::_parse_app": ["tests/test_scans.py::test_a"],
                           "core/markers.py::_parse_dht": ["tests/test_scans.py::test_b", "tests/test_markers.py::test_c"]},
             "durations": {}}
    adobe = next(m for m in mutants if m.key == "core/markers.py::<module>::number::12 => 11")
    assert mutate.Selector(ROOT, table).tests(adobe) == (["tests/test_markers.py::test_c", "tests/test_scans.py::test_a"], [])


def test_the_modules_of_a_subpackage_are_mutated_and_a_folder_that_is_no_package_is_not(tmp_path: Path,
                                                                                     mutants: list[Mutant]) -> None:
    """``judging/t81/`` is a package inside a target: its modules are checks like any other (they were left out when
    only a target's own folder was read). A folder without ``__init__.py`` (a harness's sources) holds none."""
    for folder in ("judging", "judging/t81", "judging/node_modules/x"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "check.py").write_text("def ok(x):\n    return x < 3\n")
    (tmp_path / "judging" / "t81" / "__init__.py").write_text('"""A subpackage."""\n')
    found = {m.path for m in all_mutants(tmp_path, [])}
    assert found == {"judging/check.py", "judging/t81/check.py"}
    assert any(m.path.startswith("judging/t81/") for m in mutants)


def test_changed_since_names_the_files_committed_or_edited_since_a_revision_and_a_bad_revision_is_said(tmp_path: Path) -> None:
    """``--changed-since REV`` samples new code: the files that differ from REV, committed since or edited now, and no
    other; a revision git does not know is a usage error naming it, not a traceback."""
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    for name in ("old.py", "committed.py", "edited.py"):
        (tmp_path / "core").mkdir(exist_ok=True)
        (tmp_path / "core" / name).write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "base")
    (tmp_path / "core" / "committed.py").write_text("x = 2\n")
    git("commit", "-qam", "since")
    (tmp_path / "core" / "edited.py").write_text("x = 3\n")
    assert mutate.changed_files(tmp_path, "HEAD~1") == {"core/committed.py", "core/edited.py"}
    with pytest.raises(mutate.GitError, match="--changed-since nosuch: git cannot compare with it"):
        mutate.changed_files(tmp_path, "nosuch")


def test_a_class_attribute_runs_the_tests_of_the_methods_that_read_it(tmp_path: Path) -> None:
    """A constant in a class body is read through ``self``: the tests of those methods can notice it,
    not only the tests that construct the class (issue 28: such mutants used to meet only the latter)."""
    source = ("class Judge:\n    LIMIT = 3\n\n    def check(self, x):\n        return x < self.LIMIT\n\n\n"
              "def make():\n    return Judge()\n\n\ndef build():\n    class Local:\n        SIZE = 8\n    return Local\n")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text(source)
    table = {"functions": {"core/x.py::Judge.check": ["tests/test_y.py::test_check"], "core/x.py::make": ["tests/test_y.py::test_make"],
                           "core/x.py::build": ["tests/test_y.py::test_build"]}, "durations": {}}
    found = {m.before: mutate.Selector(tmp_path, table).tests(m)[0] for m in mutants_of(source.encode(), "core/x.py", [])
             if m.operator == "number"}
    assert found["3"] == ["tests/test_y.py::test_check", "tests/test_y.py::test_make"]
    # a class inside a function runs when the function does
    assert found["8"] == ["tests/test_y.py::test_build"]


def test_a_constant_a_module_table_is_built_from_runs_the_tests_that_read_the_table(tmp_path: Path) -> None:
    """A test that reads a module's table (``ARRAYS["ycbcr-420"]``) runs none of the module's functions, so coverage
    ties it to nothing: a mutant of a constant the table is built from (``_420``) never met it and survived, though
    the test kills it (issue 28's last survivor of the 400-mutant sample)."""
    source = "_420 = [[2, 2], [1, 1]]\nARRAYS = {'ycbcr-420': _420}\nOTHER = 3\n\n\ndef spec(name):\n    return ARRAYS[name]\n"
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_reads.py").write_text(
        "from zarr_jpeg_conformance.core.x import ARRAYS\n\n\ndef test_table():\n    assert ARRAYS['ycbcr-420'][0] == [2, 2]\n\n\n"
        "def test_other():\n    assert True\n")
    (tmp_path / "tests" / "test_elsewhere.py").write_text("def test_table():\n    ARRAYS = {}\n    assert not ARRAYS\n")
    read = ["tests/test_reads.py::test_table[a]", "tests/test_reads.py::test_table[b]"]
    table = {"functions": {"core/x.py::spec": ["tests/test_spec.py::test_spec"]},
             "durations": dict.fromkeys([*read, "tests/test_reads.py::test_other", "tests/test_elsewhere.py::test_table"], 0.1)}
    found = {m.before: mutate.Selector(tmp_path, table).tests(m)[0] for m in mutants_of(source.encode(), "core/x.py", [])
             if m.operator == "number"}
    # the users of the table and its readers in a file that imports the module; not a test of another file's own ARRAYS
    assert set(found["2"]) == {"tests/test_spec.py::test_spec", *read}
    assert found["3"] == ["tests/test_spec.py::test_spec"]  # OTHER, read by nobody: the module's tests, as before


def test_a_result_is_reused_only_while_its_module_tests_and_helpers_are_unchanged(tmp_path: Path) -> None:
    """``--results`` used to reuse a survivor after the body of the test that should kill it changed."""
    (tmp_path / "tests").mkdir()
    files = {"tests/test_y.py": "def test_a():\n    pass\n", "tests/test_other.py": "def test_b():\n    pass\n",
             "tests/wrong_things.py": "X = 1\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    tests = ["tests/test_y.py::test_a"]
    before = mutate._fingerprint(b"code", tests, tmp_path)
    assert mutate._fingerprint(b"code", tests, tmp_path) == before
    (tmp_path / "tests/test_other.py").write_text("def test_b():\n    assert 0\n")  # not among the tests run
    assert mutate._fingerprint(b"code", tests, tmp_path) == before
    for name, text in (("tests/test_y.py", "def test_a():\n    assert 1\n"), ("tests/wrong_things.py", "X = 2\n")):
        (tmp_path / name).write_text(text)
        assert mutate._fingerprint(b"code", tests, tmp_path) != before, name
        before = mutate._fingerprint(b"code", tests, tmp_path)
    assert mutate._fingerprint(b"other code", tests, tmp_path) != before
    assert mutate._fingerprint(b"code", [*tests, "tests/test_other.py::test_b"], tmp_path) != before


def test_a_kill_stands_on_its_killer_and_a_survivor_on_every_test(tmp_path: Path) -> None:
    """A sitting after an edit of one test file ran again every mutant with a test there, the kills of other files'
    tests too: hours of a long sample decided again for nothing."""
    (tmp_path / "tests").mkdir()
    for name in ("test_x.py", "test_y.py", "helper.py"):
        (tmp_path / "tests" / name).write_text("# v1\n")
    m = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])[0]
    tests = ["tests/test_x.py::t", "tests/test_y.py::u"]
    olds = {status: {"status": status, "seconds": 1.0, "killer": killer, "stages_done": 1, "ran": ran, "retries": 0,
                     "fingerprint": mutate._fingerprint(b"code", mutate.stands_on(status, killer, ran, tests), tmp_path)}
            for status, killer, ran in (("killed", "tests/test_x.py::t", []), ("survived", None, tests),
                                        ("pending", None, ["tests/test_x.py::t"]))}

    def reused(status: str) -> bool:
        r = mutate.Result(m, tests)
        mutate.take_up(r, olds[status], functools.partial(mutate._fingerprint, b"code", texts=mutate.test_texts(tmp_path)))
        return r.status == status

    assert all(reused(s) for s in olds)
    (tmp_path / "tests/test_y.py").write_text("# v2\n")  # a test the kill and the pending one did not stand on
    assert [s for s in olds if reused(s)] == ["killed", "pending"]
    (tmp_path / "tests/test_x.py").write_text("# v2\n")  # the killer's file
    assert not any(reused(s) for s in olds)
    (tmp_path / "tests/test_x.py").write_text("# v1\n")
    (tmp_path / "tests/helper.py").write_text("# v2\n")  # a helper: every result stands on it
    assert not any(reused(s) for s in olds)


def test_a_run_stopped_by_its_time_box_is_taken_up_where_it_stopped() -> None:
    m = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])[0]
    for status, stages, reused in (("pending", 1, True), ("survived", 2, True), ("killed", 1, True), ("not run", 0, False)):
        r = mutate.Result(m, ["tests/test_x.py::t", "tests/test_y.py::u"], fingerprint="abc")
        mutate.take_up(r, {"fingerprint": "abc", "status": status, "seconds": 3.0, "killer": None, "stages_done": stages,
                           "ran": ["tests/test_x.py::t"]})
        assert (r.status, r.stages_done) == ((status, stages) if reused else ("not run", 0))
        # the tests it survived are kept: the run takes up the others, however the stages are split by then
        assert r.ran == (["tests/test_x.py::t"] if reused else [])
    r = mutate.Result(m, ["tests/test_x.py::t"], fingerprint="abc")
    mutate.take_up(r, {"fingerprint": "abc", "status": "pending", "seconds": 3.0, "killer": None, "stages_done": 1})
    assert (r.status, r.ran) == ("not run", [])  # which tests it survived is not known: started again
    r = mutate.Result(m, ["tests/test_x.py::t"], fingerprint="abc")
    mutate.take_up(r, {"fingerprint": "changed", "status": "survived", "seconds": 3.0, "killer": None, "stages_done": 2})
    assert (r.status, r.stages_done) == ("not run", 0)
    # a timeout taken for a kill before timeouts were checked against the tests without the mutant is run again
    for old, reused in (({}, False), ({"retries": 0}, True)):
        r = mutate.Result(m, ["tests/test_x.py::t"], fingerprint="abc")
        mutate.take_up(r, {"fingerprint": "abc", "status": "timeout", "seconds": 60.0, "killer": None, "stages_done": 1, **old})
        assert (r.status == "timeout") == reused


def test_a_timeout_kills_only_where_the_tests_without_the_mutant_finish_in_half_the_time() -> None:
    """A machine busy with other work makes tests outlast their timeout, mutant or not: that is no kill."""
    m = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])[0]

    class Control:
        def __init__(self, seconds: float, timed_out: bool) -> None:
            self.reply = {"rc": 0, "seconds": seconds, "timed_out": timed_out}

        def run(self, file: object, source: object, tests: list[str], timeout: float, name: str) -> dict[str, object]:
            assert file is None and source is None  # the same tests, without the mutant
            return self.reply

    r = mutate.Result(m, ["tests/test_x.py::t"])
    assert mutate._slow_for_itself(Control(10.0, False), r.tests, 60.0, r) and r.retries == 0  # type: ignore[arg-type]
    for control in (Control(60.0, True), Control(45.0, False)):
        r = mutate.Result(m, ["tests/test_x.py::t"])
        assert not mutate._slow_for_itself(control, r.tests, 60.0, r) and r.retries == 1  # type: ignore[arg-type]
        assert "tried again with twice the time" in r.notes[-1]
    out = io.StringIO()
    mutate.summary([mutate.Result(m, ["t"], status="killed"), mutate.Result(m, ["t"], status="slow")], 1.0, out)
    assert "killed/total: 1/1 (100.0 %)" in out.getvalue() and "1 undecided: their tests time out without them too" in out.getvalue()


def _map_of(tmp_path: Path, lib: str, tests: str) -> dict[str, Any]:
    """The map of a project of one module and one test file, measured in a process of its own, as written to and
    read from its file."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "lib.py").write_text(lib)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lib.py").write_text(tests)
    code = ("import json, sys; from pathlib import Path; from zarr_jpeg_conformance.tools import mutation_map; "
            "t = mutation_map.build(Path.cwd(), ['tests']); mutation_map.write(Path.cwd(), t); "
            "print(json.dumps(mutation_map.load(Path.cwd())))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    table: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return table


def test_the_map_charges_a_shared_fixture_to_every_test_that_uses_it(tmp_path: Path) -> None:
    """A module-scoped fixture runs inside the first of its tests; a mutant of what it runs must still meet the others."""
    functions = _map_of(tmp_path, "def build():\n    return 3\n\n\ndef used():\n    return 4\n",
                        "import pytest\nfrom core import lib\n\n\n@pytest.fixture(scope='module')\ndef made():\n"
                        "    return lib.build()\n\n\ndef test_a(made):\n    assert made == 3\n\n\ndef test_b(made):\n"
                        "    assert made\n\n\ndef test_c():\n    assert lib.used() == 4\n")["functions"]
    assert functions["core/lib.py::build"] == ["tests/test_lib.py::test_a", "tests/test_lib.py::test_b"]
    assert functions["core/lib.py::used"] == ["tests/test_lib.py::test_c"]


def test_a_shared_fixtures_time_is_charged_to_every_test_that_uses_it_once_per_run(tmp_path: Path) -> None:
    """Charged to the test it was set up in, a module fixture of minutes (the attribution meta-tests' suite runs) made
    its other tests look free: a "cheap" first stage of a mutant set it up again and outlasted its timeout, mutant or
    not, and the mutant was left undecided as too slow for the machine."""
    table = _map_of(tmp_path, "def build():\n    return 3\n",
                    "import time\nimport pytest\nfrom core import lib\n\n\n@pytest.fixture(scope='module')\n"
                    "def made():\n    time.sleep(0.8)\n    return lib.build()\n\n\n"
                    "def test_a(made):\n    assert made == 3\n\n\ndef test_b(made):\n    assert made\n\n\n"
                    "def test_c():\n    assert lib.build() == 3\n")
    a, b, c = (f"tests/test_lib.py::test_{n}" for n in "abc")
    assert max(table["durations"][t] for t in (a, b, c)) < 0.5, table["durations"]  # the sleep is nobody's own time
    (name, fixture), = table["fixtures"].items()
    assert name.endswith("::made") and fixture["seconds"] >= 0.75 and fixture["users"] == [a, b]
    selector = mutate.Selector(tmp_path, table)
    assert selector.alone(b) >= 0.75 and selector.alone(c) < 0.5
    assert 0.75 <= selector.cost([a, b]) < 1.5  # set up once for both
    assert selector.stages([c, a, b], "core/lib.py")[0][0] == c
    # a test whose fixture a run sets up anyway joins that run rather than set it up again in a later one
    dear = {"tests/test_x.py::quick": 0.1, "tests/test_y.py::dear": 30.0, "tests/test_y.py::more": 0.0, "tests/test_y.py::own": 40.0}
    shared = {"fixture:tests/test_y.py::suite": {"seconds": 500.0, "users": ["tests/test_y.py::dear", "tests/test_y.py::more",
                                                                             "tests/test_y.py::own"]}}
    selector = mutate.Selector(tmp_path, {"functions": {}, "durations": dear, "fixtures": shared})
    assert selector.stages(sorted(dear, key=selector.alone), "core/x.py") == [
        ["tests/test_x.py::quick"], ["tests/test_y.py::more", "tests/test_y.py::dear", "tests/test_y.py::own"]]
    assert selector.timeout(selector.stages(sorted(dear, key=selector.alone), "core/x.py")[1]) == mutate.TIMEOUT_BASE + mutate.TIMEOUT_FACTOR * 570
    # a partial measurement of another file keeps the fixture; one of this file replaces it
    other = {"durations": {"tests/test_z.py::t": 0.1}, "fixtures": {}, "functions": {"core/lib.py::build": ["tests/test_z.py::t"]},
             "not_passing": []}
    assert mutation_map.merge(table, other, ["tests/test_z.py"])["fixtures"][name]["users"] == [a, b]
    assert mutation_map.merge(table, {**other, "durations": {a: 0.1}}, ["tests/test_lib.py"])["fixtures"] == {}


def test_the_first_run_of_a_mutant_is_the_cheapest_tests_of_the_files_that_test_it_most() -> None:
    durations = {"tests/test_a.py::t1": 0.1, "tests/test_a.py::t2": 20.0, "tests/test_a.py::t3": 0.15,
                 "tests/test_b.py::t1": 0.2, "tests/test_b.py::t2": 0.3, "tests/test_b.py::t3": 0.35,
                 "tests/test_c.py::t1": 0.1, "tests/test_c.py::t2": 0.4}
    selector = mutate.Selector(ROOT, {"functions": {}, "durations": durations})
    tests = sorted(durations, key=lambda t: durations[t])
    first, breadth, rest = selector.stages(tests)
    assert set(first) == {"tests/test_a.py::t1", "tests/test_a.py::t3", *(f"tests/test_b.py::t{i}" for i in (1, 2, 3))}
    # a survivor then meets the cheapest test of every other file, before the rest
    assert breadth == ["tests/test_c.py::t1"]
    assert set(rest) == {"tests/test_c.py::t2", "tests/test_a.py::t2"}
    # the module's package's test file comes first, though other files have more of its tests
    first = selector.stages(tests, "c/x.py")[0]
    assert {t.split("::")[0] for t in first} == {"tests/test_c.py", "tests/test_a.py"}


def test_a_survivor_meets_the_cheap_tests_of_other_files_before_their_dear_ones() -> None:
    """Another file's cheapest test of a function may be a whole suite run: the breadth run took it together with a
    meta-test of a tenth of a second that kills the mutant, and the time box ended before either was decided."""
    durations = {"tests/test_own.py::t": 0.1, "tests/test_edges.py::t": 0.1, "tests/test_attribution.py::t": 240.0,
                 "tests/test_attribution.py::u": 300.0}
    selector = mutate.Selector(ROOT, {"functions": {}, "durations": durations})
    stages = selector.stages(sorted(durations, key=durations.__getitem__), "core/own.py")
    assert stages == [["tests/test_own.py::t"], ["tests/test_edges.py::t"], ["tests/test_attribution.py::t"],
                      ["tests/test_attribution.py::u"]]


def test_a_pending_mutant_whose_next_stage_costs_least_runs_first() -> None:
    """First come, first served, two stages of minutes held both workers while mutants with a second of
    tests left waited, undecided when the time box ended."""
    durations = {"tests/test_a.py::quick": 0.1, "tests/test_b.py::slow": 300.0, "tests/test_c.py::mid": 5.0}
    selector = mutate.Selector(ROOT, {"functions": {}, "durations": durations})
    m = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])[0]
    pending = {name: mutate.Result(m, sorted(durations, key=durations.__getitem__), ran=list(ran)) for name, ran in (
        ("slow-left", ["tests/test_a.py::quick", "tests/test_c.py::mid"]),  # only the 300 s test left
        ("mid-left", ["tests/test_a.py::quick", "tests/test_b.py::slow"]),
        ("quick-left", ["tests/test_c.py::mid", "tests/test_b.py::slow"]))}
    waiting = mutate.Cheapest(selector)
    for r in pending.values():  # in the worst order
        waiting.put(r)
    taken = [waiting.get_nowait() for _ in pending]
    assert [next(n for n, r in pending.items() if r is t) for t in taken] == ["quick-left", "mid-left", "slow-left"]
    assert waiting.empty()


def test_a_survivor_is_reported_with_where_what_and_the_tests_that_ran() -> None:
    m = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])[0]
    killed = mutate.Result(m, ["tests/test_x.py::test_f"], status="killed")
    survivor = mutate.Result(m, ["tests/test_x.py::test_g"], status="survived")
    out = io.StringIO()
    assert mutate.summary([killed, survivor], 1.0, out) == 1
    text = out.getvalue()
    assert "core/x.py:2 [f] forced-return: a > 1 => True" in text
    assert "ran 1 tests: tests/test_x.py::test_g" in text
    assert "killed/total: 1/2 (50.0 %)" in text
    listed = mutate.Result(m, ["tests/test_x.py::test_g"], status="survived", equivalent="cannot change an outcome")
    assert mutate.summary([killed, listed], 1.0, io.StringIO()) == 0


def test_the_ci_sample_is_drawn_by_key_so_an_edit_elsewhere_does_not_redraw_it(mutants: list[Mutant]) -> None:
    """Issue 28: dropping quality 1 from the bitstream suite's qualities redrew the whole sample (the draw took
    positions in the population); drawn by the keys' ranks, only a new mutant that ranks lower can enter it."""
    sample = {m.key for m in mutate.choose(mutants, {}, SAMPLE, SEED)}
    edited = "suites/test_bitstream.py"
    source = (ROOT / edited).read_bytes()
    assert b"QUALITIES = [1, 50, 90, 100]" in source
    after = mutants_of(source.replace(b"QUALITIES = [1, 50, 90, 100]", b"QUALITIES = [50, 90, 100]"), edited, mutate.requirement_ids())
    population = [m for m in mutants if m.path != edited] + after
    assert len(population) < len(mutants)
    redrawn = {m.key for m in mutate.choose(population, {}, SAMPLE, SEED)}
    removed = {m.key for m in mutants if m.path == edited} - {m.key for m in after}
    assert sample - removed <= redrawn and len(redrawn) == SAMPLE
    # A module with no mutant in the sample loses half its mutants, or gains some: nothing else is redrawn.
    drawn = {m.path for m in mutants if m.key in sample}
    other = next(p for p in sorted({m.path for m in mutants}) if p not in drawn)
    fewer = [m for i, m in enumerate(mutants) if m.path != other or i % 2]
    assert {m.key for m in mutate.choose(fewer, {}, SAMPLE, SEED)} == sample
    extra = [Mutant(other, "f", "number", f"{n}", f"{n + 1}", 1, 0, 1, "0") for n in range(200)]
    grown = {m.key for m in mutate.choose(mutants + extra, {}, SAMPLE, SEED)}
    entered = grown - sample
    assert entered <= {m.key for m in extra} and grown - entered <= sample and len(grown) == SAMPLE


def test_a_survivor_new_to_the_recorded_sample_is_reported_as_new(tmp_path: Path) -> None:
    old = mutants_of(b"def f(a):\n    return a > 1\n", "core/x.py", [])
    new = mutants_of(b"def f(a):\n    return a > 1\n\n\ndef g(b):\n    return b < 2\n", "core/x.py", [])
    (tmp_path / "tests").mkdir()
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text("def f(a):\n    return a > 1\n\n\ndef g(b):\n    return b < 2\n")
    mutate.record_sample(tmp_path, old, len(old), 5)
    assert mutate.recorded_sample(tmp_path, len(old), 5) == {m.key for m in old}
    assert mutate.recorded_sample(tmp_path, len(old), 6) is None  # another draw: nothing to compare with
    survivors = mutate.run(tmp_path, new, mutate.Selector(tmp_path, {"functions": {}, "durations": {}}), {}, jobs=1,
                           budget=None, baseline="none", out=io.StringIO(), recorded={m.key for m in old})
    notes = {r.mutant.key: r.notes for r in survivors}
    assert all(not any(n.startswith("new:") for n in notes[m.key]) for m in old)
    fresh = [k for k in notes if k.startswith("core/x.py::g::")]
    assert fresh and all(any(n.startswith("new:") for n in notes[k]) for k in fresh)
    out = io.StringIO()
    mutate.summary([mutate.Result(r.mutant, [], status="no tests", notes=r.notes) for r in survivors], 1.0, out)
    assert "note: new: not in the recorded sample" in out.getvalue()


def test_the_recorded_sample_is_the_current_draw_or_grew_by_new_mutants(mutants: list[Mutant]) -> None:
    """tests/mutation-sample.json holds the CI sample's keys; a key it lists that is no longer drawn means the
    draw changed for old mutants (rerun `mutate sample --sample 12 --seed 18` if that was meant)."""
    recorded = mutate.recorded_sample(ROOT, SAMPLE, SEED)
    assert recorded is not None, f"{mutate.SAMPLE_FILE} records no sample of {SAMPLE} with seed {SEED}"
    drawn = {m.key for m in mutate.choose(mutants, mutate.load_equivalents(ROOT), SAMPLE, SEED)}
    gone = recorded - drawn
    assert all(k not in {m.key for m in mutants} or k in mutate.load_equivalents(ROOT) or any(
        mutate.rank(n, SEED) < mutate.rank(k, SEED) for n in drawn - recorded) for k in gone), gone


def test_the_sample_of_mutants_is_killed() -> None:
    """The CI sample: every drawn mutant of the checks that ran is killed by a meta-test (or listed as equivalent)."""
    command = ["--sample", str(SAMPLE), "--seed", str(SEED), "--budget", str(BUDGET)]
    done = subprocess.run([sys.executable, "-m", "zarr_jpeg_conformance.tools.mutate", *command],
                          capture_output=True, text=True, timeout=BUDGET + 600, check=False)
    assert done.returncode == 0, f"mutate {' '.join(command)}:\n" + done.stdout[-8000:] + done.stderr[-3000:]
    figure = re.search(r"^killed/total: (\d+)/(\d+)", done.stdout, re.MULTILINE)
    assert figure and int(figure.group(1)) == int(figure.group(2)) > 0, done.stdout[-3000:]
