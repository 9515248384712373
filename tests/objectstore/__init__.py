"""The object-store suite: every statement end to end on ``s3a://`` tables in a local
S3-compatible server (``server.py``). A package, so that its conftest and modules do not
clash by name with the ones in ``tests/``."""
