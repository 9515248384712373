"""delta-lifecycle: lifecycle operations for Delta Lake tables, as a Spark SQL extension.

The JVM extension does the work; this package bundles its jar, configures sessions for it
and wraps its SQL statements in typed Python calls:

```python
from pyspark.sql import SparkSession
from delta_lifecycle import configure_spark, LifecycleTable

spark = configure_spark(SparkSession.builder.master("local[2]")).getOrCreate()
history = LifecycleTable.for_path(spark, "/data/events").protocol_history()
```

Errors raised by the extension are [`delta_lifecycle.errors`][delta_lifecycle.errors] exceptions.
"""

from __future__ import annotations

from delta_lifecycle import errors
from delta_lifecycle._version import __version__
from delta_lifecycle.config import (
    configure_spark,
    hadoop_aws_package,
    jar_path,
    maven_coordinate,
    route_delta_tables,
    spark_configuration,
)
from delta_lifecycle.errors import DeltaLifecycleError, UnsupportedSparkLineError
from delta_lifecycle.lines import SUPPORTED_LINES, SparkLine, current_line
from delta_lifecycle.progress import OperationProgress, ProgressCallback, log_progress
from delta_lifecycle.results import (
    CheckpointResult,
    CleanedLogFile,
    CleanupResult,
    ClientCompatibility,
    CompactionResult,
    DropFeatureResult,
    LogFileEntry,
    ProtocolVersion,
    RedirectPlan,
    RedirectRefusal,
    RedirectStatus,
)
from delta_lifecycle.tables import LifecycleTable

__all__ = [
    "CheckpointResult",
    "CleanedLogFile",
    "CleanupResult",
    "ClientCompatibility",
    "CompactionResult",
    "DeltaLifecycleError",
    "DropFeatureResult",
    "LifecycleTable",
    "LogFileEntry",
    "OperationProgress",
    "ProgressCallback",
    "ProtocolVersion",
    "RedirectPlan",
    "RedirectRefusal",
    "RedirectStatus",
    "SUPPORTED_LINES",
    "SparkLine",
    "UnsupportedSparkLineError",
    "__version__",
    "configure_spark",
    "current_line",
    "errors",
    "hadoop_aws_package",
    "jar_path",
    "log_progress",
    "maven_coordinate",
    "route_delta_tables",
    "spark_configuration",
]
