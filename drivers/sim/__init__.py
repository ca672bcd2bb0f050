"""Simulated hardware: a virtual shoe, a dealer that deals it by the rules (with faults on
demand), the `sim` reader driver (the demo's dealer bot), and the rigs that play a shoe
into a pseudo-terminal for the real serial driver. Nothing here is used at a live table
except the `sim` driver in a demo.
"""
