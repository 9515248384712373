"""Which Spark line the test process runs, and what the tests must do differently on it.

The tests run on Spark 3.5 too (delta-spark 3.3; tests/pytest_on_line.py). Where lines differ,
tests assert each line's own behaviour (docs/spark-lines.md, "Known differences between lines").
"""

from __future__ import annotations

import pyspark
from pyspark.errors import PySparkException

#: Whether this process runs pyspark 3.5.
ON_SPARK_35 = pyspark.__version__.startswith("3.5.")


def pyspark_error(message: str, condition: str) -> PySparkException:
    """A PySparkException with ``condition``, as the session's pyspark spells the argument
    (``errorClass`` from pyspark 4, ``error_class`` in 3.5)."""
    if ON_SPARK_35:
        # pyspark 3.5 takes a message or a condition, not both, as errors from the JVM carry.
        error = PySparkException(message=message)
        error.error_class = condition  # type: ignore[attr-defined]
        return error
    return PySparkException(message=message, errorClass=condition)
