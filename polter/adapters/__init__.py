"""The adapter-plugin contract and discovery. The core never names a specific CLI."""
