"""``microagg documents``: a small CSV in, a .npz of k-anonymous vectors out, errors named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from typer.testing import CliRunner

from microagg.cli import EXIT_USER_ERROR, app

WORDS = ["cat dog pet", "dog cat pet food", "pet cat dog toy", "cat pet vet",
         "stock bond market", "bond market stock fund", "market stock bond price",
         "fund stock price"]


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "docs.csv"
    pd.DataFrame({"id": range(len(WORDS)), "body": WORDS}).to_csv(path, index=False)
    return path


def test_documents_writes_vectors_terms_and_summary(tmp_path: Path) -> None:
    source, out = _input(tmp_path), tmp_path / "out.npz"
    terms, summary = tmp_path / "terms.csv", tmp_path / "s.json"
    result = CliRunner().invoke(app, ["documents", str(source), "--text-column", "body",
                                      "-k", "4", "-o", str(out), "--terms", str(terms),
                                      "--n-terms", "2", "--min-df", "1", "--topics", "2",
                                      "--summary-json", str(summary), "--random-state", "3"])
    assert result.exit_code == 0, result.output
    matrix = sp.load_npz(out)
    assert matrix.shape[0] == len(WORDS)
    with np.load(out, allow_pickle=False) as loaded:
        assert "cat" in loaded["vocabulary"].tolist()
    table = pd.read_csv(terms)
    assert list(table.columns) == ["body"] and table["body"].value_counts().min() >= 4
    figures = json.loads(summary.read_text())
    assert figures["seed"] == 3 and figures["checks"]["k_anonymity"]["achieved"] >= 4
    assert figures["params"]["method"] == "spherical-mdav"


def test_documents_errors_are_user_errors(tmp_path: Path) -> None:
    source, out = _input(tmp_path), tmp_path / "out.npz"
    result = CliRunner().invoke(app, ["documents", str(source), "--text-column", "text",
                                      "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "'text' is not in the table" in result.output
    result = CliRunner().invoke(app, ["documents", str(source), "--text-column", "body",
                                      "-k", "30", "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "k=30" in result.output
    result = CliRunner().invoke(app, ["documents", str(source), "--text-column", "body",
                                      "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == EXIT_USER_ERROR and "Supported extensions: .npz" in result.output
    result = CliRunner().invoke(app, ["documents", str(source), "--text-column", "body",
                                      "--min-df", "two", "-o", str(out)])
    assert result.exit_code == EXIT_USER_ERROR and "'--min-df'" in result.output
    assert not out.exists()
