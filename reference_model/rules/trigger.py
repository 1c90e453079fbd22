"""Rules of the ``trigger`` area: the conditions for a trigger event.

Source: IBM's topic "Conditions for a trigger event" (conditions 1-14, their
notes and cases, and the closing notes), with "TriggerType (MQLONG)",
"Properties of trigger messages" and "MQTM - Trigger message" for what the
conditions leave out.  See ``reference_model/sources.py``.
"""

from reference_model import mqconst as C
from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite


def _trig(n: int, item: str, summary: str, cites=None, **kw) -> Rule:
    return Rule(id=f"TRIG-{n:02d}", area="trigger", cites=cites or Cite(S.TRIGGER_CONDITIONS, item),
                summary=summary, **kw)


RULES.add(
    _trig(1, "condition 1", "A trigger event on message arrival needs a message put on the application queue."),
    _trig(2, "condition 2", "Only a message with priority at or above TriggerMsgPriority (0: any) can cause a trigger event."),
    _trig(3, "condition 3", "Before the put, the count of messages at or above TriggerMsgPriority was zero (FIRST), "
          "anything (EVERY) or TriggerDepth - 1 (DEPTH)."),
    _trig(4, "condition 3, note a", "On a non-shared queue the count includes uncommitted puts.",
          note="Messages got under syncpoint and not yet committed are not counted, as condition 12 note b implies."),
    _trig(5, "condition 3, note b", "On a shared queue only committed messages count.",
          platforms=(C.PLATFORM_ZOS,),
          note="Whether the put of a message in a unit of work to a shared queue is itself a trigger event "
               "(its trigger message held until the unit of work ends) is not said: the model allows both."),
    _trig(6, "condition 4", "For FIRST and DEPTH no handle has the application queue open for input (OpenInputCount 0)."),
    _trig(7, "condition 4, note a", "Shared queues: while another queue manager has the queue open for shared input, "
          "the others evaluate it as FIRST with TriggerMsgPriority 0.", platforms=(C.PLATFORM_ZOS,)),
    _trig(8, "", "Shared queues: OpenInputCount is per queue manager, and an exclusive input open "
          "anywhere in the group blocks every trigger.", platforms=(C.PLATFORM_ZOS,),
          cites=(Cite(S.TRIGGER_CONDITIONS, "condition 4, note b"), Cite(S.QSG_TRIGGERING, "Triggering")),
          note="Each queue manager of the group judges the conditions for its own initiation queue, so one "
               "event may give a trigger message on each (“Transmission queues and triggering for queue "
               "sharing groups”)."),
    _trig(9, "condition 5", "An application queue whose gets are inhibited does not trigger (stated for z/OS).",
          note="Stated for z/OS; on other platforms the model allows a trigger message either way."),
    _trig(10, "condition 6", "The queue names a defined process, or has a blank process name and is a transmission "
           "queue; the trigger message then has blank process fields and MQAT_UNKNOWN."),
    _trig(11, "condition 7", "InitiationQName names an existing queue that is get- and put-enabled with USAGE(NORMAL)."),
    _trig(12, "condition 8", "A trigger monitor has the initiation queue open for input (OpenInputCount > 0)."),
    _trig(13, "condition 9", "TriggerControl is on."),
    _trig(14, "condition 10", "TriggerType is not NONE."),
    _trig(15, "condition 10 (unit of work)", "A trigger caused by a put in a unit of work becomes available only when "
           "the unit of work ends: at commit, and for FIRST and DEPTH also at backout.",
           note="'Properties of trigger messages' says trigger messages of a backed-out unit of work are always "
           "delivered; this topic is more specific and governs, so an EVERY trigger message is dropped at backout."),
    _trig(16, "condition 11", "A FIRST queue that was not empty, or a DEPTH queue that had TriggerDepth or more, "
           "triggers again on a suitable put when conditions 2-10 but 3 hold and, for FIRST, TriggerInterval has "
           "passed since the last trigger message for the queue."),
    _trig(17, "condition 11, note", "A restart resets the TriggerInterval timer.",
          note="Whether 'reset' means the interval counts from the restart or that it has elapsed is not said: "
          "the model allows both."),
    _trig(18, "condition 12", "When the only application serving a FIRST or DEPTH queue closes it and at least one "
           "(FIRST) or TriggerDepth (DEPTH) suitable messages remain, with conditions 6-10, a trigger message is created."),
    _trig(19, "condition 12, notes a-b", "A server that closes without taking every message, or after backing out or "
           "abending, is triggered again; one that closes before backing out its only get is not."),
    _trig(20, "condition 13", "Setting TriggerControl on, or changing TriggerType, TriggerMsgPriority or (DEPTH) "
           "TriggerDepth while on, triggers when enough suitable messages are there and conditions 4-10 but 8 hold."),
    _trig(21, "condition 13, case 1", "An initiation queue becoming put-enabled triggers each of its application "
           "queues that has enough suitable messages and meets conditions 4-10."),
    _trig(22, "condition 13, case 2", "An application queue becoming get-enabled triggers when it has enough suitable "
           "messages and meets conditions 4-10 but 5."),
    _trig(23, "condition 13, case 3", "A trigger monitor opening the initiation queue for input, when no other "
           "application has it open so, triggers each of its application queues that has enough suitable messages "
           "and meets conditions 4-10 but 8."),
    _trig(24, "condition 14", "On a MSGDLVSQ(FIFO) queue the queue's DefPriority, not the message's, is compared with "
           "TriggerMsgPriority."),
    _trig(25, "condition 14, example", "Messages below TriggerMsgPriority do not count: after 100 of them, one at or "
           "above it is the first for FIRST."),
    _trig(26, "closing note 1", "Trigger messages from conditions 12 and 13 are not part of a unit of work, and EVERY "
           "gives only one trigger message for them."),
    _trig(27, "closing note 2", "A message segmented at put causes one trigger event; its segments count individually "
           "afterwards.", platforms=(C.PLATFORM_DISTRIBUTED,),
           note="z/OS does not segment messages (CORE-49)."),
    _trig(28, "", "After writing a DEPTH trigger message the queue manager sets TriggerControl off.", cites=Cite(S.TRIGGER_TYPE, "MQTT_DEPTH")),
    _trig(29, "", "A trigger message carries QName, ProcessName and TriggerData from the queue and ApplType, ApplId, "
           "EnvData and UserData from the process, with the initiation queue's default priority.",
           cites=(Cite(S.TRIGGER_PROPERTIES), Cite(S.MQTM, "its fields"))),
    _trig(30, "", "Trigger messages are non-persistent and never expire (lost at a restart).",
          cites=(Cite(S.TRIGGER_PROPERTIES), Cite(S.MQMD_EXPIRY, "note 8"))),
)
