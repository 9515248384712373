"""MkDocs hooks (registered in mkdocs.yml): the parts of the site generated from the sources
when it is built, so they cannot drift from them.

- docs/errors.md: the table of every error condition and sub-condition, from the
  error-conditions JSON and the condition of each class in python/delta_lifecycle/errors.py;
  the page's hand-written "when" table must name exactly the JSON's conditions.
- docs/sql-reference.md: each statement's grammar rule, from the ANTLR grammar (every labelled
  alternative of `statement` must have a section), and the order of each statement's result
  columns, from the *_COLUMNS tuples of the package python/delta_lifecycle/results/ (a column
  table that follows the marker must name exactly those columns).
- docs/benchmarks.md: bench/README.md, with its plots.

A mismatch raises PluginError, which fails the build. The sources are read as text (ast for
Python), never imported, so building the site needs neither Spark nor the jar.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
ERRORS_JSON = ROOT / "scala/src/main/resources/error/delta-lifecycle-error-conditions.json"
ERRORS_PY = ROOT / "python/delta_lifecycle/errors.py"
#: The result types, one module a statement family (delta_lifecycle.results re-exports them).
RESULTS_PACKAGE = ROOT / "python/delta_lifecycle/results"
GRAMMAR = ROOT / "scala/src/main/antlr4/io/github/deltalifecycle/sql/parser/DeltaLifecycleSqlBase.g4"
BENCH_README = ROOT / "bench/README.md"
BENCH_RESULTS = ROOT / "bench/results"
#: Where the site serves bench/results/ from (bench/README.md's links are rewritten to it).
BENCH_RESULTS_URL = "bench-results"

ERRORS_MARKER = "<!-- generated: error conditions -->"
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


def check_when_table(markdown: str) -> None:
    """The page's "When each is raised" table names exactly the JSON's conditions."""
    section = markdown.split("## When each is raised", 1)
    if len(section) != 2:
        raise PluginError("errors.md has no 'When each is raised' section")
    named = set(re.findall(r"^\| `(DELTA_LIFECYCLE_\w+)` \|", section[1], re.MULTILINE))
    expected = set(error_conditions())
    if named != expected:
        raise PluginError(
            "errors.md's 'When each is raised' table does not match the error-conditions JSON: "
            f"missing {sorted(expected - named)}, unknown {sorted(named - expected)}"
        )


def grammar_block(label: str, statements: Dict[str, str]) -> str:
    if label not in statements:
        raise PluginError(f"sql-reference.md names `{label}`, which the grammar does not have")
    return (
        f"Grammar (`{GRAMMAR.name}`, `#{label}`):\n\n"
        f"```antlr\n{statements[label]}\n```\n"
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
    markdown = GRAMMAR_MARKER.sub(lambda m: grammar_block(m.group(1), statements), markdown)
    return render_columns(markdown)


def bench_readme() -> str:
    text = BENCH_README.read_text(encoding="utf-8")
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


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = page.file.src_uri
    if source == "errors.md":
        if ERRORS_MARKER not in markdown:
            raise PluginError(f"errors.md has no {ERRORS_MARKER}")
        check_when_table(markdown)
        return markdown.replace(ERRORS_MARKER, errors_table())
    if source == "sql-reference.md":
        return render_sql_reference(markdown)
    if source == "benchmarks.md":
        return markdown.replace(INCLUDE_MARKER, bench_readme())
    return markdown
