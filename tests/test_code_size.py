"""Size limits of the source (issue 17): no module over 500 lines, no function over 80 lines.

Ruff enforces the complexity budget (C901, PLR0912, PLR0913, PLR0915 in pyproject.toml) but
has no rule for a function's length; this test is that rule. A function's length is its
code: the lines from the first statement after its docstring to its last line (nested
functions count towards the function that holds them). The signature is not counted (a typer
command declares one parameter per option; ``anonymize(df, *, 27 options)`` likewise), nor
the docstring (numpydoc documents every parameter; a rule that shortened documentation would
be a bad rule). numba kernels (``@njit``) are exempt: each is one loop nest, kept whole
for speed.
"""

from __future__ import annotations

import ast
import pathlib

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "microagg"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

def _modules() -> list[pathlib.Path]:
    return sorted(SOURCE.rglob("*.py"))


def _name(path: pathlib.Path) -> str:
    return path.relative_to(SOURCE).as_posix()


def _is_kernel(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with ``njit`` or ``njit(...)`` (``numba.njit`` included)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "njit":
            return True
    return False


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of code of a function: from the first statement after the docstring to the end."""
    body = node.body
    first = body[0]
    if (len(body) > 1 and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        first = body[1]
    assert node.end_lineno is not None
    return node.end_lineno - first.lineno + 1


def _violations(path: pathlib.Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = []
    n_lines = len(text.splitlines())
    if n_lines > MAX_MODULE_LINES:
        found.append(f"{_name(path)}: {n_lines} lines (module limit {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not _is_kernel(node):
            length = code_lines(node)
            if length > MAX_FUNCTION_LINES:
                found.append(f"{_name(path)}:{node.lineno} {node.name}(): {length} lines of "
                             f"code (function limit {MAX_FUNCTION_LINES})")
    return found


def test_modules_and_functions_stay_small() -> None:
    problems = [v for path in _modules() for v in _violations(path)]
    assert not problems, "Too large (split the module / extract functions):\n" + "\n".join(
        problems)


def test_code_lines_skips_signature_and_docstring() -> None:
    tree = ast.parse('def f(\n    a,\n    b,\n):\n    """Doc.\n\n    More.\n    """\n'
                     "    x = a\n\n    return x + b\n")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert code_lines(function) == 3


def test_kernels_are_recognized() -> None:
    tree = ast.parse("@njit(cache=True)\ndef a(): pass\n@numba.njit\ndef b(): pass\n"
                     "@app.command()\ndef c(): pass\n")
    kinds = [_is_kernel(node) for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert kinds == [True, True, False]
