#!/usr/bin/env node
// A small queue manager in Node.js behind mqconform's JSON-lines protocol: the `core` area over
// in-memory queues, with no npm dependencies. Written from docs/adapters/protocol.md and the
// schemas in adapters/subprocess/schemas/; copy it to start a server in another language.
//
//   mqconform run --adapter subprocess --adapter-opt command="node examples/node-qm/server.js" --area core
//
// It is deliberately simple: where it departs from MQ, the kit finds it and says which rule.
"use strict";

const readline = require("readline");

// ---- MQ constants (cmqc.h), as listed in docs/adapters/protocol.md
const CC = { OK: 0, WARNING: 1, FAILED: 2 };
const RC = {
  NONE: 0, GET_INHIBITED: 2016, HCONN_ERROR: 2018, HOBJ_ERROR: 2019, NO_MSG_AVAILABLE: 2033,
  NO_MSG_UNDER_CURSOR: 2034, NOT_OPEN_FOR_BROWSE: 2036, NOT_OPEN_FOR_INPUT: 2037, NOT_OPEN_FOR_OUTPUT: 2039,
  OBJECT_IN_USE: 2042, OPTIONS_ERROR: 2046, PERSISTENCE_ERROR: 2047, PRIORITY_EXCEEDS_MAXIMUM: 2049,
  PRIORITY_ERROR: 2050, PUT_INHIBITED: 2051, Q_FULL: 2053, UNKNOWN_OBJECT_NAME: 2085,
  UNKNOWN_REMOTE_Q_MGR: 2087, WAIT_INTERVAL_ERROR: 2090, NO_MSG_LOCKED: 2209, EXPIRY_ERROR: 2013,
  MATCH_OPTIONS_ERROR: 2247,
};
const WARNINGS = new Set([RC.PRIORITY_EXCEEDS_MAXIMUM]);
const OO = { INPUT_AS_Q_DEF: 1, INPUT_SHARED: 2, INPUT_EXCLUSIVE: 4, BROWSE: 8, OUTPUT: 16, INQUIRE: 32 };
const PMO = { SYNCPOINT: 2, NO_SYNCPOINT: 4, PASS_ALL_CONTEXT: 512, SET_ALL_CONTEXT: 2048 };
const GMO = {
  WAIT: 1, SYNCPOINT: 2, NO_SYNCPOINT: 4, BROWSE_FIRST: 16, BROWSE_NEXT: 32, MSG_UNDER_CURSOR: 256,
  LOCK: 512, UNLOCK: 1024, BROWSE_MSG_UNDER_CURSOR: 2048, SYNCPOINT_IF_PERSISTENT: 4096,
};
const MAX_PRIORITY = 9;
const DEFAULTS = { DEFPRTY: 0, DEFPSIST: 0, DEFSOPT: OO.INPUT_SHARED, MSGDLVSQ: 0, GET: 0, PUT: 0,
  MAXDEPTH: 5000, USAGE: 0, BOTHRESH: 0, BOQNAME: "", TRIGGER: 0, TRIGTYPE: 1, TRIGDPTH: 1, TRIGMPRI: 0,
  TRIGDATA: "", PROCESS: "", INITQ: "" };
const OPERATIONS = ["DefineQueue", "AlterQueue", "InquireQueue", "Connect", "Disconnect", "Open", "Close",
  "Put", "Put1", "Get", "GetMatching", "Commit", "Backout", "AdvanceClock"];
const MO = { MATCH_MSG_ID: 1, MATCH_CORREL_ID: 2, DEFINED: 63 };

// ---- the queue manager
let queues, conns, clock, seq, ids;

function reset() {
  queues = new Map();   // name -> {attrs, messages: [msg]}
  conns = new Map();    // name -> {handles: Map(name -> handle), uow: [{kind, msg, queue}]}
  clock = 0;            // tenths of a second
  seq = 0;
  ids = 0;
}

function observation(rc = RC.NONE, extra = {}) {
  const cc = rc === RC.NONE ? CC.OK : WARNINGS.has(rc) ? CC.WARNING : CC.FAILED;
  return { type: "Observation", cc, rc, message: null, attrs: null, ...extra };
}

class MQError extends Error {
  constructor(rc) { super(`MQ reason ${rc}`); this.rc = rc; }
}
const fail = (rc) => { throw new MQError(rc); };

function conn(name) { return conns.get(name) || fail(RC.HCONN_ERROR); }
function queue(name) { return queues.get(name) || fail(RC.UNKNOWN_OBJECT_NAME); }
function handle(c, name) { return c.handles.get(name) || fail(RC.HOBJ_ERROR); }

// delivery order: highest priority first, then arrival; FIFO queues: arrival only
function ordered(q) {
  const fifo = q.attrs.MSGDLVSQ === 1;
  return [...q.messages].sort((a, b) => (fifo ? 0 : b.level - a.level) || a.seq - b.seq);
}
function position(q, m) { return [q.attrs.MSGDLVSQ === 1 ? 0 : -m.level, m.seq]; }
function after(p, r) { return p[0] !== r[0] ? p[0] > r[0] : p[1] > r[1]; }

function expired(m) { return m.md.expiry !== -1 && clock - m.putTime >= m.md.expiry; }

// what a handle may see: committed, not got by a unit of work, not locked by another handle
function visible(q, h, m) {
  return !m.pendingPut && !m.pendingGet && (!m.lock || m.lock === h) && !expired(m);
}

function depth(q) { return q.messages.filter((m) => !m.pendingGet).length; }

function defineQueue(op) {
  const attrs = { ...DEFAULTS };
  for (const [k, v] of op.attrs) attrs[k] = v;
  queues.set(op.queue, { attrs, messages: [] });
  return observation();
}

function alterQueue(op) {
  const q = queue(op.queue);
  for (const [k, v] of op.attrs) q.attrs[k] = v;
  return observation();
}

function inquireQueue(op) {
  const q = queue(op.queue);
  const counts = (test) => [...conns.values()].reduce(
    (n, c) => n + [...c.handles.values()].filter((h) => h.queue === op.queue && test(h)).length, 0);
  const value = (name) => {
    if (name === "CURDEPTH") return depth(q);
    if (name === "IPPROCS") return counts((h) => h.input);
    if (name === "OPPROCS") return counts((h) => h.options & OO.OUTPUT);
    return q.attrs[name];
  };
  return observation(RC.NONE, { attrs: op.names.map((n) => [n, value(n)]) });
}

function connect(op) {
  conns.set(op.conn, { handles: new Map(), uow: [] });
  return observation();
}

function disconnect(op) {
  const c = conn(op.conn);
  endUnitOfWork(c, !op.abnormal);
  for (const h of c.handles.values()) release(h);
  conns.delete(op.conn);
  return observation();
}

function open(op) {
  const c = conn(op.conn);
  const q = queue(op.queue);
  let input = op.options & (OO.INPUT_AS_Q_DEF | OO.INPUT_SHARED | OO.INPUT_EXCLUSIVE);
  if (input & OO.INPUT_AS_Q_DEF) input = q.attrs.DEFSOPT;
  const others = [...conns.values()].flatMap((x) => [...x.handles.values()])
    .filter((h) => h.queue === op.queue && h.input);
  if (input && others.some((h) => h.exclusive)) fail(RC.OBJECT_IN_USE);
  if (input === OO.INPUT_EXCLUSIVE && others.length) fail(RC.OBJECT_IN_USE);
  c.handles.set(op.handle, { name: `${op.conn}/${op.handle}`, queue: op.queue, options: op.options,
    input: Boolean(input), exclusive: input === OO.INPUT_EXCLUSIVE, cursor: null });
  return observation();
}

function release(h) {
  const q = queues.get(h.queue);
  if (q) for (const m of q.messages) if (m.lock === h.name) m.lock = null;
}

function close(op) {
  const c = conn(op.conn);
  const h = handle(c, op.handle);
  release(h);
  c.handles.delete(op.handle);
  return observation();
}

function putMessage(c, qname, op) {
  const q = queue(qname);
  const md = op.md;
  if ((op.options & PMO.SYNCPOINT) && (op.options & PMO.NO_SYNCPOINT)) fail(RC.OPTIONS_ERROR);
  if (q.attrs.PUT === 1) fail(RC.PUT_INHIBITED);
  let priority = md.priority === -1 ? q.attrs.DEFPRTY : md.priority;
  if (priority < 0) fail(RC.PRIORITY_ERROR);
  const persistence = md.persistence === 2 ? q.attrs.DEFPSIST : md.persistence;
  if (persistence !== 0 && persistence !== 1) fail(RC.PERSISTENCE_ERROR);
  if (md.expiry === 0 || md.expiry < -1) fail(RC.EXPIRY_ERROR);
  if (depth(q) >= q.attrs.MAXDEPTH) fail(RC.Q_FULL);
  const rc = priority > MAX_PRIORITY ? RC.PRIORITY_EXCEEDS_MAXIMUM : RC.NONE;
  const m = {
    seq: ++seq, body: op.body, level: Math.min(priority, MAX_PRIORITY), putTime: clock, backoutCount: 0,
    md: { ...md, priority, persistence, msg_id: md.msg_id || `NODE${String(++ids).padStart(20, "0")}` },
    context: md.context,   // given: the message is put with it (MQPMO_SET_ALL_CONTEXT); null: the default
    pendingPut: null, pendingGet: null, lock: null,
  };
  if (op.options & PMO.SYNCPOINT) {
    m.pendingPut = c;
    c.uow.push({ kind: "put", msg: m, queue: q });
  }
  q.messages.push(m);
  return observation(rc);
}

function put(op) {
  const c = conn(op.conn);
  const h = handle(c, op.handle);
  if (!(h.options & OO.OUTPUT)) fail(RC.NOT_OPEN_FOR_OUTPUT);
  return putMessage(c, h.queue, op);
}

function put1(op) {
  const c = conn(op.conn);
  if (op.qmgr && op.qmgr.trim()) fail(RC.UNKNOWN_REMOTE_Q_MGR);
  return putMessage(c, op.queue, op);
}

function returned(m) {
  const md = m.md;
  return {
    type: "ReturnedMessage", body: m.body, priority: md.priority, persistence: md.persistence,
    expiry: md.expiry === -1 ? -1 : Math.max(1, md.expiry - (clock - m.putTime)), report: md.report,
    msg_type: md.msg_type, feedback: md.feedback, format: md.format, reply_to_q: md.reply_to_q,
    msg_id: md.msg_id, correl_id: md.correl_id, backout_count: m.backoutCount, xmit_header: null,
    trigger: null, reply_to_qmgr: md.reply_to_qmgr, context: m.context, dlh: null,
    segment_status: " ", offset: 0,   // no segmentation here: every message is whole
  };
}

function get(op) {
  const c = conn(op.conn);
  const h = handle(c, op.handle);
  const q = queue(h.queue);
  const o = op.options;
  const browse = o & (GMO.BROWSE_FIRST | GMO.BROWSE_NEXT | GMO.BROWSE_MSG_UNDER_CURSOR);
  if ((o & GMO.SYNCPOINT) && (o & GMO.NO_SYNCPOINT)) fail(RC.OPTIONS_ERROR);
  if (op.wait_interval < -1) fail(RC.WAIT_INTERVAL_ERROR);
  // GetMatching: MatchOptions select by MsgId and CorrelId ("" is MQMI_NONE / MQCI_NONE: any)
  const match = op.match_options || 0;
  if (match & ~MO.DEFINED) fail(RC.MATCH_OPTIONS_ERROR);
  const selected = (m) => (!(match & MO.MATCH_MSG_ID) || !op.msg_id || m.md.msg_id === op.msg_id)
    && (!(match & MO.MATCH_CORREL_ID) || !op.correl_id || m.md.correl_id === op.correl_id);
  if (browse && !(h.options & OO.BROWSE)) fail(RC.NOT_OPEN_FOR_BROWSE);
  if (!browse && !(o & GMO.UNLOCK) && !h.input) fail(RC.NOT_OPEN_FOR_INPUT);
  if (q.attrs.GET === 1) fail(RC.GET_INHIBITED);
  if (o & GMO.UNLOCK) {
    const locked = q.messages.find((m) => m.lock === h.name);
    if (!locked) fail(RC.NO_MSG_LOCKED);
    locked.lock = null;
    return observation();
  }
  for (const m of q.messages) if (m.lock === h.name) m.lock = null;   // a new browse or get drops the lock
  q.messages = q.messages.filter((m) => m.pendingPut || m.pendingGet || !expired(m));
  const candidates = ordered(q).filter((m) => visible(q, h.name, m));
  let m;
  if (o & (GMO.MSG_UNDER_CURSOR | GMO.BROWSE_MSG_UNDER_CURSOR)) {
    m = h.cursor && candidates.find((x) => x.seq === h.cursor.seq);
    if (!m) fail(RC.NO_MSG_UNDER_CURSOR);
  } else if (o & GMO.BROWSE_NEXT && h.cursor) {
    m = candidates.find((x) => selected(x) && after(position(q, x), h.cursor.pos));
  } else {
    m = candidates.find(selected);   // under the cursor (above) the selection is ignored
  }
  if (!m) fail(RC.NO_MSG_AVAILABLE);
  if (browse) {
    h.cursor = { seq: m.seq, pos: position(q, m) };
    if (o & GMO.LOCK) m.lock = h.name;
    return observation(RC.NONE, { message: returned(m) });
  }
  const syncpoint = (o & GMO.SYNCPOINT) || ((o & GMO.SYNCPOINT_IF_PERSISTENT) && m.md.persistence === 1);
  if (syncpoint) {
    m.pendingGet = c;
    c.uow.push({ kind: "get", msg: m, queue: q });
  } else {
    q.messages = q.messages.filter((x) => x !== m);
  }
  return observation(RC.NONE, { message: returned(m) });
}

function endUnitOfWork(c, commit) {
  for (const { kind, msg, queue: q } of c.uow) {
    if (kind === "put") {
      if (commit) msg.pendingPut = null;
      else q.messages = q.messages.filter((x) => x !== msg);
    } else if (commit) {
      q.messages = q.messages.filter((x) => x !== msg);
    } else {
      msg.pendingGet = null;
      msg.backoutCount += 1;
    }
  }
  c.uow = [];
}

const OPS = {
  DefineQueue: defineQueue, AlterQueue: alterQueue, InquireQueue: inquireQueue, Connect: connect,
  Disconnect: disconnect, Open: open, Close: close, Put: put, Put1: put1, Get: get, GetMatching: get,
  Commit: (op) => { endUnitOfWork(conn(op.conn), true); return observation(); },
  Backout: (op) => { endUnitOfWork(conn(op.conn), false); return observation(); },
  AdvanceClock: (op) => { clock += op.tenths; return observation(); },
};

function execute(op) {
  try {
    return OPS[op.type](op);
  } catch (e) {
    if (e instanceof MQError) return observation(e.rc);
    throw e;
  }
}

// ---- the protocol
const out = (message) => process.stdout.write(JSON.stringify(message) + "\n");

function answer(request) {
  const params = request.params || {};
  switch (request.method) {
    case "hello":
      return {
        protocol: 1,
        server: { name: "node-qm (mqconform example)", version: "0.1.0", runtime: `node ${process.version}` },
        capabilities: {
          areas: ["core"], platforms: ["distributed"], operations: OPERATIONS, realtime: false,
          expiry_tolerance: 0,
          not_applicable: { "CORE-32": "the example keeps nothing across a restart: Restart is not implemented" },
        },
      };
    case "start_case": reset(); return {};
    case "execute": return { observation: execute(params.op) };
    case "end_case": reset(); return {};
    case "shutdown": return {};
    default: throw new Error(`unknown method ${request.method}`);
  }
}

reset();
const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch (e) {
    out({ id: null, error: { message: `not JSON: ${e.message}` } });
    return;
  }
  try {
    out({ id: request.id, result: answer(request) });
  } catch (e) {
    console.error(e.stack);
    out({ id: request.id, error: { message: String(e.message) } });
  }
  if (request.method === "shutdown") {
    input.close();
    process.stdin.destroy();   // nothing more to read: let the process end (its answer is written already)
  }
});
