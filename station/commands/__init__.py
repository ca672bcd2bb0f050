"""Subcommands of `station`, one module each (see `station.cli`)."""
