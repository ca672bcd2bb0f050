"""The floor: each station publishes its committed journal rows to a NATS JetStream
stream (`publisher`), and the floor service consumes, checks and archives them. The
message format both sides share is `messages`; `broker` runs a real nats-server (tests,
benchmarks, the demo)."""
