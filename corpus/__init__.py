"""Readers of the corpus under ``fixtures/``: the requirement registry, configuration and chunk cases,
streams, stores, and the deterministic images and encoding modes the suites build cases from."""
