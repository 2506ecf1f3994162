"""Start-up (issue 18, item 9): what ``microagg --version`` and ``import microagg`` load.

Structural, not timed: each check runs in a fresh interpreter and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("sklearn", "scipy", "numba", "matplotlib", "pandas")

_LOADED = """
import json, sys
sys.argv = ["microagg", *ARGS]
CODE
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _top_level_modules(code: str, *args: str) -> set[str]:
    script = _LOADED.replace("ARGS", repr(list(args))).replace("CODE", code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_version_loads_no_heavy_module() -> None:
    loaded = _top_level_modules("from microagg.cli import main; main()", "--version")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert "typer" not in loaded  # answered before the app is built


def test_version_prints_the_version() -> None:
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert done.stdout.startswith("microagg ")
    assert done.stdout.strip() != "microagg"


def test_import_microagg_and_cli_load_no_heavy_module() -> None:
    loaded = _top_level_modules("import microagg, microagg.cli")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_cli_app_still_has_every_command() -> None:
    script = ("import json, sys, typer.main\n"
              "from microagg.cli import app\n"
              "print(json.dumps(sorted(typer.main.get_command(app).commands)))\n"
              "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    commands, loaded = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    assert {"anonymize", "check", "report", "sweep", "stream", "methods", "datasets",
            "init-schema", "doctor"} <= set(commands)
    assert not set(loaded) & {"sklearn", "scipy", "matplotlib"}


def test_help_lists_the_commands() -> None:
    done = subprocess.run([sys.executable, "-c", "from microagg.cli import main; main()",
                           "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for name in ("anonymize", "check", "sweep", "methods", "doctor"):
        assert f" {name} " in done.stdout, name


# --- each command loads what it uses --------------------------------------------------------

COMMANDS = ("anonymize", "check", "risk", "report", "sweep", "stream", "graph", "series",
            "semantic", "documents", "methods", "datasets", "init-schema", "doctor", "serve")

_RUN = """
import contextlib, io, json, sys
sys.argv = ["microagg", *ARGS]
from microagg.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main()
    except SystemExit as done:
        code = done.code
    else:
        code = 0
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _command(*args: str) -> tuple[int, str, set[str]]:
    """Exit code, output and every module loaded by ``microagg ARGS`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _RUN.replace("ARGS", repr(list(args)))],
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["code"], result["out"], set(result["modules"])


def _top(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command_loads_no_numeric_library(command: str) -> None:
    code, out, modules = _command(command, "--help")
    assert code == 0 and "Usage" in out, out
    assert not _top(modules) & {"numba", "scipy", "sklearn", "matplotlib"}, command


@pytest.fixture
def survey(tmp_path):
    path = tmp_path / "survey.csv"
    rows = [f"{region},{size},{sex},{weight}" for region, size, sex, weight in
            [("a", 1, "f", 10.5), ("a", 2, "m", 12.0), ("b", 1, "f", 8.0), ("b", 1, "f", 9.0),
             ("a", 2, "m", 11.0), ("c", 3, "f", 20.0)]]
    path.write_text("region,size,sex,weight\n" + "\n".join(rows) + "\n")
    return path


def test_risk_without_suda_loads_no_numba_scipy_or_sklearn(survey) -> None:
    code, out, modules = _command("risk", str(survey), "-q", "region,size,sex",
                                  "--weight", "weight", "--no-suda")
    assert code == 0 and "global risk" in out, out
    assert not _top(modules) & {"numba", "scipy", "sklearn", "matplotlib"}
    assert "microagg.metrics.survey_risk" in modules


def test_risk_loads_numba_for_suda_only(survey) -> None:
    code, out, modules = _command("risk", str(survey), "-q", "region,size,sex",
                                  "--weight", "weight")
    assert code == 0 and "SUDA2" in out, out
    assert "numba" in _top(modules)  # the SUDA2 kernel
    assert not _top(modules) & {"sklearn", "matplotlib"}
    unused = {"scipy.spatial", "scipy.sparse", "microagg.metrics.clustering",
              "microagg.metrics.risk", "microagg.partition"}
    assert not modules & unused, sorted(modules & unused)

