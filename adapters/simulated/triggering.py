"""Trigger monitoring for the simulated queue manager (written apart from the reference model).

The queue manager calls :class:`Triggering` at each event that can create a
trigger message: a put, the end of a unit of work, a close, an attribute change,
an open of an initiation queue, a restart.
"""

from __future__ import annotations

from reference_model import language as L
from reference_model import mqconst as C

FIRST, EVERY, DEPTH = C.MQTT_FIRST, C.MQTT_EVERY, C.MQTT_DEPTH


class Triggering:
    def __init__(self, qm) -> None:
        self.qm = qm
        #: (queue, group member) -> clock of its last trigger message
        self.last_written: dict[tuple[str, str], int] = {}

    def fault(self, name: str) -> bool:
        return self.qm._fault(name)

    # ------------------------------------------------------------ a queue-sharing group
    def judges(self, q) -> tuple[str, ...]:
        """Which queue managers look at ``q``'s trigger conditions: all of the group for a shared queue
        (each for its own initiation queue), else its owner."""
        if q.shared:
            if self.fault("one-trigger-per-group"):
                return ("",)
            return ("",) + tuple(self.qm.group)
        return (q.owner,)

    def member(self, h) -> str:
        c = self.qm.conns.get(h.conn)
        return c.qmgr if c is not None else ""

    def first_by_others(self, q, qm: str) -> bool:
        """Another member has the shared queue open for shared input: FIRST, any priority, here."""
        if not q.shared or self.fault("no-first-override"):
            return False
        return any(h.queue == q.name and h.input and not h.exclusive and self.member(h) != qm
                   for h in self.qm.handles.values())

    def kind(self, q, qm: str = "") -> int:
        if q.attrs["TRIGTYPE"] != C.MQTT_NONE and self.first_by_others(q, qm):
            return FIRST
        return q.attrs["TRIGTYPE"]

    # ------------------------------------------------------------ counting
    def threshold_level(self, q, qm: str = "") -> int:
        return 0 if self.first_by_others(q, qm) else q.attrs["TRIGMPRI"]

    def qualifies(self, q, m, qm: str = "") -> bool:
        return self._qualifier(q, qm)(m)

    def _qualifier(self, q, qm: str = ""):
        """Whether a message of ``q`` counts for triggering (its priority against the threshold)."""
        if self.fault("trigmpri-ignored"):
            return lambda m: True
        threshold = self.threshold_level(q, qm)
        if self.fault("fifo-uses-message-priority") or (
                self.fault("priority-ignored") and q.attrs["MSGDLVSQ"] == C.MQMDS_PRIORITY):
            # (priority-ignored changes delivery order alone: a message still counts by its own priority)
            return lambda m: min(m.md.priority, C.MAX_PRIORITY) >= threshold
        return lambda m: min(m.level, C.MAX_PRIORITY) >= threshold

    def depth(self, q, qm: str = "") -> int:
        committed_only = q.shared and not self.fault("shared-counts-uncommitted")
        counts = self._qualifier(q, qm)
        return sum(1 for m in q.all_messages() if m.pending_get is None and counts(m)
                   and not (committed_only and m.pending_put is not None))

    def readers(self, name: str, qm: str | None = None) -> int:
        return sum(1 for h in self.qm.handles.values() if h.queue == name and h.input
                   and (qm is None or self.member(h) == qm))

    # ------------------------------------------------------------ conditions
    def mqtm(self, q) -> L.TriggerMessage | None:
        process = q.attrs["PROCESS"].strip()
        if process:
            p = self.qm.processes.get(process)
            if p is None:
                return None
            return L.TriggerMessage(q_name=q.mq_name, process_name=process, trigger_data=q.attrs["TRIGDATA"],
                                    appl_type=p.appl_type, appl_id=p.appl_id, env_data=p.env_data,
                                    user_data=p.user_data)
        if q.attrs["USAGE"] == C.MQUS_TRANSMISSION:
            return L.TriggerMessage(q_name=q.mq_name, trigger_data=q.attrs["TRIGDATA"])
        return None

    def initq(self, q, qm: str = ""):
        iq = self.qm.queues.get(self.qm._local_name(qm, q.attrs["INITQ"].strip()))
        ok = (iq is not None and iq.attrs["GET"] == C.MQQA_GET_ALLOWED and iq.attrs["PUT"] == C.MQQA_PUT_ALLOWED
              and iq.attrs["USAGE"] == C.MQUS_NORMAL)
        return iq if ok else None

    def ready(self, q, check_readers=True, check_get=True, check_monitor=True, qm: str = "") -> bool:
        if q.attrs["TRIGGER"] != C.MQTC_ON or q.attrs["TRIGTYPE"] == C.MQTT_NONE:
            return False
        if q.shared and any(h.queue == q.name and h.exclusive and (
                self.member(h) == qm or not self.fault("exclusive-blocks-own-qmgr-only"))
                for h in self.qm.handles.values()):
            return False
        own = None if not q.shared or self.fault("open-input-counted-group-wide") else qm
        if check_readers and self.kind(q, qm) in (FIRST, DEPTH) and self.readers(q.name, own) \
                and not self.fault("first-while-open-for-input"):
            return False
        if check_get and q.attrs["GET"] == C.MQQA_GET_INHIBITED:
            return False
        if self.mqtm(q) is None:
            return False
        iq = self.initq(q, qm)
        if iq is None:
            return False
        return not check_monitor or self.readers(iq.name) > 0

    def enough(self, q, qm: str = "") -> bool:
        return self.depth(q, qm) >= (q.attrs["TRIGDPTH"] if self.kind(q, qm) == DEPTH else 1)

    # ------------------------------------------------------------ writing
    def write(self, q, conn=None, qm: str = "") -> None:
        tm, iq = self.mqtm(q), self.initq(q, qm)
        kind = self.kind(q, qm)
        self.last_written[(q.name, qm)] = self.qm.clock
        if kind == DEPTH and not self.fault("depth-keeps-trigger-on"):
            q.attrs["TRIGGER"] = C.MQTC_OFF
        if conn is not None and not self.fault("trigger-before-commit"):
            conn.held_triggers.append((iq.name, tm, kind))
        else:
            self.qm.put_trigger_message(iq.name, tm)

    # ------------------------------------------------------------ events
    def on_put(self, q, m, conn, in_uow: bool, added: int = 1, had: int | None = None) -> None:
        """A put placed ``added`` messages (the segments of one message, or one): one event.  ``had``: the count
        before the put as the put read it (None: the count now less what it added)."""
        if q.attrs["TRIGGER"] != C.MQTC_ON:
            return
        if q.shared and in_uow and not self.fault("shared-counts-uncommitted"):
            return   # not committed, so not counted: this queue manager makes it no event
        self.each_member(q, lambda qm: self.put_event(q, m, conn, in_uow, added, qm, had))

    def each_member(self, q, judge) -> None:
        """Every member that judges ``q`` does, on the queue's TriggerControl as it was before any of them
        wrote a DEPTH trigger message (which turns it off for all once they are done)."""
        control, turned_off = q.attrs["TRIGGER"], False
        for qm in self.judges(q):
            q.attrs["TRIGGER"] = control
            judge(qm)
            turned_off |= q.attrs["TRIGGER"] != control
        if turned_off:
            q.attrs["TRIGGER"] = C.MQTC_OFF

    def put_event(self, q, m, conn, in_uow: bool, added: int, qm: str, had: int | None = None) -> None:
        if q.attrs["TRIGGER"] != C.MQTC_ON or not self.qualifies(q, m, qm):
            return
        n = self.depth(q, qm)
        if had is None:
            had = n - added
        kind = self.kind(q, qm)
        if kind == FIRST:
            now = had == 0 or self.fault("first-fires-on-nonempty")
        elif kind == EVERY:
            now = True
        elif kind == DEPTH:
            target = q.attrs["TRIGDPTH"] + 1 if self.fault("depth-off-by-one") else q.attrs["TRIGDPTH"]
            now = had < target <= n
        else:
            return
        again = False
        if not now and kind == FIRST:
            last = self.last_written.get((q.name, qm))
            interval = self.qm.trigger_interval if not qm else C.DEFAULT_TRIGGER_INTERVAL
            again = last is None or self.fault("trigint-ignored") or (self.qm.clock - last) * 100 >= interval
        elif not now and kind == DEPTH:
            again = had >= q.attrs["TRIGDPTH"]
        if (now or again) and self.ready(q, qm=qm):
            self.write(q, conn if in_uow else None, qm)

    def on_uow_end(self, conn, commit: bool) -> None:
        for initq, tm, kind in conn.held_triggers:
            if commit or kind != EVERY or self.fault("every-delivered-at-backout"):
                self.qm.put_trigger_message(initq, tm)
        conn.held_triggers = []

    def on_close(self, queue: str, had_input: bool, qm: str = "") -> None:
        q = self.qm.queues.get(queue)
        if q is None or not had_input or self.fault("no-trigger-at-close"):
            return
        qm = qm if q.shared else q.owner
        if self.readers(queue, qm if q.shared else None):
            return
        if self.kind(q, qm) in (FIRST, DEPTH) and self.enough(q, qm) \
                and self.ready(q, check_readers=False, check_get=False, qm=qm):
            self.write(q, qm=qm)

    def on_alter(self, queue: str, before: dict) -> None:
        q = self.qm.queues[queue]
        a = q.attrs
        on = a["TRIGGER"] == C.MQTC_ON
        if on and (before["TRIGGER"] != C.MQTC_ON or a["TRIGTYPE"] != before["TRIGTYPE"]
                   or a["TRIGMPRI"] != before["TRIGMPRI"]
                   or (a["TRIGTYPE"] == DEPTH and a["TRIGDPTH"] != before["TRIGDPTH"])):
            def changed(qm):
                if self.enough(q, qm) and self.ready(q, check_monitor=False, qm=qm):
                    self.write(q, qm=qm)
                    if a["TRIGTYPE"] == EVERY and self.fault("every-twice-on-alter"):
                        self.write(q, qm=qm)
            self.each_member(q, changed)
        if before["GET"] == C.MQQA_GET_INHIBITED and a["GET"] == C.MQQA_GET_ALLOWED:
            def allowed(qm):
                if self.enough(q, qm) and self.ready(q, check_get=False, qm=qm):
                    self.write(q, qm=qm)
            self.each_member(q, allowed)
        if before["PUT"] == C.MQQA_PUT_INHIBITED and a["PUT"] == C.MQQA_PUT_ALLOWED:
            for app, qm in self.served_by(queue):
                if self.enough(app, qm) and self.ready(app, qm=qm):
                    self.write(app, qm=qm)

    def on_open_for_input(self, queue: str, first_reader: bool) -> None:
        if not first_reader or self.fault("no-trigger-on-monitor-open"):
            return
        for app, qm in self.served_by(queue):
            if self.enough(app, qm) and self.ready(app, check_monitor=False, qm=qm):
                self.write(app, qm=qm)

    def served_by(self, initq: str):
        """(application queue, the member whose initiation queue ``initq`` is) pairs."""
        out = []
        for name, q in sorted(self.qm.queues.items()):
            target = q.attrs["INITQ"].strip()
            if name == initq or not target:
                continue
            out += [(q, qm) for qm in self.judges(q) if self.qm._local_name(qm, target) == initq]
        return out

    def on_restart(self) -> None:
        self.last_written.clear()
