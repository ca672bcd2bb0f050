"""The pure core: cards and points, the rules as data, the table's state machine, results,
odds, paytables, settlement, roads and the published snapshot of a table.

Standard library and numpy only (import-linter checks it): no I/O, no clock, no threads,
so `station replay`, the live station and the tests all decide with the same code.
"""
