"""How the suites judge: the pytest plugin, outcomes and messages that cite the spec, known failures,
and every numeric limit with the reason behind it."""
