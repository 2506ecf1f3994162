"""The package loads lazily (PEP 562): importing it, or its partitioners, stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "sklearn")


def _fresh(code: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter; it leaves a JSON object on its last output line."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_import_partition_loads_neither_pandas_nor_sklearn() -> None:
    loaded = _fresh(
        "import json, sys\n"
        "import microagg.partition\n"
        f"print(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))\n"
    )
    assert loaded == dict.fromkeys(HEAVY, False)


def test_import_microagg_is_cheap_and_names_load_on_access() -> None:
    result = _fresh(
        "import json, sys\n"
        "import microagg\n"
        "before = {m: m in sys.modules for m in ('pandas', 'sklearn', 'microagg.release')}\n"
        "anonymize = microagg.anonymize\n"
        "from microagg import Release, anonymize as again\n"
        "print(json.dumps({'before': before, 'same': anonymize is again,\n"
        "                  'callable': callable(anonymize), 'release': Release.__name__}))\n"
    )
    assert result["before"] == {"pandas": False, "sklearn": False, "microagg.release": False}
    assert result["same"] is True
    assert result["callable"] is True
    assert result["release"] == "Release"


def test_public_names_resolve_and_are_listed() -> None:
    import microagg

    listed = dir(microagg)
    for name in microagg.__all__:
        assert name in listed
        assert getattr(microagg, name) is not None
    assert microagg.PARTITIONERS is microagg.partition.PARTITIONERS
    assert isinstance(microagg.__version__, str)


def test_unknown_attribute_raises_attribute_error() -> None:
    import microagg

    with pytest.raises(AttributeError, match="module 'microagg' has no attribute 'nope'"):
        microagg.nope  # noqa: B018 - the access is the test
