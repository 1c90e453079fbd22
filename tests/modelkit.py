"""Helpers for hand-written model tests."""

from __future__ import annotations

from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C

COVERED: set[str] = set()

STD = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE


def covers(*rule_ids: str):
    """Mark a test as the hand-written case for these rules."""
    COVERED.update(rule_ids)

    def deco(fn):
        fn.rule_ids = rule_ids
        return fn

    return deco


class Script:
    """Drives the model one op at a time, following the only (or first) outcome."""

    def __init__(self, platform: str = C.PLATFORM_DISTRIBUTED, **queues) -> None:
        self.state = model.initial_state(platform)
        self.last_rules: tuple[str, ...] = ()
        for name, attrs in (queues or {"Q1": {}}).items():
            self.do(L.DefineQueue(queue=name, attrs=attrs))

    def branches(self, op: L.Op) -> list[model.Branch]:
        return model.step(self.state, op)

    def allowed(self, op: L.Op) -> list[L.Observation]:
        return [b.observation for b in self.branches(op)]

    def do(self, op: L.Op, pick: int | None = None) -> L.Observation:
        branches = self.branches(op)
        if pick is None:
            assert len(branches) == 1, f"{op} has {len(branches)} outcomes: {[b.observation for b in branches]}"
            pick = 0
        branch = branches[pick]
        self.state = branch.state
        self.last_rules = branch.rules
        return branch.observation

    # shorthands -------------------------------------------------------
    def connect(self, conn: str, *queues: str, options: int = STD) -> None:
        self.do(L.Connect(conn=conn))
        for q in queues:
            assert self.do(L.Open(conn=conn, handle=f"{conn}.{q}", queue=q, options=options)).rc == 0

    def put(self, conn: str, queue: str, body: str, options: int = C.MQPMO_NO_SYNCPOINT, **md) -> L.Observation:
        return self.do(L.Put(conn=conn, handle=f"{conn}.{queue}", body=body,
                             md=L.MessageDescriptor(**md), options=options))

    def get(self, conn: str, queue: str, options: int = C.MQGMO_NO_SYNCPOINT, pick=None) -> L.Observation:
        return self.do(L.Get(conn=conn, handle=f"{conn}.{queue}", options=options), pick=pick)

    def body(self, conn: str, queue: str, options: int = C.MQGMO_NO_SYNCPOINT) -> str | None:
        obs = self.get(conn, queue, options)
        return obs.message.body if obs.message else None

    def depth(self, queue: str) -> int:
        return dict(self.do(L.InquireQueue(queue=queue, names=["CURDEPTH"])).attrs)["CURDEPTH"]
