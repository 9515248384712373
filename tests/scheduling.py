"""The order in which the test modules run, and how pytest-xdist hands them to its workers
(the hooks in tests/conftest.py apply them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest

#: The modules that take longest (``--durations`` of a CI run), longest first. The parallel
#: run (pytest-xdist, a module per worker, ``--no-loadscope-reorder`` in the Makefile) hands
#: out modules in collection order, so these start first instead of leaving one worker
#: running alone at the end.
LONGEST_MODULES = (
    "test_spark_lines.py",
    "test_redirect_streaming.py",
    "test_redirect_streaming_paths.py",
    "test_differential.py",
    # These three and test_unity_catalog.py run as one unit (ONE_WORKER_FOLDERS).
    "test_catalog_managed.py",
    "test_uc_move.py",
    "test_uc_routing.py",
    "test_redirect_copy.py",
    "test_out_of_memory.py",
    "test_concurrent_writers.py",
    "test_bad_input.py",
    "test_drop_feature.py",
)


def longest_first(items: List[pytest.Item]) -> None:
    """Sort ``items`` so that the modules of :data:`LONGEST_MODULES` come first, in its order."""
    rank = {name: i for i, name in enumerate(LONGEST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


#: Test folders whose modules all run on one pytest-xdist worker, one after another, so that
#: they share what their session-scoped fixtures start: for tests/unitycatalog, one Unity Catalog
#: server, one JVM with UC's connector and one stock session with it, instead of one of each on
#: every worker that runs one of its modules.
ONE_WORKER_FOLDERS = ("unitycatalog",)


def folder_grouped_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (make test), but with each of :data:`ONE_WORKER_FOLDERS` one unit
    of work instead of one per module; None (xdist's own) for any other ``--dist``."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FolderGroupedScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            folder = Path(module).parent
            return str(folder) if folder.name in ONE_WORKER_FOLDERS else module

    return FolderGroupedScheduling(config, log)
