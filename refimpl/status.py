"""HRESULT status codes the MC-MQDSRP handlers and the modelled [MS-MQDS] directory return.

MQ_OK and the MQ_ERROR_* values are the public MSMQ values. The MQDS_* codes that MC-MQDSRP
names (MQDS_OBJECT_NOT_FOUND, MQDS_UNKNOWN_SOURCE, MQDS_NO_RSP_FROM_OWNER,
MQDS_OWNER_NOT_REACHED) have no value in the documents provided here; mqspec assigns them
distinct failure values in the 0xC00E05xx range (modelling entry E-199). Only their identity
matters to the protocol: every handler compares statuses by name, never by number.
"""

MQ_OK = 0x00000000
MQ_ERROR = 0xC00E0001
MQ_ERROR_QUEUE_NOT_FOUND = 0xC00E0003
MQ_ERROR_QUEUE_EXISTS = 0xC00E0005
MQ_ERROR_ILLEGAL_PROPID = 0xC00E0039

MQDS_OBJECT_NOT_FOUND = 0xC00E0501
MQDS_UNKNOWN_SOURCE = 0xC00E0502
MQDS_NO_RSP_FROM_OWNER = 0xC00E0503
MQDS_OWNER_NOT_REACHED = 0xC00E0504
MQDS_OBJECT_EXISTS = 0xC00E0505

NAMES = {value: name for name, value in dict(globals()).items() if name.startswith("MQ")}


def status_name(status: int) -> str:
    """The symbolic name of a status, or its hexadecimal value."""
    return NAMES.get(status, f"0x{status:08X}")
