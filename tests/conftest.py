"""What every test module of this folder shares."""

# pytester's in-process runs (about 250: the suites on wrong adapters) leave sys.modules as they found it, so what one
# run imports the next imports again, and each run's summary imports hypothesis through its pytest plugin (77 modules,
# 0.23 s a run, measured with cProfile). A whole test run imports hypothesis while collecting (tests/test_protocol.py);
# a file run alone did not: tests/test_suites_bite.py's wrong adapters alone took 30 s, now 13 s.
import hypothesis.internal.observability  # noqa: F401
