"""The floor service (`station floor`): every table's journal rows from the broker into one
floor archive, each table's hash chain checked on arrival, and the floor's view of every
table (its state replayed by the station's own core, whether it is online, how far
behind). The API and the floor page are in `station.api.floor`."""
