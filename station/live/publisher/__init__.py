"""The station's side of the floor: a process of its own (`process`, `worker`) that reads
the committed journal and publishes each row to the floor's NATS JetStream stream
(`publisher`), configured by the station's `[floor]` section (`settings`). The messages
it speaks are `station.shared.messages`, which the floor service imports too."""
