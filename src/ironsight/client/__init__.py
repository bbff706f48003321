"""The operator-side HTTP client of both APIs: used by the CLI, the lab, the demo and the
benchmarks.

`http` talks to the bare-metal API (and to any JSON API root); `wait` polls either API until
nodes or introspections settle. Neither knows of click or printing, so every program that
drives the services shares one client and one wait loop.
"""
