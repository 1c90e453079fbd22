// go-qm: a small queue manager in Go behind mqconform's JSON-lines protocol (docs/adapters/protocol.md), for the
// `core` area, with the standard library only.  It is honest about what it cannot do, in the three ways the
// protocol gives a system:
//
//   - a call it has no way to make is answered {"not_expressible": reason} (browse locks, gets under a cursor);
//   - a field it keeps no value for is declared in hello's "lacks" and left out (it counts no backouts);
//   - a rule it cannot show at all is declared in "not_applicable" with the reason (nothing survives a restart).
//
// Everything else it answers as its own queues behave; where that is not MQ's behaviour the kit finds it.
//
//	go build -o go-qm ./examples/go-qm
//	mqconform run --adapter subprocess --adapter-opt command=./go-qm --area core
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
)

// ---- MQ constants (cmqc.h), as listed in docs/adapters/protocol.md
const (
	ccOK, ccWarning, ccFailed = 0, 1, 2

	rcNone, rcExpiryError, rcGetInhibited, rcHconnError, rcHobjError            = 0, 2013, 2016, 2018, 2019
	rcNoMsgAvailable, rcNotOpenForBrowse, rcNotOpenForInput, rcNotOpenForOutput = 2033, 2036, 2037, 2039
	rcObjectInUse, rcOptionsError, rcPersistenceError, rcPriorityExceedsMaximum = 2042, 2046, 2047, 2049
	rcPriorityError, rcPutInhibited, rcQFull, rcUnknownObjectName               = 2050, 2051, 2053, 2085
	rcUnknownRemoteQmgr, rcWaitIntervalError, rcMatchOptionsError               = 2087, 2090, 2247

	ooInputAsQDef, ooInputShared, ooInputExclusive, ooBrowse, ooOutput = 1, 2, 4, 8, 16
	pmoSyncpoint, pmoNoSyncpoint                                       = 2, 4
	gmoSyncpoint, gmoNoSyncpoint, gmoBrowseFirst, gmoBrowseNext        = 2, 4, 16, 32
	gmoMsgUnderCursor, gmoLock, gmoUnlock, gmoBrowseMsgUnderCursor     = 256, 512, 1024, 2048
	gmoSyncpointIfPersistent                                           = 4096
	moMatchMsgID, moMatchCorrelID, moDefined                           = 1, 2, 63
	maxPriority                                                        = 9
)

var operations = []string{"DefineQueue", "AlterQueue", "InquireQueue", "Connect", "Disconnect", "Open", "Close",
	"Put", "Put1", "Get", "GetMatching", "Commit", "Backout", "AdvanceClock"}

// ---- the operation language (only the fields this server reads)
type descriptor struct {
	Priority    int             `json:"priority"`
	Persistence int             `json:"persistence"`
	Expiry      int             `json:"expiry"`
	Report      int             `json:"report"`
	MsgType     int             `json:"msg_type"`
	Feedback    int             `json:"feedback"`
	Format      string          `json:"format"`
	ReplyToQ    string          `json:"reply_to_q"`
	ReplyToQmgr string          `json:"reply_to_qmgr"`
	MsgID       string          `json:"msg_id"`
	CorrelID    string          `json:"correl_id"`
	Context     json.RawMessage `json:"context"`
}

type op struct {
	Type         string          `json:"type"`
	Conn         string          `json:"conn"`
	Handle       string          `json:"handle"`
	Queue        string          `json:"queue"`
	Qmgr         string          `json:"qmgr"`
	Body         string          `json:"body"`
	Options      int             `json:"options"`
	WaitInterval int             `json:"wait_interval"`
	MatchOptions int             `json:"match_options"`
	MsgID        string          `json:"msg_id"`
	CorrelID     string          `json:"correl_id"`
	MD           descriptor      `json:"md"`
	Attrs        [][]interface{} `json:"attrs"`
	Names        []string        `json:"names"`
	Abnormal     bool            `json:"abnormal"`
	Tenths       int             `json:"tenths"`
}

// ---- the queue manager
type message struct {
	seq, level, putTime int
	body                string
	md                  descriptor
	pendingPut          *connection
	pendingGet          *connection
}

type queue struct {
	attrs    map[string]interface{}
	messages []*message
}

type handle struct {
	queue     string
	options   int
	input     bool
	exclusive bool
	cursor    *message
}

type work struct {
	put bool
	msg *message
	q   *queue
}

type connection struct {
	handles map[string]*handle
	uow     []work
}

type mqError int

var (
	queues map[string]*queue
	conns  map[string]*connection
	clock  int // tenths of a second
	seq    int
)

func reset() {
	queues, conns, clock, seq = map[string]*queue{}, map[string]*connection{}, 0, 0
}

func defaults() map[string]interface{} {
	return map[string]interface{}{"DEFPRTY": 0, "DEFPSIST": 0, "DEFSOPT": ooInputShared, "MSGDLVSQ": 0, "GET": 0,
		"PUT": 0, "MAXDEPTH": 5000, "USAGE": 0, "BOTHRESH": 0, "BOQNAME": "", "TRIGGER": 0, "TRIGTYPE": 1,
		"TRIGDPTH": 1, "TRIGMPRI": 0, "TRIGDATA": "", "PROCESS": "", "INITQ": ""}
}

func number(v interface{}) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case bool:
		if n {
			return 1
		}
	}
	return 0
}

func (q *queue) attr(name string) int { return number(q.attrs[name]) }

func getConn(name string) *connection {
	if c, ok := conns[name]; ok {
		return c
	}
	panic(mqError(rcHconnError))
}

func getQueue(name string) *queue {
	if q, ok := queues[name]; ok {
		return q
	}
	panic(mqError(rcUnknownObjectName))
}

func getHandle(c *connection, name string) *handle {
	if h, ok := c.handles[name]; ok {
		return h
	}
	panic(mqError(rcHobjError))
}

func expired(m *message) bool { return m.md.Expiry != -1 && clock-m.putTime >= m.md.Expiry }

func depth(q *queue) int {
	n := 0
	for _, m := range q.messages {
		if m.pendingGet == nil {
			n++
		}
	}
	return n
}

// delivery order: highest priority first, then arrival; a FIFO queue (MSGDLVSQ 1): arrival only
func ordered(q *queue) []*message {
	out := append([]*message(nil), q.messages...)
	fifo := q.attr("MSGDLVSQ") == 1
	sort.SliceStable(out, func(i, j int) bool {
		if !fifo && out[i].level != out[j].level {
			return out[i].level > out[j].level
		}
		return out[i].seq < out[j].seq
	})
	return out
}

func before(q *queue, a, b *message) bool {
	if q.attr("MSGDLVSQ") != 1 && a.level != b.level {
		return a.level > b.level
	}
	return a.seq < b.seq
}

func remove(q *queue, m *message) {
	for i, x := range q.messages {
		if x == m {
			q.messages = append(q.messages[:i], q.messages[i+1:]...)
			return
		}
	}
}

func inputHandles(name string) []*handle {
	var out []*handle
	for _, c := range conns {
		for _, h := range c.handles {
			if h.queue == name && h.input {
				out = append(out, h)
			}
		}
	}
	return out
}

func count(name string, test func(*handle) bool) int {
	n := 0
	for _, c := range conns {
		for _, h := range c.handles {
			if h.queue == name && test(h) {
				n++
			}
		}
	}
	return n
}

func endUnitOfWork(c *connection, commit bool) {
	for _, w := range c.uow {
		switch {
		case w.put && commit:
			w.msg.pendingPut = nil
		case w.put:
			remove(w.q, w.msg)
		case commit:
			remove(w.q, w.msg)
		default:
			w.msg.pendingGet = nil // back on the queue; no backout count is kept (declared in "lacks")
		}
	}
	c.uow = nil
}

func putMessage(c *connection, name string, o op) int {
	q := getQueue(name)
	md := o.MD
	if o.Options&pmoSyncpoint != 0 && o.Options&pmoNoSyncpoint != 0 {
		panic(mqError(rcOptionsError))
	}
	if q.attr("PUT") == 1 {
		panic(mqError(rcPutInhibited))
	}
	if md.Priority == -1 {
		md.Priority = q.attr("DEFPRTY")
	}
	if md.Priority < 0 {
		panic(mqError(rcPriorityError))
	}
	if md.Persistence == 2 {
		md.Persistence = q.attr("DEFPSIST")
	}
	if md.Persistence != 0 && md.Persistence != 1 {
		panic(mqError(rcPersistenceError))
	}
	if md.Expiry == 0 || md.Expiry < -1 {
		panic(mqError(rcExpiryError))
	}
	if depth(q) >= q.attr("MAXDEPTH") {
		panic(mqError(rcQFull))
	}
	seq++
	if md.MsgID == "" {
		md.MsgID = fmt.Sprintf("GOQM%020d", seq)
	}
	level := md.Priority
	if level > maxPriority {
		level = maxPriority
	}
	m := &message{seq: seq, level: level, putTime: clock, body: o.Body, md: md}
	if o.Options&pmoSyncpoint != 0 {
		m.pendingPut = c
		c.uow = append(c.uow, work{put: true, msg: m, q: q})
	}
	q.messages = append(q.messages, m)
	if md.Priority > maxPriority {
		return rcPriorityExceedsMaximum
	}
	return rcNone
}

func returned(m *message) map[string]interface{} {
	expiry := -1
	if m.md.Expiry != -1 {
		expiry = m.md.Expiry - (clock - m.putTime)
	}
	context := json.RawMessage("null")
	if len(m.md.Context) > 0 {
		context = m.md.Context
	}
	// backout_count left out: declared lacking in hello
	return map[string]interface{}{"type": "ReturnedMessage", "body": m.body, "priority": m.md.Priority,
		"persistence": m.md.Persistence, "expiry": expiry, "report": m.md.Report, "msg_type": m.md.MsgType,
		"feedback": m.md.Feedback, "format": m.md.Format, "reply_to_q": m.md.ReplyToQ,
		"reply_to_qmgr": m.md.ReplyToQmgr, "msg_id": m.md.MsgID, "correl_id": m.md.CorrelID,
		"context": context, "xmit_header": nil, "trigger": nil, "dlh": nil, "segment_status": " ", "offset": 0}
}

type observation struct {
	Type    string                 `json:"type"`
	CC      int                    `json:"cc"`
	RC      int                    `json:"rc"`
	Message map[string]interface{} `json:"message"`
	Attrs   [][]interface{}        `json:"attrs"`
}

func answer(rc int) observation {
	cc := ccOK
	if rc == rcPriorityExceedsMaximum {
		cc = ccWarning
	} else if rc != rcNone {
		cc = ccFailed
	}
	return observation{Type: "Observation", CC: cc, RC: rc}
}

// notExpressible: a call this system has no way to make, with the reason
type notExpressible string

func get(o op) observation {
	if o.Options&(gmoLock|gmoUnlock) != 0 {
		return panicWith(notExpressible("go-qm has no browse locks: MQGMO_LOCK and MQGMO_UNLOCK cannot be expressed"))
	}
	if o.Options&(gmoMsgUnderCursor|gmoBrowseMsgUnderCursor) != 0 {
		return panicWith(notExpressible("go-qm keeps a browse position, not a message under the cursor"))
	}
	c := getConn(o.Conn)
	h := getHandle(c, o.Handle)
	q := getQueue(h.queue)
	browse := o.Options&(gmoBrowseFirst|gmoBrowseNext) != 0
	if o.Options&gmoSyncpoint != 0 && o.Options&gmoNoSyncpoint != 0 {
		panic(mqError(rcOptionsError))
	}
	if o.WaitInterval < -1 {
		panic(mqError(rcWaitIntervalError))
	}
	if o.MatchOptions&^moDefined != 0 {
		panic(mqError(rcMatchOptionsError))
	}
	if browse && h.options&ooBrowse == 0 {
		panic(mqError(rcNotOpenForBrowse))
	}
	if !browse && !h.input {
		panic(mqError(rcNotOpenForInput))
	}
	if q.attr("GET") == 1 {
		panic(mqError(rcGetInhibited))
	}
	selected := func(m *message) bool {
		return (o.MatchOptions&moMatchMsgID == 0 || o.MsgID == "" || m.md.MsgID == o.MsgID) &&
			(o.MatchOptions&moMatchCorrelID == 0 || o.CorrelID == "" || m.md.CorrelID == o.CorrelID)
	}
	var found *message
	for _, m := range ordered(q) {
		if m.pendingPut != nil || m.pendingGet != nil || !selected(m) {
			continue
		}
		if expired(m) {
			remove(q, m) // discarded when met
			continue
		}
		if o.Options&gmoBrowseNext != 0 && h.cursor != nil && !before(q, h.cursor, m) {
			continue
		}
		found = m
		break
	}
	if found == nil {
		panic(mqError(rcNoMsgAvailable))
	}
	if browse {
		h.cursor = found
		return withMessage(found)
	}
	if o.Options&gmoSyncpoint != 0 || (o.Options&gmoSyncpointIfPersistent != 0 && found.md.Persistence == 1) {
		found.pendingGet = c
		c.uow = append(c.uow, work{msg: found, q: q})
	} else {
		remove(q, found)
	}
	return withMessage(found)
}

func withMessage(m *message) observation {
	obs := answer(rcNone)
	obs.Message = returned(m)
	return obs
}

func panicWith(reason notExpressible) observation { panic(reason) }

func execute(o op) observation {
	switch o.Type {
	case "DefineQueue":
		attrs := defaults()
		for _, a := range o.Attrs {
			attrs[a[0].(string)] = a[1]
		}
		queues[o.Queue] = &queue{attrs: attrs}
	case "AlterQueue":
		q := getQueue(o.Queue)
		for _, a := range o.Attrs {
			q.attrs[a[0].(string)] = a[1]
		}
	case "InquireQueue":
		q := getQueue(o.Queue)
		obs := answer(rcNone)
		obs.Attrs = [][]interface{}{}
		for _, name := range o.Names {
			var value interface{} = q.attrs[name]
			switch name {
			case "CURDEPTH":
				value = depth(q)
			case "IPPROCS":
				value = count(o.Queue, func(h *handle) bool { return h.input })
			case "OPPROCS":
				value = count(o.Queue, func(h *handle) bool { return h.options&ooOutput != 0 })
			}
			obs.Attrs = append(obs.Attrs, []interface{}{name, value})
		}
		return obs
	case "Connect":
		conns[o.Conn] = &connection{handles: map[string]*handle{}}
	case "Disconnect":
		c := getConn(o.Conn)
		endUnitOfWork(c, !o.Abnormal)
		delete(conns, o.Conn)
	case "Open":
		c := getConn(o.Conn)
		q := getQueue(o.Queue)
		input := o.Options & (ooInputAsQDef | ooInputShared | ooInputExclusive)
		if input&ooInputAsQDef != 0 {
			input = q.attr("DEFSOPT")
		}
		others := inputHandles(o.Queue)
		for _, h := range others {
			if input != 0 && h.exclusive {
				panic(mqError(rcObjectInUse))
			}
		}
		if input == ooInputExclusive && len(others) > 0 {
			panic(mqError(rcObjectInUse))
		}
		c.handles[o.Handle] = &handle{queue: o.Queue, options: o.Options, input: input != 0,
			exclusive: input == ooInputExclusive}
	case "Close":
		c := getConn(o.Conn)
		getHandle(c, o.Handle)
		delete(c.handles, o.Handle)
	case "Put":
		c := getConn(o.Conn)
		h := getHandle(c, o.Handle)
		if h.options&ooOutput == 0 {
			panic(mqError(rcNotOpenForOutput))
		}
		return answer(putMessage(c, h.queue, o))
	case "Put1":
		c := getConn(o.Conn)
		if o.Qmgr != "" && o.Qmgr != " " {
			panic(mqError(rcUnknownRemoteQmgr))
		}
		return answer(putMessage(c, o.Queue, o))
	case "Get", "GetMatching":
		return get(o)
	case "Commit":
		endUnitOfWork(getConn(o.Conn), true)
	case "Backout":
		endUnitOfWork(getConn(o.Conn), false)
	case "AdvanceClock":
		clock += o.Tenths
	default:
		panic(fmt.Errorf("operation %s is not declared in hello", o.Type))
	}
	return answer(rcNone)
}

// run: the answer to one execute: an observation, or a call declined as not expressible
func run(o op) (result interface{}) {
	defer func() {
		switch e := recover().(type) {
		case nil:
		case mqError:
			result = map[string]interface{}{"observation": answer(int(e))}
		case notExpressible:
			result = map[string]interface{}{"not_expressible": string(e)}
		default:
			panic(e)
		}
	}()
	return map[string]interface{}{"observation": execute(o)}
}

// ---- the protocol
type request struct {
	ID     *int64 `json:"id"`
	Method string `json:"method"`
	Params struct {
		Op op `json:"op"`
	} `json:"params"`
}

func hello() interface{} {
	return map[string]interface{}{
		"protocol": 1,
		"server":   map[string]string{"name": "go-qm (mqconform example)", "version": "0.1.0", "runtime": runtime.Version()},
		"capabilities": map[string]interface{}{
			"areas": []string{"core"}, "platforms": []string{"distributed"}, "operations": operations,
			"realtime": false, "expiry_tolerance": 0,
			"lacks":          []string{"message.backout_count"},
			"not_applicable": map[string]string{"CORE-32": "go-qm keeps its queues in memory only: nothing survives a restart"},
		},
	}
}

func respond(out *json.Encoder, req request) (stop bool) {
	defer func() {
		if e := recover(); e != nil {
			fmt.Fprintln(os.Stderr, "go-qm:", e)
			out.Encode(map[string]interface{}{"id": req.ID, "error": map[string]string{"message": fmt.Sprint(e)}})
		}
	}()
	var result interface{} = map[string]interface{}{}
	switch req.Method {
	case "hello":
		result = hello()
	case "start_case", "end_case":
		reset()
	case "execute":
		result = run(req.Params.Op)
	case "shutdown":
		stop = true
	default:
		panic(fmt.Errorf("unknown method %q", req.Method))
	}
	out.Encode(map[string]interface{}{"id": req.ID, "result": result})
	return stop
}

func main() {
	reset()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			out.Encode(map[string]interface{}{"id": nil, "error": map[string]string{"message": "not JSON: " + err.Error()}})
			continue
		}
		if respond(out, req) {
			return
		}
	}
}
