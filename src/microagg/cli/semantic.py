"""``microagg semantic``: semantic microaggregation of categorical / textual columns, each
group published as its semantic centroids (WordNet or the columns' hierarchies)."""

from __future__ import annotations

import json
import pathlib
from typing import Annotated, Any

import typer

from microagg.cli._common import (
    RandomStateOption,
    SepOption,
    UsageError,
    app,
    match_columns,
    parse_hierarchies,
    plain_json,
    split_names,
    stdout,
    user_errors,
)

from ._tables import key_value_table


def _parse_synsets(items: list[str] | None) -> dict[str, dict[str, str]]:
    """``["occupation:Sales=salesperson.n.01"]`` -> ``{"occupation": {"Sales": ...}}``."""
    parsed: dict[str, dict[str, str]] = {}
    for item in items or []:
        head, eq, synset = item.rpartition("=")
        column, colon, value = head.partition(":")
        if not eq or not colon or not column or not value or not synset:
            raise UsageError("--synset must look like COLUMN:VALUE=SYNSET (e.g. "
                             f"occupation:Sales=salesperson.n.01). Got {item!r} instead.")
        parsed.setdefault(column, {})[value] = synset
    return parsed


def _ontologies(ontology: str, columns: list[str], hierarchy: list[str] | None,
                dataset_hierarchies: dict[str, Any]) -> Any:
    """``"wordnet"``, or each column's Hierarchy (from --hierarchy or the bundled data)."""
    if ontology == "wordnet":
        return "wordnet"
    if ontology != "hierarchy":
        raise UsageError(f"--ontology must be 'wordnet' or 'hierarchy'. Got {ontology!r}.")
    from microagg.hierarchy import Hierarchy

    given = parse_hierarchies(hierarchy)  # named as the table spells the columns
    files = {**dataset_hierarchies, **dict(zip(match_columns(list(given), columns) or [],
                                               given.values(), strict=True))}
    absent = [c for c in columns if c not in files]
    if absent:
        raise UsageError(f"--ontology hierarchy needs a --hierarchy COLUMN=FILE for "
                         f"{', '.join(map(repr, absent))}.")
    return {c: Hierarchy.from_csv(files[c], column=c) for c in columns}


@app.command()
def semantic(
    input_path: Annotated[
        str,
        typer.Argument(metavar="INPUT", show_default=False,
                       help="A table (CSV, Parquet, ...) or a bundled data set as "
                            "dataset:NAME (e.g. dataset:adult)."),
    ],
    columns: Annotated[
        list[str],
        typer.Option("-c", "--columns", show_default=False,
                     help="Comma-separated categorical / textual quasi-identifiers."),
    ],
    output: Annotated[
        pathlib.Path | None,
        typer.Option("-o", "--output", show_default=False,
                     help="Where to write the release (CSV, Parquet, ...)."),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Minimum group size (>= 2).")] = 5,
    ontology: Annotated[
        str,
        typer.Option("--ontology", help="wordnet (WordNet 3.0 nouns, needs nltk and "
                                        "wordnet-base) or hierarchy (ARX-style files)."),
    ] = "wordnet",
    distance: Annotated[
        str,
        typer.Option("--distance", help="feature (Sanchez et al. 2012), wu-palmer or ic."),
    ] = "feature",
    numeric: Annotated[
        list[str] | None,
        typer.Option("--numeric", show_default=False,
                     help="Comma-separated numeric quasi-identifiers (published as means)."),
    ] = None,
    hierarchy: Annotated[
        list[str] | None,
        typer.Option("--hierarchy", show_default=False,
                     help="COLUMN=FILE: an ARX hierarchy (repeatable; --ontology hierarchy)."),
    ] = None,
    synset: Annotated[
        list[str] | None,
        typer.Option("--synset", show_default=False,
                     help="COLUMN:VALUE=SYNSET, the WordNet synset of a value (repeatable)."),
    ] = None,
    summary_json: Annotated[
        pathlib.Path | None,
        typer.Option("--summary-json", show_default=False,
                     help="Also write the release's summary as JSON."),
    ] = None,
    random_state: RandomStateOption = None,
    sep: SepOption = None,
) -> None:
    """Semantic MDAV: group records on a semantic distance between categories and publish
    each group's semantic centroid (Martinez, Sanchez & Valls 2012)."""
    with user_errors():
        from microagg.io.tables import check_output_path, read_table, write_table, write_text_atomic
        from microagg.semantic import anonymize_semantic

        outputs = {"--output": output, "--summary-json": summary_json}
        for name, path in outputs.items():
            if path is not None:
                check_output_path(path, inputs=[input_path], parameter=name,
                                  extensions=(".json",) if name == "--summary-json" else None)
        dataset_hierarchies: dict[str, Any] = {}
        if input_path.startswith("dataset:"):
            from microagg.datasets import load_dataset

            data = load_dataset(input_path.removeprefix("dataset:"))
            table, dataset_hierarchies = data.data, dict(data.hierarchies)
        else:
            table = read_table(input_path, sep=sep)
        cols = match_columns(split_names(columns), table.columns) or []
        release = anonymize_semantic(
            table, columns=cols, k=k,
            ontology=_ontologies(ontology, cols, hierarchy, dataset_hierarchies),
            distance=distance, numeric=match_columns(split_names(numeric), table.columns) or (),
            synsets=_parse_synsets(synset), random_state=random_state)
        if output is not None:
            write_table(release.data, output, sep=sep)
        if summary_json is not None:
            write_text_atomic(json.dumps(plain_json(release.summary()), indent=2) + "\n",
                              summary_json)
    _print(release, input_path, output)


def _print(release: Any, source: str, output: pathlib.Path | None) -> None:
    m = release.metrics
    rows = [("rows / groups", f"{release.n_rows:,} / {m['n_groups']:,}"),
            ("k required / achieved", f"{release.params['k']} / {release.k}"),
            ("semantic information loss", f"{m['semantic_information_loss']:.4f}"),
            ("values generalized (share)", f"{m['generalized_share']:.4f}")]
    rows += [(f"  {c}: loss / generalized", f"{loss:.4f} / "
              f"{m['generalized_share_columns'][c]:.4f}")
             for c, loss in m["semantic_information_loss_columns"].items()]
    rows += [("seed", str(release.seed)), ("time (s)", f"{release.timings['total']:.2f}"),
             ("written to", str(output) if output else "(not written: give -o)")]
    stdout().print(key_value_table(f"microagg semantic: {source}", rows))
