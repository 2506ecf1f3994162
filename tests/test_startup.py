"""Start-up (issue 18, item 9): what ``microagg --version`` and ``import microagg`` load.

Structural, not timed: each check runs in a fresh interpreter and reads ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

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
