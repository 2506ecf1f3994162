"""``anonymize_documents``: the release of TF-IDF vectors, its checks re-derived from the
published vectors, its metrics, the .npz file, and the errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from microagg.documents import anonymize_documents, load_published
from microagg.documents.measure import cosine_loss, nearest_vector_linkage
from microagg.documents.release import vector_classes

PETS = ["cat dog pet", "dog cat pet food", "pet cat dog toy"]
MONEY = ["stock bond market", "bond market stock fund", "market stock bond price"]
WORDS = np.array(["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta",
                  "lambda", "zeta", "eta", "iota"])


def _corpus(n: int, seed: int = 0) -> list[str]:
    """Short synthetic documents: three themes of four words each, plus noise words."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        theme = WORDS[4 * (i % 3): 4 * (i % 3) + 4]
        words = list(rng.choice(theme, 4)) + list(rng.choice(WORDS, 2))
        docs.append(" ".join(words))
    return docs


def test_two_topics_are_the_two_groups() -> None:
    release = anonymize_documents(PETS + MONEY, k=3, min_df=1, n_topics=2, random_state=0)
    assert release.labels is not None
    assert release.labels.tolist() == [0, 0, 0, 1, 1, 1]
    assert release.k == 3 and release.checks["group_k"]["achieved"] == 3
    assert release.data.top_terms(3)[0].split() == sorted(["cat", "dog", "pet"])
    assert release.metrics["topic_ari"] == 1.0 and release.metrics["topic_nmi"] == 1.0
    assert release.metrics["linkage_risk"] == 1.0
    assert release.metrics["reidentification_risk"] == pytest.approx(1 / 3)
    assert "the texts" not in release.to_json() and "cat dog pet" not in release.to_json()


def test_release_is_k_anonymous_with_unit_vectors_and_recorded_seed() -> None:
    release = anonymize_documents(pd.DataFrame({"body": _corpus(200), "id": range(200)}),
                                  text_column="body", k=5, n_topics=3, random_state=7)
    vectors = release.data.vectors
    assert release.seed == 7 and release.n_rows == 200 and vectors.shape[0] == 200
    assert np.bincount(vector_classes(vectors)).min() >= 5 <= release.k
    norms = np.sqrt(np.asarray(vectors.multiply(vectors).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=1e-12)
    m = release.metrics
    assert 0 < m["cosine_loss"] < 1 and 0 < m["spherical_sse_sst"] < 100
    assert m["unit_norm_error"] < 1e-12 and -1 <= m["topic_ari"] <= 1
    assert release.params["min_df"] == 5 and release.column_names == ["body"]


def test_same_seed_same_bytes(tmp_path: object) -> None:
    docs = _corpus(120, seed=3)
    one = anonymize_documents(docs, k=4, n_topics=3, random_state=11)
    two = anonymize_documents(docs, k=4, n_topics=3, random_state=11)
    assert one.data.to_npz_bytes() == two.data.to_npz_bytes()
    assert dict(one.metrics) == dict(two.metrics)


def test_npz_is_read_by_scipy_and_holds_the_vocabulary(tmp_path: pytest.TempPathFactory
                                                        ) -> None:
    release = anonymize_documents(_corpus(60), k=3, n_topics=None, random_state=0)
    path = tmp_path / "out.npz"  # type: ignore[operator]
    release.data.save_npz(path)
    matrix = sp.load_npz(path)
    assert (matrix != release.data.vectors).nnz == 0
    again, vocabulary = load_published(path)
    assert vocabulary == release.data.vocabulary and again.shape == (60, len(vocabulary))


def test_identical_published_vectors_of_two_groups_form_one_class() -> None:
    release = anonymize_documents(["same words here"] * 6, k=2, min_df=1, n_topics=None,
                                  random_state=0)
    assert release.checks["group_k"]["achieved"] == 2 and release.k == 6


def test_cosine_loss_and_linkage_by_hand() -> None:
    X = sp.csr_matrix(np.eye(4))
    C = sp.csr_matrix(np.sqrt(0.5) * np.array([[1.0, 1, 0, 0], [0, 0, 1, 1]]))
    labels = np.array([0, 0, 1, 1])
    loss = cosine_loss(X, C, labels)
    assert loss["cosine_loss"] == pytest.approx(1 - np.sqrt(0.5))
    # the mean of all four is (1, 1, 1, 1) / 2: each row's cosine to it is 1/2
    assert loss["spherical_sse_sst"] == pytest.approx(100 * (1 - np.sqrt(0.5)) / 0.5)
    assert nearest_vector_linkage(X, C[labels], labels) == (1.0, 0.5)


def test_rare_terms_and_empty_vectors_are_warned() -> None:
    release = anonymize_documents(PETS + MONEY + ["unique words only"], k=3, min_df=1,
                                  n_topics=None, random_state=0)
    assert any("min_df=1 keeps terms" in w for w in release.warnings)
    release = anonymize_documents(PETS + MONEY + ["unique words only"], k=3,
                                  n_topics=None, random_state=0)
    assert any("1 document(s) have no term left" in w for w in release.warnings)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"k": 7}, ValueError, "n_samples=6 should be >= k=7"),
    ({"k": 1}, ValueError, "'k' parameter of anonymize_documents must be an int >= 2"),
    ({"k": 2, "n_topics": 1}, ValueError, "'n_topics' parameter .* Got 1"),
    ({"k": 2, "min_df": 0}, ValueError, "'min_df' parameter .* Got 0"),
    ({"k": 2, "min_df": 1.5}, ValueError, "'min_df' parameter .* Got 1.5"),
    ({"k": 2, "max_features": 0}, ValueError, "'max_features' parameter .* Got 0"),
    ({"k": 2, "stop_words": "french"}, ValueError, "'stop_words' .* Got 'french'"),
    ({"k": 2, "ngram_range": (2, 1)}, ValueError, r"'ngram_range' .* Got \(2, 1\)"),
    ({"k": 2, "min_df": 6, "max_df": 0.1}, ValueError, "no term is left"),
    ({"k": 2, "random_state": -1}, ValueError, "random_state"),
])
def test_bad_parameters(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        anonymize_documents(PETS + MONEY, **kwargs)


def test_bad_documents() -> None:
    with pytest.raises(ValueError, match=r"1 empty document\(s\), at row\(s\) 1"):
        anonymize_documents(["a b", "   ", "c d"], k=2)
    with pytest.raises(ValueError, match=r"column 'body': 1 missing or non-text .* row\(s\) 2"):
        anonymize_documents(pd.DataFrame({"body": ["a b", "c d", None]}), text_column="body",
                            k=2)
    with pytest.raises(ValueError, match=r"text column 'text' is not in the table\. Available "
                                         r"columns: 'body'"):
        anonymize_documents(pd.DataFrame({"body": ["a b", "c d"]}), text_column="text", k=2)
    with pytest.raises(ValueError, match=r"'text_column' parameter .* is required"):
        anonymize_documents(pd.DataFrame({"body": ["a b", "c d"]}), k=2)
    with pytest.raises(TypeError, match=r"'documents' parameter .* Got str"):
        anonymize_documents("one long text", k=2)


def test_the_release_never_densifies_the_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    densified: list[tuple[int, ...]] = []
    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.csr_array):
        for name in ("toarray", "todense"):
            original = getattr(cls, name)

            def spy(self: sp.spmatrix, *args: object, _original: object = original,
                    **kwargs: object) -> object:
                densified.append(self.shape)
                return _original(self, *args, **kwargs)  # type: ignore[operator]

            monkeypatch.setattr(cls, name, spy)
    release = anonymize_documents(_corpus(300, seed=5), k=4, n_topics=None, random_state=0)
    # only the linkage's blocks of similarities (records x distinct published vectors)
    assert densified and {shape[1] for shape in densified} == {release.metrics["groups"]}
