"""The reference implementation: MC-MQDSRP event handlers over a deterministic simulated MSMQ.

``clock`` is simulated time (a scheduler with no wall clock) and the product's timer defaults;
``transport`` is the MSMQ Express transport the handlers send and receive replication messages
through, with fault injection. The handlers return their effects as data (``effects``).
"""
