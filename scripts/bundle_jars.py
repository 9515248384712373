"""Bundle built jars into the Python package as a small Maven repository.

    python scripts/bundle_jars.py [--only-line LINE] JAR...

Each ``delta-lifecycle_<line>_<scala>-<version>.jar`` goes to
``python/delta_lifecycle/maven/<group path>/<artifact>/<version>-<digest>/`` with a POM that
declares no dependencies (delta-spark and Spark come from the session's own packages). The
version carries the first 12 hex digits of the jar's SHA-256: Ivy never looks again at a
revision it has cached, so every build needs a revision of its own for a session to resolve
it rather than an earlier build of the same release (docs/cluster.md). Any earlier bundle of
the same artifact is removed.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BUNDLE = REPO_ROOT / "python" / "delta_lifecycle" / "maven"
GROUP = "io.github.deltalifecycle"
JAR_NAME = re.compile(r"^(delta-lifecycle_\d+\.\d+_\d+\.\d+)-(\d+\.\d+\.\d+)\.jar$")

POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>{group}</groupId>
  <artifactId>{artifact}</artifactId>
  <version>{version}</version>
  <packaging>jar</packaging>
</project>
"""


def bundle(jar: Path) -> Path:
    match = JAR_NAME.match(jar.name)
    if not match:
        sys.exit(f"bundle_jars: {jar.name} is not named delta-lifecycle_<line>_<scala>-<version>.jar")
    artifact, release = match.groups()
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()[:12]
    version = f"{release}-{digest}"
    artifact_dir = BUNDLE.joinpath(*GROUP.split("."), artifact)
    shutil.rmtree(artifact_dir, ignore_errors=True)
    target = artifact_dir / version
    target.mkdir(parents=True)
    shutil.copyfile(jar, target / f"{artifact}-{version}.jar")
    (target / f"{artifact}-{version}.pom").write_text(
        POM.format(group=GROUP, artifact=artifact, version=version)
    )
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clean", action="store_true", help="remove every bundled jar first")
    parser.add_argument("jars", nargs="*", type=Path)
    args = parser.parse_args()
    if args.clean:
        shutil.rmtree(BUNDLE, ignore_errors=True)
    for jar in args.jars:
        print(f"bundled {jar.name} as {bundle(jar).relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
