"""Rules of the ``expiry`` area: the Expiry field of the message descriptor.

Source: IBM's topic "Expiry (MQLONG)" of the message descriptor reference (its
paragraphs and notes 1-9) and the topic "Expired messages on z/OS" (see
``reference_model/sources.py``).
"""

from reference_model import mqconst as C
from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite
ZOS = (C.PLATFORM_ZOS,)


def _exp(n: int, item: str, summary: str, cites=None, **kw) -> Rule:
    if cites is None:
        if item.startswith("z/OS"):
            cites = Cite(S.ZOS_EXPIRED, item.removeprefix("z/OS: ").removeprefix("z/OS "))
        else:
            cites = Cite(S.MQMD_EXPIRY, item.replace("para ", "paragraph "))
    return Rule(id=f"EXP-{n:02d}", area="expiry", cites=cites, summary=summary, **kw)


RULES.add(
    _exp(1, "para 1", "Expiry is a period in tenths of a second after which a message not yet removed becomes "
         "eligible to be discarded; MQEI_UNLIMITED means it never expires."),
    _exp(2, "para 2", "The Expiry value is decremented by the time the message spends on the queue; the time is "
         "approximate and small intervals need not be reflected.",
         note="The model allows a remaining time within the adapter's declared tolerance of the exact value, "
         "and treats a message within that tolerance of its expiry as possibly expired either way."),
    _exp(3, "para 3", "A get returns in Expiry the part of the original expiry time that remains."),
    _exp(4, "para 4", "An expired message is discarded when a browse or non-browse get would have returned it; "
         "on a FIFO queue such a get discards every expired message up to the first unexpired one."),
    _exp(5, "para 4", "On a priority queue such a get discards the expired messages of higher priority and those "
         "of equal priority that arrived before the first unexpired message."),
    _exp(6, "para 5", "An expired message is never returned by a get or a browse, so Expiry after a successful get "
         "is greater than zero or MQEI_UNLIMITED.",
         note="On a system whose time the adapter measures within a tolerance (a broker stamping an expiry "
         "time, read back against the kit's clock), a message got within the tolerance of its expiry may "
         "show a remaining time of zero or less: \"greater than zero\" is then judged only beyond the "
         "tolerance, where the message must not be returned at all."),
    _exp(7, "para 6", "A message put to a remote queue may expire and be discarded on an intermediate transmission queue.",
         note="Exercised with a remote queue definition whose transmission queue is read by a get standing in "
         "for the channel; a get that would return an expired message discards it there."),
    _exp(8, "", cites=(Cite(S.MQMD_EXPIRY, "paragraph 7"), Cite(S.EXPIRY_REPORT, "MQRO_EXPIRATION_*")), summary= "Discarding an expired message produces an expiration report if the message asked for one "
         "with an MQRO_EXPIRATION_* option (feedback MQFB_EXPIRATION, to its reply-to queue), and none otherwise."),
    _exp(9, "para 8", "Any other program that discards messages because they expired must send the requested report too.",
         note="Exercised by the DLQ handler: an expired message its run reaches is discarded, and the report it "
         "asked for must arrive (from the queue manager or the handler)."),
    _exp(10, "", cites=(Cite(S.MQMD_EXPIRY, "note 1"), Cite(S.MQRC_2013)), summary= "A put or put1 with Expiry zero (or negative other than MQEI_UNLIMITED) fails "
          "with MQRC_EXPIRY_ERROR and produces no report."),
    _exp(11, "note 2", "Expired messages not yet discarded count toward the number of messages on the queue for "
          "every purpose (CURDEPTH, MAXDEPTH, depth triggering)."),
    _exp(12, "note 3", "The expiration report is produced when the message is discarded, not when it becomes eligible."),
    _exp(13, "note 4", "Discarding an expired message and producing its report are never part of the caller's unit "
          "of work, even when the get that caused them is under syncpoint."),
    _exp(14, "note 5", "A nearly-expired message got in a unit of work that is backed out keeps its original expiry "
          "and may expire before it is got again."),
    _exp(15, "note 6", "A message locked by a browse that expires before the get under cursor makes that get fail "
          "with MQRC_NO_MSG_UNDER_CURSOR."),
    _exp(16, "note 7", "A message put to the dead-letter queue by default keeps its remaining expiry, still decremented.",
         note="Exercised by the dlq machine's expiring dead letters: one forwarded or retried carries what is "
         "left of its expiry; one that expires on the dead-letter queue is discarded there."),

    _exp(17, "note 8", "Trigger messages are always generated with MQEI_UNLIMITED.",
         note="Checked on every trigger message a get or browse returns (the trigger area's watch)."),
    _exp(18, "note 9, point 1", "A put to a remote queue gives both Expiry fields (MQMD and the MQXQH's embedded "
          "MQMD) the value the application set.",
          note="Puts to a remote queue are MQPUT1 calls naming a remote queue definition or a queue manager "
          "reached through the transmission queue of its name."),

    _exp(19, "note 9, point 1", "A direct put of an MQXMIT message may carry two different Expiry values; the queue "
          "manager checks the embedded one is valid and the data long enough to hold it.",
          note="The document also says an 'inconsistent' pair is rejected with an expiry error without defining "
          "'inconsistent': for differing valid values the model allows both acceptance and MQRC_EXPIRY_ERROR."),
    _exp(20, "note 9, point 2", "Getting an MQXMIT message decrements both Expiry fields by the time spent on the "
          "queue; no error is raised when the data is too short to hold the embedded field."),
    _exp(21, "note 9, point 3", "Only the separate MQMD's Expiry decides whether an MQXMIT message is discarded."),
    _exp(22, "note 9, point 4", "When the embedded Expiry has elapsed while the separate one has not, the embedded "
          "field is returned as zero."),
    _exp(23, "z/OS: 'Periodic scan'", "With EXPRYINT set, the queue manager periodically scans queues worth scanning "
          "and discards expired messages (with their reports) without a get.", platforms=ZOS,
          note="Which queues are worth scanning is the queue manager's choice: the model allows any expired "
          "message to have been discarded after a scan time."),
    _exp(24, "z/OS: 'Explicit request'", "REFRESH QMGR TYPE(EXPIRY) for named queues discards their expired messages "
          "(with their reports) without a get.", platforms=ZOS),
    _exp(25, "z/OS: 'Periodic scan'", "In a queue-sharing group one queue manager scans the shared queues; each "
         "member's EXPRYINT scans only its own private queues besides.",
         platforms=ZOS, note="Which member scans the shared queues is 'generally' the first to restart or to set "
         "EXPRYINT: the model lets any member with an interval remove their expired messages. A member ending, "
         "and another taking over, is not modelled."),
    _exp(26, "", cites=(Cite(S.ZOS_EXPIRED, "first paragraph"), Cite(S.EXPIRY_INTERVAL)), summary= "Where no get touches it, an expired message stays on the queue on z/OS "
          "without EXPRYINT; on other platforms MQ documents no removal time, so it may be removed at any time "
          "after it expires.",
          note="Reports of messages removed in the background on distributed platforms are not yet modelled."),
)
