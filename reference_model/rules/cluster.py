"""Rules of the ``cluster`` area: the cluster workload management algorithm.

Source: IBM's topic "The cluster workload management algorithm" (steps 1-12
with 4a, 4b and 11a-c as numbered in WebSphere MQ 6.0 and 7.0, and its closing
note); see ``reference_model/sources.py``.
"""

from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite


def _clwl(n: str, summary: str, **kw) -> Rule:
    digits = "".join(ch for ch in n if ch.isdigit())
    return Rule(id=f"CLWL-{int(digits):02d}{n[len(digits):]}", area="cluster", cites=Cite(S.CLWL_ALGORITHM, f"step {n}"),
                summary=summary, **kw)


RULES.add(
    _clwl("1", "Queue instances that are not PUT-enabled, remote instances in no cluster shared with the local queue "
          "manager, and channels outside the queue's cluster are eliminated."),
    _clwl("2", "For a put naming a queue manager, PUT-disabled queue-manager aliases and channels outside the local "
          "queue manager's clusters are eliminated.",
          note="The candidates of a put naming queue manager X are the channels to X and, for each alias named X "
          "that another queue manager hosts, the channels to that host; the step does not mention a queue "
          "manager alias's clusters, and none is eliminated for them."),
    _clwl("3", "The local instance is chosen under CLWLUSEQ(LOCAL), or CLWLUSEQ(QMGR) with the queue manager's "
          "CLWLUSEQ(LOCAL), and always for a message that arrived over a cluster channel."),
    _clwl("4", "A cluster PCF message is not sent to a queue manager it was already sent to."),
    _clwl("4a", "Channels (and queue-manager aliases) ranked below the highest remaining CLWLRANK are eliminated, "
          "before channel state is considered."),
    _clwl("4b", "Queues ranked below the highest remaining queue CLWLRANK are eliminated."),
    _clwl("5", "When only remote instances remain, resumed queue managers are preferred to suspended ones."),
    _clwl("6", "With more than one remote instance left, INACTIVE and RUNNING channels are kept."),
    _clwl("7", "If no remote instance is left, BINDING, INITIALIZING, STARTING and STOPPING channels are included."),
    _clwl("8", "If still none is left, RETRYING channels are included."),
    _clwl("9", "If still none is left, REQUESTING, PAUSED and STOPPED channels are included."),
    _clwl("10", "With more than one remote instance left, a cluster PCF message uses locally defined CLUSSDR channels."),
    _clwl("11", "For each queue manager, the channels with the highest NETPRTY are kept."),
    _clwl("11a", "When a queue manager is being chosen, only the channels and aliases with the highest CLWLPRTY remain.",
          note="A route through an alias is compared by the alias's CLWLPRTY (and, at step 4a, its CLWLRANK), "
          "not its channel's: 'if any queue manager alias remain, channels to the queue manager are kept'."),
    _clwl("11b", "When a queue is being chosen, only the queues with the highest CLWLPRTY remain; channels are kept.",
          note="The topic 'Cluster workload balancing - channel attributes' also applies channel CLWLPRTY to "
          "queue choices; the algorithm topic, which governs, applies it only when a queue manager is chosen (11a)."),
    _clwl("11c", "Only the CLWLMRUC most recently used channels (highest DestSeqNumber) remain."),
    _clwl("12", "The least recently used destination (lowest DestSeqFactor, then lowest DestSeqNumber) is chosen; its "
          "factor advances by about 1000 / CLWLWGHT and its number becomes the previous choice's plus one; factors "
          "reset to zero when workload attributes change or destinations appear.",
          note="The topic warns the distribution is not exact because administrative traffic also flows; the "
          "expected shares are proportional to CLWLWGHT, within the tolerance a run declares."),
)
