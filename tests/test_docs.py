"""Every example on the documentation site (and in the README) runs, so none can go stale; the
README stays a short front door whose every figure names the page and command behind it.

Per page, in a scratch folder that sees the repository's ``configs/``, ``datasets/`` and
``benchmarks/`` (runs are written there, never into the source tree):

- ``python`` blocks are executed in order in one namespace;
- ``sh`` blocks line by line: ``safeclf`` commands through the command line itself, with two
  exceptions whose options are parsed by the ``run`` command and whose spec, profile and
  overrides are checked as ``validate`` checks them: a ``safeclf run`` without ``--profile ci``
  (a full reproduction, minutes to hours: ``make reproduce`` runs those), and a paper config's
  ci profile as ``make check-configs`` runs it (``safeclf run configs/X.yaml --profile ci
  [--check]``: ``make test`` runs every one of them right after this suite, which the test
  checks in the Makefile; each takes one to five minutes); the quickstart runs for real;
  ``python benchmarks/X.py`` must name a script and ``make T`` a target of the Makefile;
  anything else is an error;
- ``yaml`` blocks are parsed, and one with a ``name``, ``datasets`` and ``methods`` is checked
  as a whole spec; a block headed ``title="X.yaml"`` is written to that file first, and a
  ``safeclf run X.yaml`` of the page then runs for real (a page's own small spec);
- ``text`` blocks (output, synopses, set-up commands) are not run;
- the docstring examples of every object the API reference shows run as doctests.
"""

from __future__ import annotations

import glob
import importlib.util
import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
RUN_LANGS = {"python", "sh", "bash", "yaml"}  # bash: run as sh
KNOWN_LANGS = RUN_LANGS | {"text", "toml"}


TITLE = re.compile(r'title="([\w.-]+)"')


def _blocks(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in FENCE.finditer(text)]


def _titles(page: Path) -> dict[int, str]:
    """The file names of a page's blocks headed ``title="loans.yaml"`` (shown as the file's
    name on the site), by the block's line: the test writes such a block to that file in the
    scratch folder, so the page's commands can use it."""
    text = page.read_text(encoding="utf-8")
    return {text.count("\n", 0, m.start()) + 1: t.group(1) for m in FENCE.finditer(text)
            if (t := TITLE.search(m.group(0).splitlines()[0]))}


PAGES = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]
RUNNABLE = [p for p in PAGES if any(lang in RUN_LANGS for lang, _, _ in _blocks(p))]


def test_every_block_says_what_it_is():
    """A block without a language, or with one this test does not know, would go unchecked."""
    unknown = [(p.relative_to(ROOT), line, lang) for p in PAGES for lang, _, line in _blocks(p)
               if lang not in KNOWN_LANGS]
    assert not unknown
    assert len(RUNNABLE) >= 10  # the guide's pages and the method families have examples


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    for name in ("configs", "datasets", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# configs whose ci profile runs in seconds: the docs' examples run these for real
RUN_FOR_REAL = {"configs/quickstart.yaml"}


def _check_configs_runs_every_ci_profile() -> bool:
    """``make test`` runs ``check-configs``, whose script runs each configs/*.yaml with
    ``--profile ci --check`` (the script's own :func:`command`, asked here)."""
    makefile = (ROOT / "Makefile").read_text()
    test_target = re.search(r"^test:.*?(?=^\S)", makefile, re.M | re.S).group(0)
    recipe = re.search(r"^check-configs:.*?(?=^\S|\Z)", makefile, re.M | re.S).group(0)
    if "check-configs" not in test_target or "benchmarks/_check_configs.py" not in recipe:
        return False
    spec = importlib.util.spec_from_file_location(
        "_check_configs", ROOT / "benchmarks" / "_check_configs.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    args = script.command("configs/x.yaml")
    return (script.CONFIGS == "configs/*.yaml" and args[:2] == ["run", "configs/x.yaml"]
            and args[args.index("--profile") + 1] == "ci" and "--check" in args)


#: Spec files a page wrote (a ``title="X.yaml"`` block): its own small runs, run for real.
WRITTEN: set[str] = set()


def _covered_by_check_configs(args: list[str]) -> bool:
    """``run configs/X.yaml --profile ci [--check] [--out DIR]``: what make check-configs runs."""
    if not args[1].startswith("configs/") or args[1] in RUN_FOR_REAL:
        return False
    rest, options = args[2:], {}
    while rest:
        if rest[0] in ("--profile", "--out") and len(rest) > 1:
            options[rest[0]] = rest[1]
            rest = rest[2:]
        elif rest[0] == "--check":
            rest = rest[1:]
        else:
            return False  # overrides or other options: not what check-configs runs
    return options.get("--profile") == "ci"


def _run_command(args: list[str], cli, where: str, page_text: str) -> None:
    profile = [b for a, b in zip(args, args[1:]) if a == "--profile"]
    covered = args[0] == "run" and _covered_by_check_configs(args)
    if covered:
        assert _check_configs_runs_every_ci_profile(), f"{where}: make test no longer runs it"
    own = args[0] == "run" and len(args) > 1 and args[1] in WRITTEN
    if args[0] == "run" and not own and ("ci" not in profile or covered):
        import typer

        from safeclf.api import read_spec
        from safeclf.cli.app import app
        from safeclf.errors import SpecError

        command = typer.main.get_command(app).commands["run"]
        ctx = command.make_context("run", list(args[1:]))  # unknown options raise here
        p = ctx.params
        try:
            read_spec(p["spec"], p["profile"], p["overrides"] or [])
        except SpecError as exc:  # a reproduction needing the papers' peers: the page says so
            assert "install the bench extra" in str(exc) and "[bench]" in page_text, \
                f"{where}: {exc}"
        return
    result = cli(*args)
    assert result.exit_code == 0, f"{where}: safeclf {' '.join(args)}\n{result.output}"


def _run_shell_line(line: str, cli, where: str, page_text: str) -> None:
    words = shlex.split(line, comments=True)
    if not words:
        return
    head, args = words[0], words[1:]
    if head.endswith("safeclf"):
        expanded = []
        for a in args:
            expanded += sorted(glob.glob(a)) or [a] if "*" in a else [a]
        _run_command(expanded, cli, where, page_text)
    elif head.endswith("python") and args and args[0].startswith("benchmarks/"):
        assert (ROOT / args[0]).is_file(), f"{where}: no script {args[0]}"
    elif head == "make":
        makefile = (ROOT / "Makefile").read_text()
        assert re.search(rf"^{re.escape(args[0])}:", makefile, re.M), f"{where}: no target {args[0]}"
    else:
        raise AssertionError(f"{where}: '{head}' is not a command the docs test can run")


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_examples_run(page, scratch, cli):
    from safeclf.api import read_spec

    namespace: dict = {"__name__": "__docs__"}
    ran, specs = 0, []
    titles = _titles(page)
    WRITTEN.clear()
    for lang, code, line in _blocks(page):
        where = f"{page.relative_to(ROOT)}:{line}"
        if line in titles:
            assert "/" not in titles[line] and not (scratch / titles[line]).exists(), where
            (scratch / titles[line]).write_text(code, encoding="utf-8")
            WRITTEN.add(titles[line])
        if lang == "python":
            exec(compile(code, where, "exec"), namespace)  # noqa: S102
        elif lang in ("sh", "bash"):
            for k, text in enumerate(code.splitlines()):
                _run_shell_line(text, cli, f"{where}+{k + 1}", page.read_text())
        elif lang == "yaml":
            data = yaml.safe_load(code)
            if line in titles:
                read_spec(titles[line])  # paths relative to the file, as safeclf reads it
                if isinstance(data, dict) and {"name", "datasets", "methods"} <= set(data):
                    specs.append((where, [titles[line]]))
            elif isinstance(data, dict) and {"name", "datasets", "methods"} <= set(data):
                read_spec(data)
                spec = scratch / f"doc-spec-{line}.yaml"  # in the folder its paths are from
                spec.write_text(code, encoding="utf-8")
                specs.append((where, [spec]))
        else:
            continue
        ran += 1
    assert ran > 0
    for where, args in specs:  # after the page's code made the files its specs read
        _validate_agrees_with_run(args, cli, where)


# -- validate ≡ run ------------------------------------------------------------------------------

#: Options of ``run`` that ``validate`` does not take and that change nothing ``run`` checks
#: before its first job (``--check`` compares expectations after the jobs).
RUN_ONLY_FLAGS = {"--check", "--dry-run", "--debug"}


def _validate_agrees_with_run(args: list, cli, where: str) -> bool:
    """``safeclf validate ARGS`` and ``safeclf run ARGS --dry-run`` (every check ``run`` makes
    before its first job, nothing more) end alike: the same exit code and stderr; where
    ``run`` accepts the spec, ``validate`` says "valid" and nothing on stderr (it once said
    "valid" and then failed on data ``run`` reads fine). Returns whether ``run`` accepted it."""
    validated = cli("validate", *args)
    dry = cli("run", *args, "--dry-run")
    assert "Traceback" not in validated.output + dry.output, where
    assert (validated.exit_code, validated.stderr) == (dry.exit_code, dry.stderr), \
        f"{where}: validate {args}: {validated.output}\nrun --dry-run: {dry.output}"
    if dry.exit_code == 0:
        assert validated.stderr == "" and ": valid; " in validated.stdout, (where, validated.output)
    return dry.exit_code == 0


def _documented_commands() -> list[tuple[str, list[str]]]:
    """Every ``safeclf run`` and ``safeclf validate`` line of the docs' shell blocks naming a
    spec of ``configs/`` (a spec a page writes is validated with its page, by
    :func:`test_examples_run`), as the arguments ``validate`` takes (``run``'s own flags left
    out; a ``--resume`` is not a spec), each once, with the first place it is written."""
    out: dict[tuple, str] = {}
    for page in PAGES:
        for lang, code, line in _blocks(page):
            if lang not in ("sh", "bash"):
                continue
            for k, text in enumerate(code.splitlines()):
                words = shlex.split(text, comments=True)
                if len(words) < 3 or not words[0].endswith("safeclf") \
                        or words[1] not in ("run", "validate") or "--resume" in words \
                        or not words[2].startswith("configs/"):
                    continue
                args = tuple(w for w in words[2:] if w not in RUN_ONLY_FLAGS)
                out.setdefault(args, f"{page.relative_to(ROOT)}:{line}+{k + 1}")
    return [(where, list(args)) for args, where in out.items()]


COMMANDS = _documented_commands()


@pytest.mark.parametrize("where, args", COMMANDS, ids=[" ".join(a) for _, a in COMMANDS])
def test_validate_agrees_with_run_on_documented_commands(where, args, scratch, cli):
    """Each documented ``safeclf run`` / ``validate`` of a spec: ``validate`` ≡ ``run``'s checks
    before its first job, and ``run`` accepts it (the docs show none that fails), or refuses
    it only for an extra the page says to install (a reproduction against the papers' peers)."""
    if not _validate_agrees_with_run(args, cli, where):
        refused = cli("run", *args, "--dry-run").stderr
        page = (ROOT / where.split(":")[0]).read_text(encoding="utf-8")
        assert "install the bench extra" in refused and "[bench]" in page, (where, refused)
    assert not any(scratch.glob("runs")), "validate and --dry-run write nothing"


def test_validate_agrees_with_run_covers_the_docs():
    """The commands above are the docs' (quickstart, a paper config, an override and the
    Dask and MLflow options among them), and the loans example of docs/models.md, a spec
    reading data with empty cells through an imputer, is one of the spec blocks
    :func:`test_examples_run` validates (once said "valid" and then failed)."""
    flat = [" ".join(args) for _, args in COMMANDS]
    assert len(COMMANDS) >= 20
    assert "configs/quickstart.yaml" in flat
    assert any("--backend dask" in c for c in flat) and any("--mlflow" in c for c in flat)
    assert any("=" in c for c in flat)  # an override
    loans = [yaml.safe_load(code) for lang, code, _ in _blocks(DOCS / "models.md")
             if lang == "yaml"]
    assert any(isinstance(d, dict) and d.get("name") == "loans"
               and d["datasets"][0]["preprocess"]["impute"] == "median" for d in loans)


def _reference_objects() -> list[str]:
    """The dotted names the API reference pages render (``::: name``)."""
    return [name for page in sorted((DOCS / "reference").glob("*.md"))
            for name in re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M)]


def _import(dotted: str):
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_reference_docstring_examples_run(scratch):
    """Examples shown in the API reference are doctests, run here (outputs compared)."""
    import doctest

    names = _reference_objects()
    assert "safeclf.api.run" in names and len(names) >= 15
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    seen, examples = set(), 0
    for name in names:
        for test in finder.find(_import(name), name):
            if test.name in seen:
                continue
            seen.add(test.name)
            examples += len(test.examples)
            runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0
    assert examples >= 3  # safeclf.run's at least

# -- the README -------------------------------------------------------------------------------

README_LIMIT = 12_000  # bytes: the "≤ 12 KB", read strictly
# a measured figure: a decimal (not a bound or setting written after ≤ ≥ < > =) or "k of n"
FIGURE = re.compile(r"(?<![\w.≤≥<>=])(?<![≤≥<>=] )\d+(?:,\d{3})*\.\d+(?!\w|\.\d)"
                    r"|\b\d+(?:,\d{3})* of \d+(?:,\d{3})*\b")
DOC_LINK = re.compile(r"\]\((docs/[^)#\s]+\.md)(?:#([^)\s]+))?\)")
COMMAND = re.compile(r"`((?:safeclf run (configs/[\w.-]+\.yaml)[^`]*)|make reproduce)`")


def _readme_units() -> list[str]:
    """The README's prose without code blocks, one unit per paragraph and per table row."""
    text = FENCE.sub("", (ROOT / "README.md").read_text(encoding="utf-8"))
    units = []
    for para in re.split(r"\n\s*\n", text):
        rows = [r for r in para.splitlines() if r.startswith("|")]
        units += rows if rows else [para]
    return units


def _anchors(page: Path) -> set[str]:
    """The heading anchors MkDocs' toc gives a page (lower case, punctuation dropped, '-')."""
    out = set()
    for title in re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\s-]", "", title.replace("`", "").lower()).strip()
        out.add(re.sub(r"[\s]+", "-", slug))
    return out


def test_readme_is_a_short_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= README_LIMIT, f"README is {len(text.encode())} bytes"
    # the two set-up commands CI and fresh machines rely on, exactly
    assert re.search(r"^make run\b", text, re.M) and re.search(r"^make test\b", text, re.M)
    # every method family and its page; a "More" section (sections may be appended after it)
    for family in ("robust_socp", "mcsvm", "ramp", "proset", "budgeted_selection"):
        assert f"`{family}`" in text and f"(docs/methods/{family}.md)" in text, family
    assert "More" in re.findall(r"^## (.+)$", text, re.M)


def test_readme_spec_is_the_quickstart_make_run_runs():
    """The README's 30-second spec is ``configs/quickstart.yaml``, which ``make run`` runs."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## In 30 seconds", 1)[1].split("\n## ", 1)[0]
    shown = [yaml.safe_load(code) for lang, code in FENCE.findall(section) if lang == "yaml"]
    quickstart = ROOT / "configs" / "quickstart.yaml"
    assert shown == [yaml.safe_load(quickstart.read_text(encoding="utf-8"))]
    makefile = (ROOT / "Makefile").read_text()
    run = re.search(r"^run:.*?(?=^\S|\Z)", makefile, re.M | re.S).group(0)
    assert "safeclf run configs/quickstart.yaml" in run


def test_every_readme_figure_names_its_page_and_command():
    """A figure (a decimal, or 'k of n') sits beside a link to the docs page that states it and a
    command that reproduces it; the page states the figure and names that command."""
    checked = 0
    for unit in _readme_units():
        prose = re.sub(r"`[^`]*`", "", unit)  # numbers inside code are parameters, not figures
        figures = FIGURE.findall(prose)
        if not figures:
            continue
        links = DOC_LINK.findall(unit)
        commands = COMMAND.findall(unit)
        assert links, f"figures {figures} without a link to a docs page: {unit[:80]!r}"
        assert commands, f"figures {figures} without the command that reproduces them: {unit[:80]!r}"
        pages = []
        for target, anchor in links:
            page = ROOT / target
            assert page.is_file(), f"no page {target}"
            if anchor:
                assert anchor in _anchors(page), f"no heading #{anchor} on {target}"
            pages.append(re.sub(r"\s+", " ", page.read_text(encoding="utf-8")))  # one line
        for command, config in commands:
            if config:
                assert (ROOT / config).is_file(), f"no config {config}"
            assert any(command in p for p in pages), f"no linked page names `{command}`"
        for figure in figures:
            assert any(figure in p for p in pages), f"figure {figure} is on no linked page"
        checked += 1
    assert checked >= 5  # one per method family at least
