"""report.html: one self-contained page per run folder (parsed, not eyeballed)."""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path

import pytest

import safeclf

SPEC = """
name: report_test
description: a ramp with a fairness promise beside a baseline without one
seeds: 2
datasets:
  - {dataset: adult, split: {predefined: true, train_rows: 300}, preprocess: minmax}
methods:
  - method: ramp
    params: {constraints: [{rate: fairness_ratio, kappa: 0.8}], lam: 1/n}
  - {method: logreg, params: {max_iter: 500}}
metrics: [error, fairness_ratio]
plots:
  - {kind: bar, metric: test_error}
  - {kind: scatter, x: test_fairness_ratio, y: test_error}
expect:
  - {metric: test_error, method: logreg, paper: 0.17, tolerance: 0.5, note: "a paper figure",
     source: {kind: paper, where: "Table 1"}}
  - {metric: test_error, method: ramp, "<=": 0.0, source: invariant}
"""


class Page(HTMLParser):
    """The page's sections (id -> heading), tables (rows of cell texts, per section), images'
    sources and every attribute value (to find references to other files or the network)."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, list] = {}
        self.section = None
        self.tables: list[tuple[str, list[list[str]]]] = []
        self.images: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()
        self._cell: list[str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        attrs = dict(attrs)
        self.attributes += [(tag, k, v or "") for k, v in attrs.items()]
        if tag == "section":
            self.section = attrs.get("id")
            self.sections[self.section] = []
        elif tag == "table":
            self.tables.append((self.section, []))
        elif tag == "tr":
            self.tables[-1][1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(attrs.get("src", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        self._text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self._text).split())


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    (folder / "spec.yaml").write_text(SPEC)
    return safeclf.run(folder / "spec.yaml", out=folder / "runs", jobs=2)


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_every_run_folder_gets_a_report_with_its_sections(run):
    page = _parse(run.path / "report.html")
    # adult has groups (sex): the by-group section is there
    assert list(page.sections) == ["summary", "promises", "by_group", "expectations", "plots",
                                   "identity"]
    by_section: dict[str, list] = {}
    for section, rows in page.tables:
        by_section.setdefault(section, []).append(rows)
    (groups,) = by_section["by_group"]
    assert groups[0][:6] == ["dataset", "method", "params", "column", "group", "metric"]
    assert {r[4] for r in groups[1:]} >= {"Female", "Male", "Female vs Male"}
    # summary: one table per method family, one row per (dataset, method, params) + header
    families = [rows for rows in by_section["summary"]
                if rows[0][:4] == ["dataset", "method", "params", "jobs"]]
    assert len(families) == 2
    # then the degenerate models (safeclf.guarantees.trivial), one row per job flagged in metrics.csv
    flagged = int(run.metrics["degenerate"].sum())
    others = [rows for rows in by_section["summary"] if rows not in families]
    assert len(others) == (1 if flagged else 0)
    if flagged:
        assert others[0][0][-1] == "degenerate_reason" and len(others[0]) == flagged + 1
        assert f"{flagged} degenerate models" in page.text
    # promises: ramp's fairness promise with its bound and verdicts; the per-job table gives
    # every job's interval; logreg is named as making none
    header, *rows = by_section["promises"][0]
    assert [r[header.index("model")] for r in rows] == ["adult · ramp"]
    assert "≥ 0.8·s_p(Male)" in rows[0][header.index("promise")]
    per_job = by_section["promises"][1]
    assert len(per_job) == 1 + 2 and {"lower", "upper", "verdict"} <= set(per_job[0])
    for row in per_job[1:]:
        lower, upper = (float(row[per_job[0].index(c)]) for c in ("lower", "upper"))
        assert lower <= float(row[per_job[0].index("estimate")]) <= upper
    assert "No promise made by: logreg" in page.text
    # expectations: the paper's value beside the measured one, and the verdicts
    header, *rows = by_section["expectations"][0]
    assert len(rows) == 2 and rows[0][header.index("reference")] == "0.17"
    assert [r[header.index("verdict")] for r in rows] == ["pass", "FAIL"]
    # ... each with its source, counted apart (issue 34)
    assert [r[header.index("source")] for r in rows] == ["paper", "invariant"]
    assert rows[0][header.index("source_where")] == "Table 1"
    assert "paper 1/1 · figure 0/0 · report 0/0 · project 0/0 · invariant 0/1" in page.text
    # identity: the command, the versions and the resolved spec
    assert "safeclf.run" in page.text and "scikit-learn" in page.text
    assert "constraints:" in page.text and "report_test" in page.text


def test_the_report_is_self_contained(run):
    html = (run.path / "report.html").read_text(encoding="utf-8")
    page = _parse(run.path / "report.html")
    # every plot of the folder is embedded, none is linked
    plots = sorted(p.stem for p in (run.path / "plots").glob("*.png"))
    assert len(plots) == 3 and len(page.images) == len(plots)  # bar, scatter, promises
    for src in page.images:
        assert src.startswith("data:image/svg+xml;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).lstrip().startswith(b"<?xml")
    # nothing is fetched: no script, stylesheet link or frame, no URL outside the page
    assert not page.tags & {"script", "link", "iframe", "object", "embed"}
    assert "http://" not in html and "https://" not in html
    for tag, key, value in page.attributes:
        if key in ("src", "href"):
            assert value.startswith(("data:", "#")), (tag, key, value)


def test_report_command_writes_it_again(run, cli):
    (run.path / "report.html").unlink()
    result = cli("report", run.path)
    assert result.exit_code == 0 and str(run.path / "report.html") in " ".join(result.output.split())
    assert _parse(run.path / "report.html").sections
    bad = cli("report", run.path / "missing")
    assert bad.exit_code == 2 and "not a run folder" in bad.output
