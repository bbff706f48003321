"""The API toolkit both services are built from (server side), and what every client of ours
needs to read their answers (`errors`, `pagination`: no web framework imported there)."""
