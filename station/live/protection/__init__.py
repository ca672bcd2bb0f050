"""Game protection in the live station: the monitor that runs the core's checks on every
committed batch (`monitor`), its `[protection]` config (`config`) and the dealing-pace
watch (`pace`). The shoe-history index both programs keep is `station.shared.protection_index`."""
