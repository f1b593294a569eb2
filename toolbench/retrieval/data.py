"""ToolBench's API-retriever data: building it from query files, and reading it.

ToolBench's preprocessing splits a query file (``G1_query.json``: records with ``query``,
``query_id``, ``api_list`` and ``relevant APIs``) into test queries (ids in a test-id file) and
training queries, and writes, per group (G1, G2, G3):

- ``corpus.tsv``: a header ``docid<TAB>document_content``, then one row per API met in a query's
  ``api_list``, ``document_content`` being the API's record as JSON; an API is the same document
  wherever its JSON is the same, and docids count from 1;
- ``{train,test}.query.txt``: ``qid<TAB>query`` rows, no header; a query's qid comes from its text;
- ``qrels.{train,test}.tsv``: ``qid<TAB>0<TAB>docid<TAB>1`` rows, no header, one per relevant API.

The files are tab-separated with the quoting of Python's ``csv`` module (what pandas writes), so
either reads the other's. ToolBench writes a row per (query, relevant API) pair, shuffled, and a
corpus row per occurrence of an API; this builder writes each query and each API once, in file
order: the same data as a reader sees it.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

csv.field_size_limit(1 << 30)  # an API's JSON can be long


def group_of(path: Path) -> str:
    """A query file's group: ``G1`` for ``G1_query.json`` or ``G1_instruction.json``."""
    return path.stem.split("_")[0]


def read_query_records(path: str | Path) -> list[dict[str, Any]]:
    """A ToolBench query file's records that a retriever can be scored on (those with ``relevant APIs``)."""
    records = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise ValueError(f"{path}: not a list of query records")
    return [r for r in records if isinstance(r, dict) and "relevant APIs" in r and "api_list" in r]


def query_text(record: dict[str, Any]) -> str:
    query = record["query"]
    return query[0] if isinstance(query, list) else query  # a few of ToolBench's queries are lists


def relevant_documents(record: dict[str, Any]) -> list[str]:
    """The JSON documents of a query's APIs that are among its ``relevant APIs``."""
    relevant = [list(pair) for pair in record["relevant APIs"]]
    return [json.dumps(api) for api in record["api_list"] if [api.get("tool_name"), api.get("api_name")] in relevant]


def build(query_files: Iterable[str | Path], out: str | Path, test_ids: set[int] | None = None) -> dict[str, Path]:
    """ToolBench's retriever data, one folder per group under ``out``; a query is a test query when
    its ``query_id`` is in ``test_ids`` (every query when ``test_ids`` is None). Returns the folders."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(Path(p) for p in query_files):
        groups.setdefault(group_of(path), []).extend(read_query_records(path))
    folders = {}
    for group, records in sorted(groups.items()):
        folder = Path(out) / group
        folder.mkdir(parents=True, exist_ok=True)
        docids: dict[str, int] = {}
        qids: dict[str, int] = {}
        rows: dict[str, list[tuple[int, str]]] = {"train": [], "test": []}
        qrels: dict[str, list[tuple[int, int, int, int]]] = {"train": [], "test": []}
        for record in records:
            part = "test" if test_ids is None or record.get("query_id") in test_ids else "train"
            for api in record["api_list"]:
                docids.setdefault(json.dumps(api), len(docids) + 1)
            relevant = relevant_documents(record)
            if not relevant:
                continue
            text = query_text(record)
            if text not in qids:
                qids[text] = len(qids) + 1
                rows[part].append((qids[text], text))
            qrels[part] += [(qids[text], 0, docids[doc], 1) for doc in relevant]
        with open(folder / "corpus.tsv", "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter="\t", lineterminator="\n")
            writer.writerow(["docid", "document_content"])
            writer.writerows((docid, doc) for doc, docid in docids.items())
        for part in ("train", "test"):
            _write_rows(folder / f"{part}.query.txt", rows[part])
            _write_rows(folder / f"qrels.{part}.tsv", qrels[part])
        folders[group] = folder
    return folders


def _write_rows(path: Path, rows: Iterable[tuple[Any, ...]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(rows)


def read_test_ids(paths: Iterable[str | Path]) -> set[int]:
    """Query ids from ToolBench's test-id files (JSON objects keyed by id)."""
    return {int(key) for path in paths for key in json.loads(Path(path).read_text(encoding="utf-8"))}


def read_corpus(path: str | Path) -> dict[int, dict[str, Any]]:
    """A ``corpus.tsv``: each docid's API record (a docid written more than once is read once)."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.reader(f, delimiter="\t")
        header = next(rows, None)
        if header != ["docid", "document_content"]:
            raise ValueError(f"{path}: not a corpus.tsv (its header is {header})")
        return {int(docid): json.loads(content) for docid, content in rows}


def _read_tsv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return [row for row in csv.reader(f, delimiter="\t") if row]


def qrels_path(queries: Path) -> Path:
    """The qrels next to a query file: ``qrels.test.tsv`` for ``test.query.txt``."""
    return queries.with_name(f"qrels.{queries.name.removesuffix('.query.txt')}.tsv")


def read_queries(
    path: str | Path, corpus: dict[int, dict[str, Any]], qrels: str | Path | None = None
) -> list[tuple[str, str, list[int]]]:
    """(group, query, relevant docids) from a ``*.query.txt`` and its qrels (the group is the folder's
    name, G1 for ``G1/test.query.txt``), or from a query file (the group is the file's name, as
    G1_instruction; a query's relevant APIs are its ``api_list`` entries named in ``relevant APIs``,
    found in the corpus by their JSON, else by tool and API name)."""
    path = Path(path)
    if path.name.endswith(".query.txt"):
        relevant: dict[str, list[int]] = {}
        for qid, _, docid, label in _read_tsv(Path(qrels) if qrels else qrels_path(path)):
            if int(label) > 0:
                relevant.setdefault(qid, []).append(int(docid))
        texts = {qid: text for qid, text in _read_tsv(path)}  # ToolBench writes a query once per relevant API
        return [(path.parent.name, text, relevant[qid]) for qid, text in texts.items() if qid in relevant]
    by_json = {json.dumps(record): docid for docid, record in corpus.items()}
    by_name: dict[tuple[str, str], list[int]] = {}
    for docid, record in corpus.items():
        by_name.setdefault((record.get("tool_name"), record.get("api_name")), []).append(docid)
    found = []
    for record in read_query_records(path):
        docids = []
        for doc in relevant_documents(record):
            api = json.loads(doc)
            docids += [by_json[doc]] if doc in by_json else by_name.get((api.get("tool_name"), api.get("api_name")), [])
        if docids:  # as in ToolBench's test set, a query none of whose APIs is in the corpus is left out
            found.append((path.stem, query_text(record), docids))
    return found
