"""Rules of the ``syncpoint`` area: skipping backout with MQGMO_MARK_SKIP_BACKOUT.

Source: IBM's topic "Skipping backout": its paragraphs, notes and the steps of
its Figure 12 (see ``reference_model/sources.py``).  The document states
that the option is supported only on z/OS; on other platforms MQ documents
nothing for it, so every rule here is not applicable there.
"""

from reference_model import mqconst as C
from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite
ZOS = (C.PLATFORM_ZOS,)


def _sync(n: int, item: str, summary: str, cites=None, **kw) -> Rule:
    item = item.replace("para ", "paragraph ")
    if item.startswith("step"):
        item = f"Figure 12 {item}"
    return Rule(id=f"SYNC-{n:02d}", area="syncpoint", cites=cites or Cite(S.SKIP_BACKOUT, item), summary=summary,
                platforms=ZOS, **kw)


RULES.add(
    _sync(1, "heading", "Skip backout (MQGMO_MARK_SKIP_BACKOUT) is a z/OS facility; elsewhere its effect is undocumented.",
          note="On other platforms the model allows the option to be refused with MQRC_OPTIONS_ERROR or ignored; "
          "the area is reported not applicable there."),
    _sync(2, "para 1", "Backing out a unit of work reinstates the messages its gets retrieved, available to later gets."),
    _sync(3, "para 2", "A marked get is not involved in an application-requested backout: the other updates are "
          "backed out and the marked message is treated as retrieved under a new unit of work."),
    _sync(4, "para 3", "After the skip the application must end the new unit of work; committing it removes the marked message."),
    _sync(5, "para 3", "If the new unit of work is backed out for any reason, the marked message is reinstated on the queue."),
    _sync(6, "para 4", "Only one get per unit of work may be marked; a further marked get fails with "
          "MQRC_SECOND_MARK_NOT_ALLOWED and changes nothing.",
          cites=(Cite(S.SKIP_BACKOUT, "paragraph 4"), Cite(S.MQRC_2062)),
          note="Whether the new unit of work that holds a skipped message may itself mark a get is not "
          "documented: the model allows the mark to succeed or to fail with MQRC_SECOND_MARK_NOT_ALLOWED."),
    _sync(7, "note 1", "Only an application-requested backout skips the marked message; a unit of work backed out "
          "for any other reason (abnormal end, connection loss, restart) reinstates it like any other."),
    _sync(8, "note 2", "Within Db2 stored procedures under RRS the option fails with MQRC_OPTION_ENVIRONMENT_ERROR."),
    _sync(9, "step 1", "The queue is opened with an MQOO_INPUT_* option before the marked get; without it the get "
          "fails with MQRC_NOT_OPEN_FOR_INPUT."),
    _sync(10, "step 2", "MQGMO_MARK_SKIP_BACKOUT is effective only together with MQGMO_SYNCPOINT.",
          note="The document does not say what happens without syncpoint: the model allows the get to be "
          "refused with MQRC_OPTIONS_ERROR or done outside a unit of work with the mark having no effect."),
    _sync(11, "step 3", "Other gets of the same unit of work, without the mark, are allowed alongside the marked one."),
    _sync(12, "step 4", "Committing the first unit of work removes the marked message from the queue."),
    _sync(13, "steps 5-6", "On the application's backout the updates made besides the marked get (other gets and "
          "puts) are backed out."),
    _sync(14, "step 7", "The marked get skips the backout and becomes part of a new unit of work."),
    _sync(15, "step 8", "Work done after the skip (e.g. a put reporting the problem) belongs to the new unit of work."),
    _sync(16, "step 9", "Committing the new unit of work removes the marked message and makes its puts available."),
    _sync(17, "step 10", "Backing out the new unit of work reinstates the marked message, available to this or "
          "another application like any other message."),
    _sync(18, "", cites=(Cite(S.SKIP_BACKOUT, "paragraph 1"), Cite(S.MQMD_BACKOUT)), summary=
          "Messages reinstated by a backout have BackoutCount + 1; a marked message reinstated when its new unit "
          "of work is backed out gets + 1 too.",
          note="Whether the skip itself counts as a backout of the marked message is not documented: the model "
          "allows its BackoutCount to stay or to grow by one at the skip."),
    _sync(19, "", cites=(Cite(S.BACKOUT_ACCURACY), Cite(S.MQMD_BACKOUT)), summary=
          "On z/OS BackoutCount is exact after a restart only for a queue with HARDENBO; for one without it "
          "the count after a restart may be lower.",
          note="How much lower is not documented: the model allows any count from zero to the exact one, and "
               "later backouts add one to either end."),
)
