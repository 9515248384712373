"""Reading an error's condition in every supported pyspark (imported by the tests, and by the
subprocess scripts, which must not import what changes a test run's environment)."""

from __future__ import annotations

from typing import Optional

from pyspark.errors import PySparkException


def condition_of(error: Exception) -> Optional[str]:
    """The error's condition, as the session's pyspark names the getter (``getCondition`` from
    pyspark 4, ``getErrorClass`` in 3.5)."""
    java = getattr(error, "java_exception", None)
    if not isinstance(error, PySparkException) and java is not None:
        # A JVM error PySpark does not convert (delta-spark's own): ask the JVM exception.
        try:
            return java.getCondition()  # type: ignore[no-any-return]
        except Exception:  # delta-spark 3.3 on Spark 3.5 names it getErrorClass
            return java.getErrorClass()  # type: ignore[no-any-return]
    if hasattr(error, "getCondition"):
        return error.getCondition()
    return error.getErrorClass()  # type: ignore[no-any-return]
