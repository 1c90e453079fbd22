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
        self.last_written: dict[str, int] = {}  # queue -> clock of its last trigger message

    def fault(self, name: str) -> bool:
        return self.qm._fault(name)

    # ------------------------------------------------------------ counting
    def threshold_level(self, q) -> int:
        return q.attrs["TRIGMPRI"]

    def qualifies(self, q, m) -> bool:
        if self.fault("trigmpri-ignored"):
            return True
        level = m.md.priority if self.fault("fifo-uses-message-priority") else m.level
        return min(level, C.MAX_PRIORITY) >= q.attrs["TRIGMPRI"]

    def depth(self, q) -> int:
        return sum(1 for m in q.all_messages() if m.pending_get is None and self.qualifies(q, m))

    def readers(self, name: str) -> int:
        return sum(1 for h in self.qm.handles.values() if h.queue == name and h.input)

    # ------------------------------------------------------------ conditions
    def mqtm(self, q) -> L.TriggerMessage | None:
        process = q.attrs["PROCESS"].strip()
        if process:
            p = self.qm.processes.get(process)
            if p is None:
                return None
            return L.TriggerMessage(q_name=q.name, process_name=process, trigger_data=q.attrs["TRIGDATA"],
                                    appl_type=p.appl_type, appl_id=p.appl_id, env_data=p.env_data,
                                    user_data=p.user_data)
        if q.attrs["USAGE"] == C.MQUS_TRANSMISSION:
            return L.TriggerMessage(q_name=q.name, trigger_data=q.attrs["TRIGDATA"])
        return None

    def initq(self, q):
        iq = self.qm.queues.get(q.attrs["INITQ"].strip())
        ok = (iq is not None and iq.attrs["GET"] == C.MQQA_GET_ALLOWED and iq.attrs["PUT"] == C.MQQA_PUT_ALLOWED
              and iq.attrs["USAGE"] == C.MQUS_NORMAL)
        return iq if ok else None

    def ready(self, q, check_readers=True, check_get=True, check_monitor=True) -> bool:
        if q.attrs["TRIGGER"] != C.MQTC_ON or q.attrs["TRIGTYPE"] == C.MQTT_NONE:
            return False
        if check_readers and q.attrs["TRIGTYPE"] in (FIRST, DEPTH) and self.readers(q.name) \
                and not self.fault("first-while-open-for-input"):
            return False
        if check_get and q.attrs["GET"] == C.MQQA_GET_INHIBITED:
            return False
        if self.mqtm(q) is None:
            return False
        iq = self.initq(q)
        if iq is None:
            return False
        return not check_monitor or self.readers(iq.name) > 0

    def enough(self, q) -> bool:
        return self.depth(q) >= (q.attrs["TRIGDPTH"] if q.attrs["TRIGTYPE"] == DEPTH else 1)

    # ------------------------------------------------------------ writing
    def write(self, q, conn=None) -> None:
        tm, iq = self.mqtm(q), self.initq(q)
        self.last_written[q.name] = self.qm.clock
        if q.attrs["TRIGTYPE"] == DEPTH and not self.fault("depth-keeps-trigger-on"):
            q.attrs["TRIGGER"] = C.MQTC_OFF
        if conn is not None and not self.fault("trigger-before-commit"):
            conn.held_triggers.append((iq.name, tm, q.attrs["TRIGTYPE"]))
        else:
            self.qm.put_trigger_message(iq.name, tm)

    # ------------------------------------------------------------ events
    def on_put(self, q, m, conn, in_uow: bool, added: int = 1) -> None:
        """A put placed ``added`` messages (the segments of one message, or one): one event."""
        if q.attrs["TRIGGER"] != C.MQTC_ON or not self.qualifies(q, m):
            return
        n = self.depth(q)
        had = n - added
        kind = q.attrs["TRIGTYPE"]
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
            last = self.last_written.get(q.name)
            again = last is None or self.fault("trigint-ignored") or \
                (self.qm.clock - last) * 100 >= self.qm.trigger_interval
        elif not now and kind == DEPTH:
            again = had >= q.attrs["TRIGDPTH"]
        if (now or again) and self.ready(q):
            self.write(q, conn if in_uow else None)

    def on_uow_end(self, conn, commit: bool) -> None:
        for initq, tm, kind in conn.held_triggers:
            if commit or kind != EVERY or self.fault("every-delivered-at-backout"):
                self.qm.put_trigger_message(initq, tm)
        conn.held_triggers = []

    def on_close(self, queue: str, had_input: bool) -> None:
        q = self.qm.queues.get(queue)
        if q is None or not had_input or self.readers(queue) or self.fault("no-trigger-at-close"):
            return
        if q.attrs["TRIGTYPE"] in (FIRST, DEPTH) and self.enough(q) \
                and self.ready(q, check_readers=False, check_get=False):
            self.write(q)

    def on_alter(self, queue: str, before: dict) -> None:
        q = self.qm.queues[queue]
        a = q.attrs
        on = a["TRIGGER"] == C.MQTC_ON
        if on and (before["TRIGGER"] != C.MQTC_ON or a["TRIGTYPE"] != before["TRIGTYPE"]
                   or a["TRIGMPRI"] != before["TRIGMPRI"]
                   or (a["TRIGTYPE"] == DEPTH and a["TRIGDPTH"] != before["TRIGDPTH"])):
            if self.enough(q) and self.ready(q, check_monitor=False):
                self.write(q)
                if a["TRIGTYPE"] == EVERY and self.fault("every-twice-on-alter"):
                    self.write(q)
        if before["GET"] == C.MQQA_GET_INHIBITED and a["GET"] == C.MQQA_GET_ALLOWED:
            if self.enough(q) and self.ready(q, check_get=False):
                self.write(q)
        if before["PUT"] == C.MQQA_PUT_INHIBITED and a["PUT"] == C.MQQA_PUT_ALLOWED:
            for app in self.served_by(queue):
                if self.enough(app) and self.ready(app):
                    self.write(app)

    def on_open_for_input(self, queue: str, first_reader: bool) -> None:
        if not first_reader or self.fault("no-trigger-on-monitor-open"):
            return
        for app in self.served_by(queue):
            if self.enough(app) and self.ready(app, check_monitor=False):
                self.write(app)

    def served_by(self, initq: str):
        return [q for n, q in sorted(self.qm.queues.items()) if q.attrs["INITQ"].strip() == initq and n != initq]

    def on_restart(self) -> None:
        self.last_written.clear()
