"""What both programs use, the live station and the floor service: the journal's row and
its hash chain, the wire messages between station and floor, tokens, log formats, systemd
notify, the shared config sections and the protection index. It imports neither program
(an import-linter contract keeps it so)."""
