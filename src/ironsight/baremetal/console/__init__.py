"""The web console: server-rendered pages under `/ui/` on the bare-metal API's listener.

A room of its own beside `api/`: it reads and acts only through the bare-metal API (called
in-process, as the logged-in user, so the API's policy, validation and node history apply
unchanged) and discoverd's API (fleet queries, attempts, the board, discovery), never the
database. See docs/ui.md.
"""
