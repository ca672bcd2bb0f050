"""The live station on top of the core: the journal (SQLite), the single writer, the
replay stream, webhooks and the shoe's card stop, API tokens, configuration and systemd
notification. The API (`station.api`) and the commands (`station.commands`) sit above it.
"""
