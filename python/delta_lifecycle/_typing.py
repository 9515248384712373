"""Type aliases shared by this package's modules.

They live apart from the modules that use them so that no module imports another only for
its types (`progress` and `tables` once imported each other that way).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from pyspark.sql import SparkSession as ClassicSparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSparkSession

__all__ = ["AnySparkSession"]

#: A classic session or a Spark Connect session; both run SQL text the same way. The members
#: are forward references so that importing this module needs no Spark Connect dependencies.
AnySparkSession = Union["ClassicSparkSession", "ConnectSparkSession"]
