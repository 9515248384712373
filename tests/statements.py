"""Every SQL statement of this project, once: the tests that mean to cover "every statement"
iterate over :data:`STATEMENTS`, and ``tests/test_statements.py`` fails when the grammar
gains a statement this table lacks, or when an entry's template or columns stop matching
the statement it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Tuple

from delta_lifecycle.results import (
    CHECKPOINT_COLUMNS,
    CLEANUP_COLUMNS,
    COMPACTION_COLUMNS,
    COMPATIBILITY_COLUMNS,
    DROP_FEATURE_COLUMNS,
    LOG_FILES_COLUMNS,
    PROTOCOL_HISTORY_COLUMNS,
    REDIRECT_COLUMNS,
)

REPO_ROOT = Path(__file__).resolve().parents[1]

#: The grammar of this project's statements.
GRAMMAR = (
    REPO_ROOT
    / "scala/src/main/antlr4/io/github/deltalifecycle/sql/parser/DeltaLifecycleSqlBase.g4"
)


@dataclass(frozen=True)
class Statement:
    """One statement of this project.

    ``name`` is the label of its alternative in the grammar's ``statement`` rule. ``sql`` is
    a template of the statement in its plain form (no DRY RUN) on the table ``{t}`` (a name,
    or ``delta.`<path>```); SET REDIRECT's destination is ``{destination}``, a location.
    ``writes`` says whether the plain form may change the table; ``columns`` are its result
    columns, as the result types of python/delta_lifecycle/results/ read them.
    """

    name: str
    sql: str
    writes: bool
    columns: Tuple[str, ...]

    def on(self, table: str, destination: str = "") -> str:
        """The statement's text on ``table``."""
        return self.sql.format(t=table, destination=destination)

    def on_path_template(self) -> str:
        """The template on a table's path ``{t}`` (``delta.`{t}```), SET REDIRECT's
        destination next to it, as the path-based lists of tests/test_bad_input.py have it."""
        return self.on("delta.`{t}`", "{t}-moved")


STATEMENTS: Tuple[Statement, ...] = (
    Statement(
        "describeProtocolHistory", "DESCRIBE PROTOCOL HISTORY {t}", False, PROTOCOL_HISTORY_COLUMNS
    ),
    Statement(
        "describeCompatibility",
        "DESCRIBE COMPATIBILITY {t} FOR 'deltalake-1.x'",
        False,
        COMPATIBILITY_COLUMNS,
    ),
    Statement("compactLog", "ALTER TABLE {t} COMPACT LOG", True, COMPACTION_COLUMNS),
    Statement("cleanLog", "ALTER TABLE {t} CLEAN LOG", True, CLEANUP_COLUMNS),
    Statement(
        "dropFeature", "ALTER TABLE {t} DROP FEATURE deletionVectors", True, DROP_FEATURE_COLUMNS
    ),
    Statement(
        "dropFeaturesForClient",
        "ALTER TABLE {t} DROP FEATURES FOR CLIENT 'deltalake-1.x'",
        True,
        DROP_FEATURE_COLUMNS,
    ),
    Statement(
        "setRedirect", "ALTER TABLE {t} SET REDIRECT TO '{destination}'", True, REDIRECT_COLUMNS
    ),
    Statement("unsetRedirect", "ALTER TABLE {t} UNSET REDIRECT", True, REDIRECT_COLUMNS),
    Statement("describeRedirect", "DESCRIBE REDIRECT {t}", False, REDIRECT_COLUMNS),
    Statement("describeLogFiles", "DESCRIBE LOG FILES {t}", False, LOG_FILES_COLUMNS),
    Statement("checkpoint", "ALTER TABLE {t} CHECKPOINT", True, CHECKPOINT_COLUMNS),
)

BY_NAME: Dict[str, Statement] = {s.name: s for s in STATEMENTS}


def grammar_statement_names() -> FrozenSet[str]:
    """The labels of the alternatives of the grammar's ``statement`` rule."""
    text = GRAMMAR.read_text()
    rule = re.search(r"^statement\s*\n(.*?)^\s*;", text, re.M | re.S)
    assert rule is not None, f"{GRAMMAR} has no statement rule"
    return frozenset(re.findall(r"#(\w+)", rule.group(1)))
