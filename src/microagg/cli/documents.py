"""``microagg documents``: k-anonymous release of documents as sparse TF-IDF vectors."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from microagg.cli._common import (
    RandomStateOption,
    SepOption,
    app,
    match_column,
    stdout,
    user_errors,
)

from ._tables import key_value_table

if TYPE_CHECKING:
    from microagg._pipeline.result import Release


def _share_or_count(value: str, option: str) -> int | float:
    """``--min-df`` / ``--max-df``: ``3`` (documents) or ``0.5`` (a share of them)."""
    try:
        return float(value) if any(c in value for c in ".eE") else int(value)
    except ValueError:
        raise ValueError(f"The {option!r} option must be an int (documents) or a float (a "
                         f"share of them). Got {value!r} instead.") from None


def _ngrams(value: str) -> tuple[int, int]:
    """``--ngrams``: ``1`` or ``1,2``."""
    try:
        parts = [int(p) for p in value.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (1, 2):
        raise ValueError(f"The '--ngrams' option must be N or LOW,HIGH (e.g. 1,2). Got "
                         f"{value!r} instead.")
    return parts[0], parts[-1]


@app.command()
def documents(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A table with one document per row (CSV, TSV, Parquet, Excel "
                            ".xlsx, Stata .dta, SPSS .sav, or sqlite:///file.db?table=NAME)."),
    ],
    output: Annotated[
        str,
        typer.Option("-o", "--output", show_default=False,
                     help="The published vectors (.npz: scipy.sparse.load_npz reads the "
                          "matrix, key 'vocabulary' the terms), written atomically."),
    ],
    text_column: Annotated[
        str, typer.Option("--text-column", show_default=False, help="The documents' column.")
    ],
    k: Annotated[int, typer.Option("-k", help="Minimum records per published vector "
                                              "(k >= 2).")] = 5,
    terms: Annotated[
        str | None,
        typer.Option("--terms", show_default=False,
                     help="Also write each record's top terms (a table, one row per "
                          "record, column --text-column)."),
    ] = None,
    n_terms: Annotated[int, typer.Option("--n-terms", help="Terms per row of --terms.")] = 10,
    max_features: Annotated[
        int | None,
        typer.Option("--max-features", show_default=False,
                     help="Keep only the most frequent terms."),
    ] = None,
    min_df: Annotated[
        str | None,
        typer.Option("--min-df", show_default=False,
                     help="Keep terms in at least this many documents (an int) or this share "
                          "(a float); default k."),
    ] = None,
    max_df: Annotated[
        str, typer.Option("--max-df", help="Drop terms in more documents (int) or a larger "
                                           "share (float).")
    ] = "1.0",
    stop_words: Annotated[
        str | None,
        typer.Option("--stop-words", show_default=False,
                     help="'english': drop scikit-learn's English stop words."),
    ] = None,
    ngrams: Annotated[str, typer.Option("--ngrams", help="Word n-grams: N or LOW,HIGH.")] = "1",
    topics: Annotated[
        int, typer.Option("--topics", help="k-means topics for the topic-agreement figures "
                                           "(0: skip).")
    ] = 10,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the release summary (params, checks, metrics) as JSON."),
    ] = None,
    random_state: RandomStateOption = None,
    sep: SepOption = None,
) -> None:
    """Spherical microaggregation of documents: TF-IDF vectors grouped by cosine similarity
    (spherical MDAV), each record published as its group's unit centroid; the texts are not
    published (Abril, Navarro-Arribas & Torra 2015)."""
    with user_errors():
        import pandas as pd

        from microagg.documents import anonymize_documents
        from microagg.io.tables import (
            check_output_path,
            check_table_output,
            read_table,
            write_table,
            write_text_atomic,
        )

        target = check_output_path(output, inputs=[input_path], extensions=(".npz",),
                                   parameter="-o/--output")
        terms_out = None if terms is None else check_table_output(
            terms, inputs=[input_path, target], parameter="--terms")
        summary_out = None if summary_json is None else check_output_path(
            summary_json, inputs=[input_path], extensions=(".json",),
            parameter="--summary-json", outputs={"-o/--output": target, "--terms": terms_out})
        table = read_table(input_path, sep=sep)
        text_column = match_column(text_column, table.columns)
        release = anonymize_documents(
            table, text_column=text_column, k=k, max_features=max_features,
            min_df=None if min_df is None else _share_or_count(min_df, "--min-df"),
            max_df=_share_or_count(max_df, "--max-df"), stop_words=stop_words,
            ngram_range=_ngrams(ngrams), n_topics=topics or None, random_state=random_state)
        release.data.save_npz(target)
        if terms_out is not None:
            write_table(pd.DataFrame({text_column: release.data.top_terms(n_terms)}),
                        terms_out, sep=sep)
        if summary_out is not None:
            write_text_atomic(release.to_json() + "\n", summary_out)
    stdout().print(_summary(release, output))


def _summary(release: Release, output: str) -> Table:
    """The release's figures as a two-column table."""
    metrics, params = release.metrics, release.params
    rows = [
        ("documents / terms", f"{release.n_rows:,} / {params['n_features']:,}"),
        ("k required / achieved", f"{params['k']} / {release.k}"),
        ("groups", f"{metrics['groups']:,}"),
        ("cosine loss (mean 1 - cos)", f"{metrics['cosine_loss']:.4f}"),
        ("spherical SSE/SST (%)", f"{metrics['spherical_sse_sst']:.2f}"),
    ]
    if "topic_ari" in metrics:
        rows.append((f"topic agreement ({params['n_topics']} topics): ARI / NMI",
                     f"{metrics['topic_ari']:.4f} / {metrics['topic_nmi']:.4f}"))
    rows += [("linkage to own vector / re-identification",
              f"{metrics['linkage_risk']:.4f} / {metrics['reidentification_risk']:.4f}"),
             ("seed", str(release.seed)),
             ("time (s)", f"{sum(release.timings.values()):.2f}"),
             ("written", output)]
    return key_value_table("microagg documents", rows, release.warnings)
