"""The kit's DLQ handler: an MQ client program that processes a dead-letter queue by a rules table.

It does what MQ's handler does, through the operation language only, so it
runs against any adapter: it browses the queue opened with MQOO_INPUT_AS_Q_DEF,
keeps in memory a count of tries per message and the messages it ignored,
applies a rule by a destructive get under syncpoint followed by an MQPUT1 with
all context passed, and commits, or backs out when the put fails.  Every
RETRYINT seconds it browses the whole queue again.

Its reading of the rules table (:mod:`.rules_table`) and its rule matching are
written here, apart from the reference model's, so that the model checks them
rather than agreeing with itself.  Named faults
(:mod:`adapters.simulated.faults`, area ``dlq``) break it on purpose.
"""

from __future__ import annotations

from typing import Callable

from adapters.dlq_handler import rules_table
from reference_model import language as L
from reference_model import mqconst as C

Execute = Callable[[L.Op], L.Observation]

INVALID = L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NONE, attrs={"TABLE": "INVALID"})


def _wildcard(pattern: str, value: str, fault_blank: bool) -> bool:
    """Blank-padded string comparison with ``?`` (one non-trailing-blank character) and ``*``."""
    value = value.rstrip(" ")
    pattern = pattern.rstrip(" ")
    if "*" not in pattern and "?" not in pattern:
        return pattern == value
    # dynamic programming over (pattern index, value index), from the ends back: ``ok[j]`` is
    # whether pattern[i + 1:] matches value[j:] (``nxt``), then pattern[i:] (no closures: a nested
    # function calling itself is a reference cycle left to the cyclic collector, at every call)
    n = len(value)
    nxt = [False] * n + [True]          # the empty rest of the pattern matches the empty rest
    for i in range(len(pattern) - 1, -1, -1):
        c = pattern[i]
        ok = [False] * (n + 1)
        for j in range(n, -1, -1):
            if c == "*":
                ok[j] = nxt[j] or (j < n and ok[j + 1])
            elif c == "?":
                ok[j] = (j < n and nxt[j + 1]) or (fault_blank and j == n and nxt[j])
            else:
                ok[j] = j < n and value[j] == c and nxt[j + 1]
        nxt = ok
    return nxt[0]


class DlqHandler:
    """One handler instance.  ``execute`` runs an op on the queue manager; ``dead_q`` is its DEADQ."""

    def __init__(self, name: str, table_text: str, execute: Execute, dead_q: str,
                 faults: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.text = table_text
        self.execute = execute
        self.dead_q = dead_q
        self.faults = faults
        self.conn = f"dlq.{name}"
        self.handle = f"dlq.{name}.input"
        self.table: rules_table.Table | None = None
        self.queue = ""
        self.tries: dict[str, int] = {}
        self.rule_tries: dict[int, int] = {}   # only under the shared-count fault
        self.ignored: set[str] = set()
        #: Under the never-seen fault: the messages of the first scan, the only ones ever processed.
        self.first_scan: set[str] | None = None
        self.browsing = False
        self.last_rescan = 0
        self.busy_at = 0
        self.running = False

    # ------------------------------------------------------------------ life cycle
    def start(self, clock: int) -> L.Observation:
        table = rules_table.read(self.text)
        if table is None:
            return INVALID
        self.table = table
        self.queue = table.control.inputq or self.dead_q
        if not self.queue:
            return L.Observation.of(C.MQRC_UNKNOWN_OBJECT_NAME)
        self.execute(L.Connect(conn=self.conn))
        mode = C.MQOO_INPUT_SHARED if "dlq-opens-shared" in self.faults else C.MQOO_INPUT_AS_Q_DEF
        obs = self.execute(L.Open(conn=self.conn, handle=self.handle, queue=self.queue, options=mode | C.MQOO_BROWSE))
        if obs.cc == C.MQCC_FAILED:
            self.execute(L.Disconnect(conn=self.conn))
            return L.Observation.of(obs.rc)
        self.running = True
        self.last_rescan = self.busy_at = clock
        return L.OK

    def stop(self) -> None:
        if self.running:
            self.execute(L.Backout(conn=self.conn))
            self.execute(L.Disconnect(conn=self.conn))
        self.running = False

    # ------------------------------------------------------------------ one pass
    def run(self, clock: int) -> str:
        """Work until idle at ``clock``; returns "RUNNING" or "ENDED"."""
        if not self.running:
            return "ENDED"
        control = self.table.control
        rescan = not self.browsing or clock - self.last_rescan >= control.retryint * 10
        option = C.MQGMO_BROWSE_FIRST if rescan else C.MQGMO_BROWSE_NEXT
        if rescan:
            self.last_rescan = clock
        busy = False
        first = self.first_scan is None
        if first and "dlq-new-messages-never-seen" in self.faults:
            self.first_scan = set()
        while True:
            obs = self.execute(L.Get(conn=self.conn, handle=self.handle, options=option | C.MQGMO_NO_SYNCPOINT))
            if obs.message is None:
                break
            option = C.MQGMO_BROWSE_NEXT
            self.browsing = True
            m = obs.message
            if "dlq-new-messages-never-seen" in self.faults:
                if not first and m.msg_id not in self.first_scan:
                    continue
                self.first_scan.add(m.msg_id)
            busy |= self._process(m)
        if busy:
            self.busy_at = clock
        if self._ends(clock, busy):
            self.stop()
            return "ENDED"
        return "RUNNING"

    def _ends(self, clock: int, busy: bool) -> bool:
        wait = self.table.control.wait
        if wait == "YES":
            return False
        if wait == "NO":
            return not self._anything_left()
        return not busy and clock - self.busy_at >= wait * 10

    def _anything_left(self) -> bool:
        """Browse the whole queue: is there a message a later scan would act on?"""
        probe = f"{self.handle}.probe"
        self.execute(L.Open(conn=self.conn, handle=probe, queue=self.queue, options=C.MQOO_BROWSE))
        option = C.MQGMO_BROWSE_FIRST
        left = False
        while True:
            obs = self.execute(L.Get(conn=self.conn, handle=probe, options=option | C.MQGMO_NO_SYNCPOINT))
            if obs.message is None:
                break
            option = C.MQGMO_BROWSE_NEXT
            m = obs.message
            if m.dlh is not None and m.msg_id not in self.ignored:
                index = self._choose(m)
                if index is not None and self.table.rules[index].action != "IGNORE":
                    left = True
        self.execute(L.Close(conn=self.conn, handle=probe))
        return left

    # ------------------------------------------------------------------ one message
    def _fields(self, m: L.ReturnedMessage) -> dict:
        ctx = m.context or L.MessageContext()
        dlh = m.dlh or L.DeadLetterHeader(reason=0, dest_q="")
        return {
            "APPLIDAT": ctx.appl_identity_data, "APPLNAME": ctx.put_appl_name, "APPLTYPE": ctx.put_appl_type,
            "USERID": ctx.user_id, "REASON": dlh.reason, "FORMAT": dlh.format, "MSGTYPE": m.msg_type,
            "DESTQ": dlh.dest_q,
            "DESTQM": m.reply_to_qmgr if "dlq-destqm-is-replyqm" in self.faults else dlh.dest_qmgr,
            "FEEDBACK": dlh.reason if "dlq-feedback-is-reason" in self.faults else m.feedback,
            "PERSIST": m.persistence, "REPLYQ": m.reply_to_q, "REPLYQM": m.reply_to_qmgr,
        }

    def _matches(self, rule: rules_table.Rule, fields: dict) -> bool:
        for keyword, pattern in rule.patterns:
            if pattern is None or (keyword == "APPLTYPE" and "dlq-appltype-ignored" in self.faults):
                continue
            value = fields[keyword]
            if isinstance(pattern, str):
                if not _wildcard(pattern, str(value), "dlq-question-matches-trailing-blank" in self.faults):
                    return False
            elif value != pattern:
                return False
        return True

    def _count(self, m: L.ReturnedMessage, index: int | None = None) -> int:
        if "dlq-retry-count-per-rule" in self.faults:
            return self.rule_tries.get(index, 0) if index is not None else 0
        return self.tries.get(m.msg_id, 0)

    def _choose(self, m: L.ReturnedMessage) -> int | None:
        """The rule for the next try of ``m``, or None when IGNORE is assumed."""
        fields = self._fields(m)
        order = list(range(len(self.table.rules)))
        if "dlq-rules-out-of-order" in self.faults:
            order.reverse()
        used = 0
        for index in order:
            rule = self.table.rules[index]
            if not self._matches(rule, fields):
                continue
            if rule.action == "IGNORE":
                return index
            if "dlq-retry-count-per-rule" in self.faults:
                if self.rule_tries.get(index, 0) < rule.retry:
                    return index
                continue
            budget = 1 if "dlq-retry-ignored" in self.faults else rule.retry
            used += budget
            if used > self._count(m):
                return index
            if "dlq-no-fall-through" in self.faults:
                return None
        return None

    def _process(self, m: L.ReturnedMessage) -> bool:
        """Act on the browsed message ``m``; True when an action was tried."""
        if m.dlh is None and "dlq-no-dlh-processed" not in self.faults:
            return False
        if m.msg_id in self.ignored:
            return False
        index = self._choose(m)
        rule = self.table.rules[index] if index is not None else None
        if rule is None or rule.action == "IGNORE":
            if rule is None and "dlq-ignore-not-assumed" in self.faults:
                rule = rules_table.Rule(line=0, action="DISCARD")
            else:
                self.ignored.add(m.msg_id)
                return False
        self.tries[m.msg_id] = self.tries.get(m.msg_id, 0) + 1
        if index is not None:
            self.rule_tries[index] = self.rule_tries.get(index, 0) + 1
        got = self.execute(L.Get(conn=self.conn, handle=self.handle,
                                 options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_SYNCPOINT))
        if got.message is None:
            return True
        if rule.action == "DISCARD":
            self.execute(L.Commit(conn=self.conn))
            self.tries.pop(m.msg_id, None)
            return True
        queue, qmgr, md, dlh = self._destination(rule, got.message)
        put = self.execute(L.Put1(conn=self.conn, queue=queue, qmgr=qmgr, body=got.message.body, md=md, dlh=dlh,
                                  options=C.MQPMO_SYNCPOINT | C.MQPMO_PASS_ALL_CONTEXT))
        if put.cc == C.MQCC_FAILED and "dlq-failure-not-backed-out" not in self.faults:
            self.execute(L.Backout(conn=self.conn))
        else:
            self.execute(L.Commit(conn=self.conn))
            self.tries.pop(m.msg_id, None)
        return True

    def _destination(self, rule: rules_table.Rule, m: L.ReturnedMessage):
        dlh = m.dlh or L.DeadLetterHeader(reason=0, dest_q="")
        if rule.action == "RETRY":
            queue, qmgr = dlh.dest_q, dlh.dest_qmgr
        else:
            queue = {"&DESTQ": dlh.dest_q, "&REPLYQ": m.reply_to_q}.get(rule.fwdq, rule.fwdq)
            qmgr = {"&DESTQM": dlh.dest_qmgr, "&REPLYQM": m.reply_to_qmgr}.get(rule.fwdqm, rule.fwdqm)
        keep = rule.action == "FWD" and rule.header
        if keep and "dlq-header-stripped" in self.faults:
            keep = False
        restore = not keep and "dlq-format-not-restored" not in self.faults
        md = L.MessageDescriptor(
            priority=m.priority, persistence=m.persistence,
            expiry=C.MQEI_UNLIMITED if "dlq-forward-drops-expiry" in self.faults
            else m.expiry if isinstance(m.expiry, int) else -1,
            report=m.report, msg_type=m.msg_type, feedback=m.feedback,
            format=dlh.format if restore else m.format, reply_to_q=m.reply_to_q,
            msg_id=m.msg_id or "", correl_id=m.correl_id or "", reply_to_qmgr=m.reply_to_qmgr,
            context=None if "dlq-context-not-passed" in self.faults else m.context,
        )
        return queue.strip(), qmgr.strip(), md, (m.dlh if keep else None)

