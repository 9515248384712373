"""How every test JVM runs: Spark's (tests/conftest.py passes it to each session this run
starts), the Unity Catalog server's (tests/unitycatalog/server.py) and sbt's test JVMs
(build.sbt, ``testJvmTuning``).

A test JVM lives for seconds to minutes on small tables, where the C2 compiler's and the
parallel collector's threads spend more processor time than they return: on two busy cores
the client compiler alone and the serial collector did the same work in about a third less
processor time (bench/README.md, "CI time"). Production JVMs keep the JVM's defaults.
"""

from typing import Tuple

TEST_JVM_TUNING: Tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
