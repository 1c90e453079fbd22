"""MQI constants with IBM MQ's real numeric values.

Values are those of IBM's ``cmqc.h`` header, as IBM also lists them in the MQI
constants reference.
Only the constants the kit uses are listed; names keep MQ's prefixes so that a
reader can look each one up in the MQ documentation.
"""

from __future__ import annotations

# Completion codes
MQCC_OK = 0
MQCC_WARNING = 1
MQCC_FAILED = 2

# Reason codes
MQRC_NONE = 0
MQRC_BACKED_OUT = 2003
MQRC_CONNECTION_BROKEN = 2009
MQRC_EXPIRY_ERROR = 2013
MQRC_GET_INHIBITED = 2016
MQRC_HCONN_ERROR = 2018
MQRC_HOBJ_ERROR = 2019
MQRC_NO_MSG_AVAILABLE = 2033
MQRC_NO_MSG_UNDER_CURSOR = 2034
MQRC_NOT_OPEN_FOR_BROWSE = 2036
MQRC_NOT_OPEN_FOR_INPUT = 2037
MQRC_NOT_OPEN_FOR_OUTPUT = 2039
MQRC_OBJECT_IN_USE = 2042
MQRC_OPTIONS_ERROR = 2046
MQRC_PERSISTENCE_ERROR = 2047
MQRC_PRIORITY_EXCEEDS_MAXIMUM = 2049
MQRC_PRIORITY_ERROR = 2050
MQRC_PUT_INHIBITED = 2051
MQRC_Q_FULL = 2053
MQRC_FUNCTION_NOT_SUPPORTED = 2298
MQRC_SECOND_MARK_NOT_ALLOWED = 2062
MQRC_UNKNOWN_OBJECT_NAME = 2085
MQRC_Q_MGR_NAME_ERROR = 2058
MQRC_UNKNOWN_REMOTE_Q_MGR = 2087
MQRC_NOT_AUTHORIZED = 2035
MQRC_MSG_TOO_BIG_FOR_Q = 2030
MQRC_Q_DELETED = 2052
MQRC_BACKOUT_THRESHOLD_REACHED = 2362
MQRC_WAIT_INTERVAL_ERROR = 2090
MQRC_NO_MSG_LOCKED = 2209
MQRC_OPTION_ENVIRONMENT_ERROR = 2274
MQRC_MATCH_OPTIONS_ERROR = 2247
#: PCF reason for defining an object that already exists.
MQRCCF_OBJECT_ALREADY_EXISTS = 4001

#: Reason codes that complete with a warning rather than a failure.
WARNING_REASONS = frozenset({MQRC_PRIORITY_EXCEEDS_MAXIMUM, MQRC_BACKED_OUT})


def completion_for(reason: int) -> int:
    """The completion code MQ pairs with ``reason`` in the calls the kit models."""
    if reason == MQRC_NONE:
        return MQCC_OK
    if reason in WARNING_REASONS:
        return MQCC_WARNING
    return MQCC_FAILED


# MQOO open options
MQOO_INPUT_AS_Q_DEF = 1
MQOO_INPUT_SHARED = 2
MQOO_INPUT_EXCLUSIVE = 4
MQOO_BROWSE = 8
MQOO_OUTPUT = 16
MQOO_INQUIRE = 32
MQOO_SET = 64
MQOO_INPUT_ANY = MQOO_INPUT_AS_Q_DEF | MQOO_INPUT_SHARED | MQOO_INPUT_EXCLUSIVE

# MQGMO get-message options
MQGMO_NO_WAIT = 0
MQGMO_WAIT = 1
MQGMO_SYNCPOINT = 2
MQGMO_NO_SYNCPOINT = 4
MQGMO_BROWSE_FIRST = 16
MQGMO_BROWSE_NEXT = 32
MQGMO_MARK_SKIP_BACKOUT = 128
MQGMO_MSG_UNDER_CURSOR = 256
MQGMO_LOCK = 512
MQGMO_UNLOCK = 1024
MQGMO_BROWSE_MSG_UNDER_CURSOR = 2048
MQGMO_SYNCPOINT_IF_PERSISTENT = 4096
MQGMO_BROWSE_ANY = MQGMO_BROWSE_FIRST | MQGMO_BROWSE_NEXT | MQGMO_BROWSE_MSG_UNDER_CURSOR

# MQPMO put-message options
MQPMO_NONE = 0
MQPMO_SYNCPOINT = 2
MQPMO_NO_SYNCPOINT = 4
MQPMO_DEFAULT_CONTEXT = 32
MQPMO_NEW_MSG_ID = 64
MQPMO_PASS_ALL_CONTEXT = 512
MQPMO_SET_ALL_CONTEXT = 2048

# Wait interval
MQWI_UNLIMITED = -1

# Message descriptor values
MQPRI_PRIORITY_AS_Q_DEF = -1

# MQGMO MatchOptions: which MQMD fields select the message an MQGET returns.
MQMO_NONE = 0
MQMO_MATCH_MSG_ID = 1
MQMO_MATCH_CORREL_ID = 2
MQMO_MATCH_GROUP_ID = 4
MQMO_MATCH_MSG_SEQ_NUMBER = 8
MQMO_MATCH_OFFSET = 16
MQMO_MATCH_MSG_TOKEN = 32
#: Every match option MQ defines (any other bit is undefined: MQRC_MATCH_OPTIONS_ERROR).
MQMO_DEFINED = 63
#: Those the kit's language carries the fields of (MsgId, CorrelId); MQMI_NONE and MQCI_NONE are "".
MQMO_MODELLED = MQMO_MATCH_MSG_ID | MQMO_MATCH_CORREL_ID
MQPER_NOT_PERSISTENT = 0
MQPER_PERSISTENT = 1
MQPER_PERSISTENCE_AS_Q_DEF = 2
MQEI_UNLIMITED = -1
MQMT_REQUEST = 1
MQMT_REPLY = 2
MQMT_REPORT = 4
MQMT_DATAGRAM = 8
MQFB_NONE = 0
MQRO_NONE = 0
MQFMT_NONE = ""
MQFMT_STRING = "MQSTR"
MQFMT_XMIT_Q_HEADER = "MQXMIT"
MQFMT_TRIGGER = "MQTRIG"
MQFMT_DEAD_LETTER_HEADER = "MQDEAD"
MQTT_NONE, MQTT_FIRST, MQTT_EVERY, MQTT_DEPTH = 0, 1, 2, 3
MQTC_OFF, MQTC_ON = 0, 1
MQAT_UNKNOWN = -1
MQAT_NO_CONTEXT = 0
MQAT_UNIX = 6
MQAT_QMGR = 7
MQAT_WINDOWS_NT = 11
MQAT_JAVA = 28
#: Default TriggerInterval (milliseconds).
DEFAULT_TRIGGER_INTERVAL = 999999999
MQFB_EXPIRATION = 258
MQFB_QUIT = 256
MQFB_COA = 259
MQFB_COD = 260
MQFB_APPL_CANNOT_BE_STARTED = 265
MQFB_APPL_TYPE_ERROR = 267
MQRO_EXPIRATION = 2097152
MQRO_EXPIRATION_WITH_DATA = 6291456
MQRO_EXPIRATION_WITH_FULL_DATA = 14680064
#: Bytes of application data in a report WITH_DATA.
REPORT_DATA_LENGTH = 100
# Message flags (MQMD.MsgFlags) and segment status (MQGMO.SegmentStatus)
MQMF_NONE = 0
MQMF_SEGMENTATION_ALLOWED = 1
MQMF_SEGMENT = 2
MQMF_LAST_SEGMENT = 4
MQSS_NOT_A_SEGMENT = " "
MQSS_SEGMENT = "S"
MQSS_LAST_SEGMENT = "L"
#: The smallest segment a queue manager creates for data of a user-defined format (bytes).
MIN_SEGMENT = 16
#: MaxMsgLength of a queue by default (bytes).
DEFAULT_MAX_MSG_LENGTH = 4194304

# Queue attributes
MQMDS_PRIORITY = 0
MQMDS_FIFO = 1
MQQA_BACKOUT_NOT_HARDENED = 0
MQQA_BACKOUT_HARDENED = 1
MQQA_GET_ALLOWED = 0
MQQA_GET_INHIBITED = 1
MQQA_PUT_ALLOWED = 0
MQQA_PUT_INHIBITED = 1
MQQA_NOT_SHAREABLE = 0
MQQA_SHAREABLE = 1
MQUS_NORMAL = 0
MQUS_TRANSMISSION = 1
#: QSGDISP: a queue of one queue manager, or one shared by a queue-sharing group (z/OS).
MQQSGD_Q_MGR = 0
MQQSGD_SHARED = 2
#: ... or one held in the group's shared repository, of which each member has a copy (a process, say).
MQQSGD_GROUP = 3

#: Maximum message priority of a distributed queue manager (MaxPriority).
MAX_PRIORITY = 9

# Platforms a queue manager can declare (MQ documents some behaviour per platform).
PLATFORM_DISTRIBUTED = "distributed"
PLATFORM_ZOS = "zos"
PLATFORMS = (PLATFORM_DISTRIBUTED, PLATFORM_ZOS)

REASON_NAMES = {
    value: name
    for name, value in dict(globals()).items()
    if name.startswith(("MQRC_", "MQRCCF_")) and isinstance(value, int)
}


def reason_name(reason: int) -> str:
    """``MQRC_NO_MSG_AVAILABLE (2033)`` style text for a reason code."""
    name = REASON_NAMES.get(reason)
    return f"{name} ({reason})" if name else str(reason)
