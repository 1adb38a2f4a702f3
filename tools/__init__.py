"""Tools run by hand: benchmarks that print ratios measured in one run, and a fuzzing campaign."""
