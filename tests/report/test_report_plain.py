"""The report in plain words (issue 18, items 1, 3, 4, 11-13): the protection status, the
headline measures, plain tables, heat-map labels that do not overlap, one-bar plots as
sentences, and originals with missing values."""

from __future__ import annotations

import dataclasses
import itertools
import re

import numpy as np
import pandas as pd
import pytest

from microagg.audit.assess import assess_release
from microagg.datasets import load_dataset
from microagg.metrics.headline import (
    GLOSSARY,
    class_risk,
    column_losses,
    explain,
    headline_loss,
    headline_risk,
)
from microagg.report.html import render_report

QI = ["age", "income"]


def _toy(n: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """40 records, groups of 5 along age, both columns replaced by the group mean."""
    rng = np.random.default_rng(3)
    original = pd.DataFrame({"age": rng.integers(18, 90, n).astype(float),
                             "income": rng.lognormal(10, 1, n), "city": ["A"] * n})
    groups = np.argsort(np.argsort(original["age"].to_numpy(), kind="stable")) // 5
    published = original.copy()
    for col in QI:
        published[col] = original[col].groupby(groups).transform("mean")
    return original, published


def _text(page: str) -> str:
    return re.sub(r"data:image/png;base64,[^']*", "IMG", page)


# -- headline measures -------------------------------------------------------------------------

def test_column_losses_are_the_mean_decomposition_of_the_headline():
    original, published = _toy()
    losses = column_losses(original[QI].to_numpy(), published[QI].to_numpy())
    release = assess_release(original, published, quasi_identifiers=QI)
    # SSE/SST on z-scores is the mean of the per-column losses (each column's SST = n)
    assert release.metrics["information_loss"] == pytest.approx(losses.mean(), rel=1e-10)
    # with mean aggregation a column's loss is the share of its variance removed
    a, b = original["income"], published["income"]
    assert losses[1] == pytest.approx(100 * (1 - b.var(ddof=0) / a.var(ddof=0)), rel=1e-10)


def test_headline_picks_one_measure_per_kind_and_explains_it():
    measure, value = headline_loss({"information_loss": 12.0, "dld_risk": 0.1})
    assert (measure.key, value) == ("information_loss", 12.0)
    measure, value = headline_loss({"information_loss": 12.0, "ncp": 0.25})
    assert (measure.key, value) == ("ncp", 25.0)  # generalized: NCP covers every column
    risk, value = headline_risk({"class_risk": 0.2})
    assert risk.key == "class_risk" and value == pytest.approx(20.0)
    assert headline_loss({}) is None and headline_risk({"dld_risk": None}) is None
    for key in ("il_omega", "ncp", "utility_loss", "privacy_of_sensitive",
                "privacy_of_quasi_identifiers", "query_answering", "homogeneity"):
        assert GLOSSARY[key] and explain(key) == GLOSSARY[key]
    assert explain("intersection_attack_reidentified").startswith("intersection attack")
    assert explain("no such thing") == ""
    # hand-computed: classes of 2 and 4 -> (2 * 1/2 + 4 * 1/4) / 6
    assert class_risk([5, 5, 9, 9, 9, 9]) == pytest.approx(2 / 6)
    with pytest.raises(ValueError, match="at least one record"):
        class_risk([])
    with pytest.raises(ValueError, match=r"shape \(3, 1\) but masked has shape \(2, 1\)"):
        column_losses([[1.0], [2.0], [3.0]], [[1.0], [2.0]])


# -- protection status and k ------------------------------------------------------------------

def test_no_k_asked_states_the_achieved_level_plainly():
    original, published = _toy()
    page = render_report(assess_release(original, published, quasi_identifiers=QI), original)
    assert "Not k-anonymous" not in page and "Protected" not in page
    assert ("Every published combination of the 2 quasi-identifiers (age, income) is shared "
            "by at least 5 records: the file is 5-anonymous") in page
    # nothing points to a warnings section that is not there
    assert "see the warnings" not in page and "<h2>Warnings</h2>" not in page


def test_k_asked_and_reached_is_protected_and_missed_is_not():
    original, published = _toy()
    reached = render_report(assess_release(original, published, quasi_identifiers=QI, k=5),
                            original)
    assert "<b>Protected:</b> k = 5 required and reached" in reached
    missed = render_report(assess_release(original, published, quasi_identifiers=QI, k=6),
                           original)
    assert "Protected:" not in missed.replace("Not protected:", "")
    assert "<b>Not protected:</b> k anonymity: required 6, achieved 5" in missed
    assert "<h2>Warnings</h2>" in missed and "NOT 6-anonymous" in missed
    with pytest.raises(ValueError, match="'k' parameter of report must be an int >= 2"):
        assess_release(original, published, quasi_identifiers=QI, k=1)


def test_kept_identifiers_and_breaking_columns_are_never_protected():
    original, published = _toy()
    release = assess_release(original, published, quasi_identifiers=QI, k=5)
    kept = dataclasses.replace(release, params={**release.params, "keep": ("city",)})
    page = render_report(kept, original)
    assert "<b>Protected:</b>" not in page
    assert "identifier-like column(s) published on purpose: city" in page
    assert "look like identifiers and are published on purpose" in page  # the warning
    broken = dataclasses.replace(release, checks={
        **release.checks, "published_columns": {"columns": {"city": 1}}})
    page = render_report(broken, original)
    assert "<b>Protected:</b>" not in page and "city (k = 1 with it)" in page
    assert "Column &#x27;city&#x27; is published and breaks k" in page
    # absent, empty or malformed keys mean none
    for params, checks in (({"keep": ()}, {"published_columns": {"columns": {}}}),
                           ({"keep": None}, {"published_columns": "?"})):
        fine = dataclasses.replace(release, params={**release.params, **params},
                                   checks={**release.checks, **checks})
        assert "<b>Protected:</b>" in render_report(fine, original)


# -- plain words, plain tables, plots ----------------------------------------------------------

def test_plain_words_name_the_worst_column_and_tables_are_plain():
    original, published = _toy()
    release = assess_release(original, published, quasi_identifiers=QI, sensitive=["city"])
    losses = column_losses(original[QI].to_numpy(), published[QI].to_numpy())
    worst = QI[int(np.argmax(losses))]
    page = _text(render_report(release, original))
    assert f"<b>{worst}</b> lost {losses.max():.1f}% of its variation" in page
    assert f"on average the quasi-identifiers lost {losses.mean():.1f}% of the variation" in page
    assert "<h3>Headline</h3>" in page and "<h3>Secondary measures</h3>" in page
    # dict-valued measures are tables, never Python reprs
    assert "{'" not in page and "{&#x27;" not in page
    assert "<h3>homogeneity</h3>" in page and "<th>homogeneous classes</th>" in page


def test_mixed_release_has_a_risk_figure_and_ncp_headline():
    from microagg import anonymize

    ds = load_dataset("adult")
    data = ds.data.head(600)
    qi = ["age", "education", "marital-status"]
    release = anonymize(data, quasi_identifiers=qi, k=5, random_state=0,
                        hierarchies={c: ds.hierarchies[c] for c in qi[1:]},
                        sensitive="occupation", identifiers="native-country")
    page = _text(render_report(release, data))
    assert "DLD n/a" not in page
    assert "loss: normalized certainty penalty (NCP)" in page
    assert "risk: re-identification risk by class" in page
    assert "finds the right person with probability" in page
    assert "<h3>query answering</h3>" in page and "{&#x27;" not in page
    assert "IL(Omega)" in page  # the secondary measures are labelled


def test_one_bar_plots_are_sentences():
    original, published = _toy()
    published["age"] = 12.0
    page = render_report(assess_release(original, published, quasi_identifiers=QI),
                         original)
    assert "All 40 published values of <b>age</b> are 12." in page
    assert "All 8 groups have 5 records." in page  # the income means still tell 8 apart
    assert page.count("data:image/png;base64,") == 2  # income histogram, correlations


def test_heat_map_tick_labels_do_not_overlap():
    from microagg.report._plots import correlation_figure, plots

    plt = plots()
    if plt is None:
        pytest.skip("matplotlib is not installed")
    rng = np.random.default_rng(0)
    for p in (5, 30, 80):
        names = [f"a_rather_long_column_name_{j}" for j in range(p)]
        frame = pd.DataFrame(rng.normal(size=(50, p)), columns=names)
        fig = correlation_figure(frame, frame, names, plt)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes[:2]:
            for labels in (ax.get_xticklabels(), ax.get_yticklabels()):
                boxes = [t.get_window_extent(renderer) for t in labels if t.get_text()]
                assert boxes and all(len(t.get_text()) <= 18 for t in labels)
                for first, second in itertools.pairwise(boxes):
                    assert not first.overlaps(second), (p, first, second)
        plt.close(fig)


# -- missing values ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def survey_pair():
    ds = load_dataset("survey")
    original = ds.data.drop(columns=list(ds.identifiers))
    groups = np.argsort(np.argsort(original["age"].to_numpy(), kind="stable")) // 5
    published = original.copy()
    for col in ("age", "income"):
        published[col] = original[col].groupby(groups).transform("mean")
    published.loc[original["income"].isna(), "income"] = np.nan  # left missing
    published["sex"] = "*"
    return original, published


def test_report_accepts_an_original_with_missing_values(survey_pair):
    original, published = survey_pair
    qi = ["age", "sex", "region", "income"]
    assert original["income"].isna().sum() == 412  # the bundled survey: 8 % missing
    release = assess_release(original, published, quasi_identifiers=qi,
                             sensitive=["diagnosis"], k=5)
    metrics = release.metrics
    # SSE/SST as a release with missing values measures it: each missingness pattern on
    # its observed numeric columns (z-scores of its records), weighted by its records
    gap = original["income"].isna().to_numpy()

    def z_loss(rows: np.ndarray, cols: list[str]) -> float:
        x, y = original.loc[rows, cols].to_numpy(float), published.loc[rows, cols].to_numpy(float)
        m, s = x.mean(axis=0), x.std(axis=0)
        return 100 * (((x - y) / s) ** 2).sum() / (((x - m) / s) ** 2).sum()

    expected = (gap.sum() * z_loss(gap, ["age"])
                + (~gap).sum() * z_loss(~gap, ["age", "income"])) / len(gap)
    assert metrics["information_loss"] == pytest.approx(expected, rel=1e-9)
    assert metrics["complete_records"] == 5000 - 412
    assert all(np.isfinite(v) for v in metrics.values() if isinstance(v, float))
    page = _text(render_report(release, original))
    assert "income: 412 missing in the original" in page and "not counted" in page
    assert "<b>income</b> lost" in page
    # the mixed release's headline risk is the class risk, not a numeric-only linkage
    assert "risk: re-identification risk by class" in page


def test_missing_values_equal_the_complete_case_figures_on_observed_cells():
    original, published = _toy()
    holed_o, holed_p = original.copy(), published.copy()
    holed_o.loc[3, "income"] = np.nan
    holed_p.loc[3, "income"] = np.nan
    full = assess_release(original.drop(index=3), published.drop(index=3),
                          quasi_identifiers=QI)
    holed = assess_release(holed_o, holed_p, quasi_identifiers=QI)
    # income on its 39 observed cells; age on all 40
    expected = np.mean([column_losses(original[["age"]].to_numpy(),
                                      published[["age"]].to_numpy())[0],
                        column_losses(original[["income"]].drop(index=3).to_numpy(),
                                      published[["income"]].drop(index=3).to_numpy())[0]])
    assert holed.metrics["information_loss"] == pytest.approx(expected)
    assert holed.metrics["dld_risk"] == pytest.approx(full.metrics["dld_risk"])
    with pytest.raises(Exception, match="1 infinite value"):
        holed_p.loc[4, "age"] = np.inf
        assess_release(holed_o, holed_p, quasi_identifiers=QI)


def test_a_date_quasi_identifier_is_compared_as_days() -> None:
    """Masked as days, published as ISO text: the report compares it as the number it was
    masked as (not as 'categorical, every value changed')."""
    from microagg import anonymize
    from microagg.report.html import render_report

    rng = np.random.default_rng(5)
    born = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 20000, 200), unit="D")
    df = pd.DataFrame({"born": born.strftime("%Y-%m-%d"), "age": rng.integers(18, 90, 200)})
    release = anonymize(df, quasi_identifiers=["born", "age"], k=5, dates=["born"],
                        random_state=0)
    page = render_report(release, df)
    numeric_table = page[page.index("Quasi-identifiers before and after"):]
    assert "<td class='l'>born</td>" in numeric_table.split("</table>")[0]
    assert "Categorical quasi-identifiers" not in page


def test_report_shows_the_survey_risk_before_and_after() -> None:
    """Issue 19: with a weight and a household, the report has the risk section, before and
    after, with the SUDA2 rows; without them it has none."""
    from microagg import anonymize
    from microagg.report.html import render_report

    survey = load_dataset("survey").data
    ids = ["person_id", "name", "postcode", "income", "date_of_birth"]  # these break k too
    release = anonymize(survey, quasi_identifiers=["age", "sex", "region"], k=5,
                        identifiers=ids, weights="weight", households="household_id",
                        random_state=0, keep="weight")  # a household's own weight: kept
    page = render_report(release, survey)
    section = page[page.index("Disclosure risk before and after"):]
    after = release.metrics["survey_risk"]["after"]
    assert f"{after['global_risk_pct']:.4g}" in section.split("</table>")[0]
    assert "records with a minimal sample unique" in section
    population = after["population"]["k_map"]  # k-map and the journalist / marketer risks
    intro = section.split("<table>")[0]
    assert f"at least {population['k_map']:.4g} persons (k-map)" in intro
    assert f"at most {100 * population['journalist_max']:.3g} % (journalist risk)" in intro
    assert f"{100 * population['marketer']:.3g} % of them" in intro
    table = section.split("</table>")[0]
    assert f"<td>{population['marketer']:.4g}</td>" in table
    model = after["population"]["loglinear"]  # tau1 and tau2 of the main-effects model
    assert (f"expects {model['tau1']:,.3g} of the {model['sample_uniques']:,} sample uniques"
            in intro)
    assert "of them population uniques (log-linear)" in table
    assert f"<td>{model['tau2']:.4g}</td>" in table
    plain = anonymize(survey, quasi_identifiers=["age", "sex", "region"], k=5,
                      identifiers=[*ids, "household_id", "weight"], random_state=0)
    assert "Disclosure risk before and after" not in render_report(plain, survey)
