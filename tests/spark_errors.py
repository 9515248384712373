"""Reading an error's condition in every supported pyspark (imported by the tests through
conftest, and by the subprocess scripts that must not import conftest)."""

from __future__ import annotations

from typing import Optional

from pyspark.errors import PySparkException


def condition_of(error: PySparkException) -> Optional[str]:
    """The error's condition, as the session's pyspark names the getter (``getCondition`` from
    pyspark 4, ``getErrorClass`` in 3.5)."""
    if hasattr(error, "getCondition"):
        return error.getCondition()
    return error.getErrorClass()  # type: ignore[no-any-return]
