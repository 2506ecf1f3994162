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


DOMAIN = ("microagg.documents", "microagg.partition.fuzzy", "microagg.semantic", "microagg.series")
"""The domain packages, which the numeric core never imports."""

NUMERIC_CORE = ("microagg.partition", "microagg.models", "microagg.metrics",
                "microagg.aggregate.aggregators", "microagg.aggregate.registry", "microagg.bounds")

_LOADED = (
    "import json, sys\n"
    "import {module}\n"
    "print(json.dumps({{'microagg': sorted(m for m in sys.modules if m.startswith('microagg')),\n"
    "                   'top': sorted({{m.split('.')[0] for m in sys.modules}})}}))\n"
)


@pytest.mark.parametrize("module", NUMERIC_CORE)
def test_the_numeric_core_imports_no_pandas_and_no_domain_package(module: str) -> None:
    loaded = _fresh(_LOADED.format(module=module))
    assert "pandas" not in loaded["top"]
    assert not set(DOMAIN) & set(loaded["microagg"]), loaded["microagg"]


def test_import_partition_loads_its_registry_only() -> None:
    loaded = _fresh(_LOADED.format(module="microagg.partition"))
    ours = loaded["microagg"]
    assert len(ours) < 15, ours
    assert not {"pandas", "scipy", "sklearn", "numba"} & set(loaded["top"])
    assert not set(DOMAIN) & set(ours), ours


def test_a_partitioner_loads_on_first_use_and_keeps_its_name() -> None:
    result = _fresh(
        "import json, sys\n"
        "from microagg.partition import PARTITIONERS\n"
        "entry = PARTITIONERS['mhm-npn']\n"
        "before = 'microagg.partition.sorting' in sys.modules\n"
        "function = entry.function\n"
        "after = 'microagg.partition.sorting' in sys.modules\n"
        "import microagg.partition.mdav, microagg.partition.top_down\n"
        "from microagg.partition import mdav, top_down, mhm\n"
        "print(json.dumps({'before': before, 'after': after, 'target': entry.target,\n"
        "    'bound': function.keywords, 'same': function is entry.function,\n"
        "    'mhm': function.func is mhm, 'names': [mdav.__name__, top_down.__name__],\n"
        "    'callable': callable(mdav) and callable(top_down)}))\n"
    )
    assert result == {"before": False, "after": True, "target": "microagg.partition.sorting:mhm",
                      "bound": {"ordering": "npn"}, "same": True, "mhm": True,
                      "names": ["mdav", "top_down"], "callable": True}


def test_every_public_name_of_partition_resolves() -> None:
    import microagg.partition as partition

    for name in partition.__all__:
        assert name in dir(partition)
        assert getattr(partition, name) is not None
    assert partition.PARTITIONERS["mdav"].function is partition.mdav
    assert partition.PARTITIONERS["tfrp1"].function.keywords == {"stage": 1}
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        partition.nope  # noqa: B018 - the access is the test


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
