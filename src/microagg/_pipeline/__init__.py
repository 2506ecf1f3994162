"""The release pipeline (private): a :class:`~microagg._pipeline.request.Request` built once,
small stages that run it, one verifier, one :class:`~microagg._pipeline.result.Release`.

See ``DESIGN.md``: faces (Python, CLI, workbench) build Requests; engines (in memory,
blocked, file, Dask, stream) run them; every one of them hands back a Release.
"""
