"""The exploration engine: the replication state machine and what drives, shrinks and hunts with it.

It lives in the package (not under ``tests/``) so that the Spark executors of ``mqspec pipeline
explore`` can import it; ``tests/stateful`` holds only the tests of it.

- :mod:`.driver`: replayable inputs performed on a World, their trace, inputs as scenario files;
- :mod:`.machine`: the hypothesis state machine, every invariant checked after every step;
- :mod:`.minimize`: the settle phase that ends every run, delta debugging of failing inputs;
- :mod:`.hunt`: literal-mode hunts of one invariant's violation.
"""
