"""Screenshots of the workbench (issue 20): ``docs/images/workbench-<step>.png``.

    python benchmarks/workbench_screenshots.py [--out docs/images]

Starts ``microagg serve`` and drives Debian's Chromium with Playwright through the same
steps as ``tests/web/test_browser.py`` (the bundled survey uploaded as a CSV, its roles set,
then each later step the workbench has), saving a 1200x800 screenshot of each step (a whole
page where it is longer), then the three-step plan of ``tests/web/plan_browser_flow.py``:
the plan builder, its Result page with the verdict and each step's figures, the undone
step and its Export page (``workbench-plan-*.png``), then the Hierarchies page with a group
typed and previewed (``workbench-hierarchies.png``). Needs
Chromium on the PATH and the dev extra (Playwright; no browser download).
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def small(path: pathlib.Path, colors: int = 96) -> None:
    """Rewrite the PNG at ``path`` with a palette of ``colors`` (a page is text on a few
    flat colours: a third of the size, and under 200 KB, with no visible change)."""
    from PIL import Image

    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=colors, dither=Image.Dither.NONE)
    reduced.save(path, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "docs" / "images")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    flow = importlib.import_module("tests.web.browser_flow")
    missing = flow.browser_missing()
    if missing:
        raise SystemExit(missing)
    plan = importlib.import_module("tests.web.plan_browser_flow")
    builder = importlib.import_module("tests.web.hierarchy_browser_flow")
    with tempfile.TemporaryDirectory() as folder:
        tmp = pathlib.Path(folder)
        for name in ("one-step", "plan", "hierarchies"):
            (tmp / name).mkdir()
        flow.run_all(tmp / "one-step", shots=args.out)
        plan.three_step_flow(tmp / "plan", shots=args.out)
        builder.groups_flow(tmp / "hierarchies", shots=args.out)
    for path in sorted(args.out.glob("workbench-*.png")):
        small(path)
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
              f"{path.stat().st_size / 1024:.0f} KB")


if __name__ == "__main__":
    main()
