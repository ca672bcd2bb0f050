"""Development kit: what the tests, `make bench` and `make floor-demo` run beside the
station (a real nats-server for the floor). Not part of the installed package."""
