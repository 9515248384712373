"""MkDocs hooks (registered in mkdocs.yml): the parts of the site generated from the sources
when it is built, so they cannot drift from them.

- docs/errors.md: the table of every error condition and sub-condition, from the
  error-conditions JSON and the condition of each class in python/delta_lifecycle/errors.py;
  the page's hand-written "when" table must name exactly the JSON's conditions.
- docs/sql-reference.md: each statement's syntax, rendered from the ANTLR grammar's rule
  (docs/sql_syntax.py; every labelled alternative of `statement` must have a section, whose
  parameter table explains every placeholder of the syntax and which shows an example with its
  output), and the order of each statement's result
  columns, from the *_COLUMNS tuples of the package python/delta_lifecycle/results/ (a column
  table that follows the marker must name exactly those columns).
- docs/benchmarks.md: bench/README.md, with its plots.

After each page is rendered, docs/site_checks.py checks what a reader would see: leaked markup
(reStructuredText roles, double backticks, types taken for HTML tags), process text (issue
numbers, dates, load averages, this repository's commit hashes), and, once the site is built,
every relative link and anchor. The build fails on any of them, listing each.

A mismatch raises PluginError, which fails the build. The sources are read as text (ast for
Python), never imported, so building the site needs neither Spark nor the jar.
"""

from __future__ import annotations

import ast
import html
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
# mkdocs loads this file by path; its sibling module is imported the same way.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_checks  # noqa: E402
import sql_syntax  # noqa: E402
ERRORS_JSON = ROOT / "scala/src/main/resources/error/delta-lifecycle-error-conditions.json"
ERRORS_PY = ROOT / "python/delta_lifecycle/errors.py"
ERRORS_MD = ROOT / "docs/errors.md"
#: The result types, one module a statement family (delta_lifecycle.results re-exports them).
RESULTS_PACKAGE = ROOT / "python/delta_lifecycle/results"
GRAMMAR = ROOT / "scala/src/main/antlr4/io/github/deltalifecycle/sql/parser/DeltaLifecycleSqlBase.g4"
BENCH_README = ROOT / "bench/README.md"
BENCH_RESULTS = ROOT / "bench/results"
#: Where the site serves bench/results/ from (bench/README.md's links are rewritten to it).
BENCH_RESULTS_URL = "bench-results"

ERRORS_MARKER = "<!-- generated: error conditions -->"
FIXES_MARKER = "<!-- generated: what to do for each error condition -->"
INCLUDE_MARKER = "<!-- include: bench/README.md -->"
GRAMMAR_MARKER = re.compile(r"^<!-- grammar: (\w+) -->$", re.MULTILINE)
COLUMNS_MARKER = re.compile(r"^<!-- columns: (\w+) -->$")


# ---- sources ------------------------------------------------------------------------------


def error_conditions() -> Dict[str, Dict[str, Any]]:
    conditions: Dict[str, Dict[str, Any]] = json.loads(ERRORS_JSON.read_text(encoding="utf-8"))
    return conditions


def python_error_classes() -> Dict[str, str]:
    """Condition -> the class of python/delta_lifecycle/errors.py whose CONDITION it is."""
    classes: Dict[str, str] = {}
    for node in ast.parse(ERRORS_PY.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "CONDITION" for t in stmt.targets)
                and isinstance(stmt.value, ast.Constant)
                and stmt.value.value
            ):
                classes[str(stmt.value.value)] = node.name
    return classes


def result_columns() -> Dict[str, Tuple[str, ...]]:
    """The module-level *_COLUMNS tuples of the modules of python/delta_lifecycle/results/."""
    columns: Dict[str, Tuple[str, ...]] = {}
    for module in sorted(RESULTS_PACKAGE.glob("*.py")):
        for node in ast.parse(module.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
                if name.endswith("_COLUMNS") and node.value is not None:
                    if name in columns:
                        raise PluginError(f"results/{module.name} defines {name} a second time")
                    columns[name] = tuple(ast.literal_eval(node.value))
    return columns


def grammar_statements() -> Dict[str, str]:
    """Label -> the text of that alternative of the grammar's `statement` rule, in order."""
    text = GRAMMAR.read_text(encoding="utf-8")
    match = re.search(r"^statement\s*\n\s*:(.*?)^\s*;", text, re.MULTILINE | re.DOTALL)
    if match is None:
        raise PluginError(f"{GRAMMAR.name} has no `statement` rule")
    statements: Dict[str, str] = {}
    for alternative, label in re.findall(r"(.*?)#(\w+)", match.group(1), re.DOTALL):
        statements[label] = " ".join(alternative.strip().lstrip("|").split())
    return statements


# ---- rendering ----------------------------------------------------------------------------


def table_cell(text: str) -> str:
    """Text shown as is in a Markdown table cell: no tags, emphasis, code or column breaks."""
    escaped = html.escape(text, quote=False)
    for char, entity in (("|", "&#124;"), ("*", "&#42;"), ("`", "&#96;"), ("_", "&#95;")):
        escaped = escaped.replace(char, entity)
    return escaped


def errors_table() -> str:
    conditions = error_conditions()
    classes = python_error_classes()
    missing = sorted(set(conditions) - set(classes))
    if missing:
        raise PluginError(f"errors.py has no class for {missing}")
    lines = [
        "| condition | SQLSTATE | Python exception | message template |",
        "| --- | --- | --- | --- |",
    ]
    for name in sorted(conditions):
        entry = conditions[name]
        message = " ".join(entry["message"])
        lines.append(
            f"| `{name}` | `{entry['sqlState']}` | `{classes[name]}` | {table_cell(message)} |"
        )
        # A sub-condition's message is the condition's template, a space, then its own (as
        # Spark renders its subClass); the exception keeps the condition's name and class.
        for sub_name, sub in sorted(entry.get("subClass", {}).items()):
            full = f"{message} {' '.join(sub['message'])}"
            lines.append(
                f"| `{name}.{sub_name}` | `{entry['sqlState']}` | `{classes[name]}` "
                f"| {table_cell(full)} |"
            )
    return "\n".join(lines)


WHEN_ROW = re.compile(r"^\| `(DELTA_LIFECYCLE_\w+)` \|(.*)$", re.MULTILINE)


def when_rows(markdown: str) -> Dict[str, Tuple[str, str]]:
    """Condition -> (when it happens, what to do), from the "When each is raised" table."""
    section = markdown.split("## When each is raised", 1)
    if len(section) != 2:
        raise PluginError("errors.md has no 'When each is raised' section")
    rows: Dict[str, Tuple[str, str]] = {}
    for condition, rest in WHEN_ROW.findall(section[1].split("\n## ", 1)[0]):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", rest.rstrip().rstrip("|"))]
        if len(cells) != 2 or not all(cells):
            raise PluginError(
                f"errors.md: the row of {condition} needs two cells after the condition, "
                "when it happens and what to do"
            )
        rows[condition] = (cells[0], cells[1])
    return rows


def check_when_table(markdown: str) -> None:
    """The page's "When each is raised" table names exactly the JSON's conditions, each with
    when it happens and what to do."""
    named = set(when_rows(markdown))
    expected = set(error_conditions())
    if named != expected:
        raise PluginError(
            "errors.md's 'When each is raised' table does not match the error-conditions JSON: "
            f"missing {sorted(expected - named)}, unknown {sorted(named - expected)}"
        )


def condition_anchor(condition: str) -> str:
    return condition.lower()


def with_condition_anchors(markdown: str) -> str:
    """Each row of the "When each is raised" table gets its condition's anchor
    (errors.md#delta_lifecycle_not_a_delta_table)."""
    return WHEN_ROW.sub(
        lambda m: f'| <span id="{condition_anchor(m.group(1))}"></span>`{m.group(1)}` |'
        + m.group(2),
        markdown,
    )


def fixes_table() -> str:
    """Troubleshooting's table: every condition, linked to its row of errors.md, and what to
    do, read from errors.md's "When each is raised" table."""
    rows = when_rows(ERRORS_MD.read_text(encoding="utf-8"))
    lines = ["| error condition | what to do |", "| --- | --- |"]
    for condition in sorted(rows):
        link = f"[`{condition}`](errors.md#{condition_anchor(condition)})"
        lines.append(f"| {link} | {rows[condition][1]} |")
    return "\n".join(lines)


def grammar_block(label: str, statements: Dict[str, str]) -> str:
    """The statement's syntax as users write it, rendered from its grammar rule."""
    if label not in statements:
        raise PluginError(f"sql-reference.md names `{label}`, which the grammar does not have")
    syntax, _ = sql_syntax.render(GRAMMAR.read_text(encoding="utf-8"), label)
    return f"**Syntax**\n\n```sql\n{syntax}\n```\n"


def statement_sections(markdown: str) -> Dict[str, str]:
    """Grammar label -> the text of the section (from its `##` heading to the next) that holds
    its marker."""
    sections: Dict[str, str] = {}
    for section in re.split(r"^(?=## )", markdown, flags=re.MULTILINE):
        for label in GRAMMAR_MARKER.findall(section):
            sections[label] = section
    return sections


def check_statement_sections(markdown: str) -> None:
    """Each statement's section has a parameter table naming every placeholder of its syntax,
    and at least one example with its output (a ```sql block followed by a ```text block)."""
    grammar = GRAMMAR.read_text(encoding="utf-8")
    for label, section in statement_sections(markdown).items():
        _, placeholders = sql_syntax.render(grammar, label)
        parts = section.split("**Parameters**", 1)
        if len(parts) != 2:
            raise PluginError(f"sql-reference.md: the section of `{label}` has no **Parameters**")
        rows = [l for l in parts[1].lstrip("\n").split("\n\n", 1)[0].split("\n")
                if l.startswith("|")]
        documented = set(table_column_names(rows))
        missing = [p for p in placeholders if p not in documented]
        if missing:
            raise PluginError(
                f"sql-reference.md: the parameter table of `{label}` does not explain {missing}"
            )
        if not re.search(r"```sql\n.*?```\s*```text\n", section, re.DOTALL):
            raise PluginError(
                f"sql-reference.md: the section of `{label}` has no example with its output "
                "(a ```sql block followed by a ```text block)"
            )


def table_column_names(rows: List[str]) -> List[str]:
    """The column names a hand-written column table documents: every `name` of its first cell."""
    names: List[str] = []
    for row in rows[2:]:
        first = row.strip().strip("|").split("|")[0]
        names += re.findall(r"`([^`]+)`", first)
    return names


def render_columns(markdown: str) -> str:
    columns = result_columns()
    lines = markdown.split("\n")
    out: List[str] = []
    for i, line in enumerate(lines):
        match = COLUMNS_MARKER.match(line)
        if match is None:
            out.append(line)
            continue
        name = match.group(1)
        if name not in columns:
            raise PluginError(f"sql-reference.md: delta_lifecycle.results has no {name}")
        following = [l for l in lines[i + 1 :] if l.strip()][:1]
        if following and following[0].startswith("|"):
            start = lines.index(following[0], i + 1)
            rows = []
            for row in lines[start:]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            documented = table_column_names(rows)
            if sorted(documented) != sorted(columns[name]):
                raise PluginError(
                    f"sql-reference.md: the column table after {name} documents {documented}, "
                    f"the statement returns {list(columns[name])}"
                )
        listed = ", ".join(f"`{c}`" for c in columns[name])
        out.append(f"Result columns, in order (`delta_lifecycle.results.{name}`): {listed}.")
    return "\n".join(out)


def render_sql_reference(markdown: str) -> str:
    statements = grammar_statements()
    documented = set(GRAMMAR_MARKER.findall(markdown))
    missing = [label for label in statements if label not in documented]
    if missing:
        raise PluginError(
            f"sql-reference.md has no section for the grammar's statements {missing} "
            "(add one with a `<!-- grammar: label -->` marker)"
        )
    check_statement_sections(markdown)
    markdown = GRAMMAR_MARKER.sub(lambda m: grammar_block(m.group(1), statements), markdown)
    return render_columns(markdown)


#: The part of bench/README.md the site shows: its summary of headline ratios. The rest is the
#: record of every run (commits, dates, machine load), which stays in the repository.
SITE_SUMMARY = re.compile(r"<!-- site: from here[^>]*-->(.*?)<!-- site: to here -->", re.S)


def bench_readme() -> str:
    found = SITE_SUMMARY.search(BENCH_README.read_text(encoding="utf-8"))
    if not found:
        raise PluginError("bench/README.md lost its <!-- site: from here/to here --> markers")
    text = found.group(1)
    text = text.replace("](results/", f"]({BENCH_RESULTS_URL}/")
    # Its title would be a second h1 on the page: one level down for every heading.
    return re.sub(r"^(#+) ", r"#\1 ", text, flags=re.MULTILINE)


# ---- MkDocs events ------------------------------------------------------------------------


def on_files(files: Files, config: Any) -> Files:
    """bench/results/*.png are served under bench-results/ for the included bench/README.md."""
    for png in sorted(BENCH_RESULTS.glob("*.png")):
        files.append(
            File.generated(config, f"{BENCH_RESULTS_URL}/{png.name}", abs_src_path=str(png))
        )
    return files


_PROBLEMS: List[str] = []
_COMMITS: List[Optional[site_checks.CommitIndex]] = []


def _commit_index() -> Optional[site_checks.CommitIndex]:
    if not _COMMITS:
        commits = site_checks.repository_commits(ROOT)
        _COMMITS.append(None if commits is None else site_checks.CommitIndex(commits))
    return _COMMITS[0]


def on_pre_build(config: Any) -> None:
    _PROBLEMS.clear()


#: What draws a page's diagrams: the vendored mermaid and the call that runs it.
DIAGRAM_SCRIPTS = ("assets/javascripts/mermaid.min.js", "assets/javascripts/diagrams.js")


def with_diagram_scripts(output: str, page_url: str) -> str:
    """A page with a ```mermaid block (a div.diagram) gets the scripts that draw it; other
    pages do not load mermaid at all."""
    if 'class="diagram"' not in output:
        return output
    root = "../" * page_url.count("/")
    tags = "".join(f'<script src="{root}{script}"></script>' for script in DIAGRAM_SCRIPTS)
    return output.replace("</body>", tags + "</body>", 1)


def on_post_page(output: str, page: Any, config: Any) -> str:
    """What a reader sees on the page: no leaked markup, no process text."""
    _PROBLEMS.extend(site_checks.check_page(output, page.file.src_uri, _commit_index()))
    return with_diagram_scripts(output, page.url)


def on_post_build(config: Any) -> None:
    problems = _PROBLEMS + site_checks.check_links(Path(config["site_dir"]))
    if problems:
        raise PluginError(
            f"the site has {len(problems)} defects a reader would see (docs/site_checks.py):\n  "
            + "\n  ".join(problems)
        )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = page.file.src_uri
    if source == "errors.md":
        if ERRORS_MARKER not in markdown:
            raise PluginError(f"errors.md has no {ERRORS_MARKER}")
        check_when_table(markdown)
        return with_condition_anchors(markdown).replace(ERRORS_MARKER, errors_table())
    if source == "troubleshooting.md":
        if FIXES_MARKER not in markdown:
            raise PluginError(f"troubleshooting.md has no {FIXES_MARKER}")
        return markdown.replace(FIXES_MARKER, fixes_table())
    if source == "sql-reference.md":
        return render_sql_reference(markdown)
    if source == "benchmarks.md":
        return markdown.replace(INCLUDE_MARKER, bench_readme())
    return markdown
