"""The scenario files (``*.yaml``): the MC-MQDSRP section 4 examples, the errata demonstrations and
the counterexamples; installed as ``mqspec.scenarios`` so that an installed mqspec can run them."""
