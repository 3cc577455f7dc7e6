"""Value types, constants and strict wire codecs for MC-MQDSRP, MS-MQSD and MS-MQCN.

Nothing in this package makes a protocol decision: it says what bytes mean and refuses bytes
that section 2 of each document forbids.
"""
