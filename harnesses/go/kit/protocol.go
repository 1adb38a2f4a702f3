package kit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"time"
)

const traceCap = 4096

// maxRepeat bounds a bench request: a client's slip must not hold the harness for hours.
const maxRepeat = 100000

// maxPayload bounds one request's payload, as the Rust and Java kits do: the suites send a few MiB at most, and a
// header that declares more is answered with an error, not a runtime panic (make of 10^15 bytes).
const maxPayload = 1 << 30

var itemSizes = map[string]int{
	"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
	"float16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16,
}

// badRequest is a request the harness cannot act on: an error reply without a trace.
type badRequest struct{ message string }

func (b *badRequest) Error() string { return b.message }

func bad(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

type request struct {
	Op         string          `json:"op"`
	Protocol   json.RawMessage `json:"protocol"`
	Framings   []string        `json:"framings"`
	Codec      json.RawMessage `json:"codec"`
	Options    json.RawMessage `json:"options"`
	Handle     string          `json:"handle"`
	Chunk      *Array          `json:"chunk"`
	Data       []byte          `json:"data"`
	ChunkShape []int           `json:"chunk_shape"`
	Of         string          `json:"of"`     // bench: the op to time
	Repeat     int             `json:"repeat"` // bench: how many times
}

type reply struct {
	Seq         *int      `json:"seq"`
	Status      string    `json:"status"`
	Protocol    int       `json:"protocol,omitempty"`
	Name        string    `json:"name,omitempty"`
	Version     string    `json:"version,omitempty"`
	Roles       []string  `json:"roles,omitempty"`
	Versions    any       `json:"versions,omitempty"` // any: an empty map is still written, as start needs
	Kind        string    `json:"kind,omitempty"`
	Language    string    `json:"language,omitempty"`
	Framing     string    `json:"framing,omitempty"`
	Handle      string    `json:"handle,omitempty"`
	Data        []byte    `json:"data,omitempty"`
	Chunk       *Array    `json:"chunk,omitempty"`
	Codec       any       `json:"codec,omitempty"`
	Message     string    `json:"message,omitempty"`
	Exception   string    `json:"exception,omitempty"`
	Requirement string    `json:"requirement,omitempty"`
	Trace       string    `json:"trace,omitempty"`
	Seconds     []float64 `json:"seconds,omitempty"`
	Payload     *int      `json:"payload,omitempty"`
}

type session[H any] struct {
	info    Info
	codec   Codec[H]
	in      *bufio.Reader
	out     *bufio.Writer
	binary  bool // binary framing, from the request after the start reply on
	started bool
	stopped bool
	handles map[string]H
}

// Run serves the protocol on stdin and stdout until stop or the end of input and returns the
// exit status. Whatever else the process prints goes to stderr: stdout is the protocol's.
func Run[H any](info Info, codec Codec[H]) int {
	out := os.Stdout
	os.Stdout = os.Stderr
	if err := Serve(info, codec, os.Stdin, out); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", info.Name, err)
		return 1
	}
	return 0
}

// Serve serves the protocol on any reader and writer until stop or the end of input.
func Serve[H any](info Info, codec Codec[H], in io.Reader, out io.Writer) error {
	if info.Language == "" {
		info.Language = "Go"
	}
	if info.Kind == "" {
		info.Kind = "codec"
	}
	if info.Roles == nil {
		info.Roles = []string{"encode", "decode"}
	}
	s := &session[H]{info: info, codec: codec, in: bufio.NewReaderSize(in, 1<<16), out: bufio.NewWriterSize(out, 1<<16),
		handles: map[string]H{}}
	for !s.stopped {
		line, err := s.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return nil // end of input: the session is gone
			}
			continue
		}
		r, binaryNext := s.serve(line)
		if err := s.write(r); err != nil {
			return fmt.Errorf("cannot write a reply: %w", err)
		}
		s.binary = binaryNext
	}
	return nil
}

// serve answers one request line (with its payload, in binary framing).
func (s *session[H]) serve(line []byte) (r *reply, binaryNext bool) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(line, &head); err != nil {
		return failure(nil, bad("the request is not a JSON object: %v", err), ""), s.binary
	}
	var req request
	var payload []byte
	if raw, has := head["payload"]; has && s.binary {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 0 {
			return failure(nil, bad("payload must be a non-negative integer, got %s", raw), ""), s.binary
		}
		if n > maxPayload {
			// Its bytes are not read, so the next frame cannot be found: the session ends after this reply.
			s.stopped = true
			return failure(nil, bad("a payload of %d bytes is over this harness's limit of %d; the session ends", n, maxPayload), ""), s.binary
		}
		payload = make([]byte, n)
		if _, err := io.ReadFull(s.in, payload); err != nil {
			return failure(nil, bad("input ended inside a %d-byte payload", n), ""), s.binary
		}
	}
	seq, err := strconv.Atoi(string(head["seq"]))
	if err != nil || seq < 0 {
		return failure(nil, bad("the request has no integer seq"), ""), s.binary
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return failure(&seq, bad("the request does not fit the protocol: %v", err), ""), s.binary
	}
	if payload != nil {
		if req.Chunk != nil { // encode, or bench of encode
			req.Chunk.Data = payload
		} else {
			req.Data = payload
		}
	}
	defer func() {
		if p := recover(); p != nil {
			r = failure(&seq, fmt.Errorf("panic: %v", p), string(debug.Stack()))
		}
	}()
	r, err = s.dispatch(&req)
	if err != nil {
		return failure(&seq, err, ""), s.binary
	}
	r.Seq, r.Status = &seq, "ok"
	return r, s.binary || r.Framing == "binary"
}

func failure(seq *int, err error, trace string) *reply {
	var rej *Rejection
	if errors.As(err, &rej) {
		return &reply{Seq: seq, Status: "rejected", Message: rej.Message, Exception: rej.Exception, Requirement: rej.Requirement}
	}
	var b *badRequest
	if errors.As(err, &b) {
		return &reply{Seq: seq, Status: "error", Message: b.message, Exception: "BadRequest"}
	}
	if len(trace) > traceCap {
		trace = trace[:traceCap]
	}
	return &reply{Seq: seq, Status: "error", Message: err.Error(), Exception: fmt.Sprintf("%T", err), Trace: trace}
}

// write sends one reply in the current framing and flushes it.
func (s *session[H]) write(r *reply) error {
	var payload []byte
	if s.binary {
		if r.Data != nil {
			payload, r.Data = r.Data, nil
		} else if r.Chunk != nil {
			payload, r.Chunk.Data = r.Chunk.Data, nil
		}
		if payload != nil {
			n := len(payload)
			r.Payload = &n
		}
	}
	enc := json.NewEncoder(s.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // one line, ended by '\n'
		return err
	}
	if _, err := s.out.Write(payload); err != nil {
		return err
	}
	return s.out.Flush()
}

// decodeJSON decodes with json.Number: 90.0 and 1e2 stay numbers with their text, not float64 guesses.
func decodeJSON(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var value any
	err := dec.Decode(&value)
	return value, err
}

func (s *session[H]) hasRole(role string) bool {
	for _, r := range s.info.Roles {
		if r == role {
			return true
		}
	}
	return false
}

func (s *session[H]) dispatch(req *request) (*reply, error) {
	switch req.Op {
	case "start":
		return s.start(req)
	case "stop":
		s.stopped = true
		return &reply{}, nil
	}
	if !s.started {
		return nil, bad("%q before start", req.Op)
	}
	switch req.Op {
	case "parse":
		if req.Codec == nil {
			return nil, bad("a parse request needs a codec")
		}
		codec, err := decodeJSON(req.Codec)
		if err != nil {
			return nil, bad("the codec is not JSON: %v", err)
		}
		parsed, err := s.codec.Parse(codec)
		if err != nil {
			return nil, err
		}
		handle := strconv.Itoa(len(s.handles) + 1)
		s.handles[handle] = parsed
		return &reply{Handle: handle}, nil
	case "bench":
		return s.bench(req)
	case "encode":
		parsed, err := s.handle(req.Handle)
		if err != nil {
			return nil, err
		}
		if req.Chunk == nil {
			return nil, bad("an encode request needs a chunk")
		}
		if err := checkSize(req.Chunk); err != nil {
			return nil, err
		}
		data, err := s.codec.Encode(parsed, *req.Chunk)
		if err != nil {
			return nil, err
		}
		return &reply{Data: data}, nil
	case "decode":
		parsed, err := s.handle(req.Handle)
		if err != nil {
			return nil, err
		}
		if req.Data == nil || req.ChunkShape == nil {
			return nil, bad("a decode request needs data and chunk_shape")
		}
		samples, err := s.codec.Decode(parsed, req.Data, req.ChunkShape)
		if err != nil {
			return nil, err
		}
		count := 1
		for _, n := range req.ChunkShape {
			count *= n
		}
		if len(samples) != count {
			return nil, fmt.Errorf("the codec returned %d samples for a %v chunk", len(samples), req.ChunkShape)
		}
		return &reply{Chunk: &Array{Shape: req.ChunkShape, Dtype: "uint8", Data: samples}}, nil
	case "build":
		builder, ok := s.codec.(Builder)
		if !ok || !s.hasRole("build") {
			break
		}
		options, err := decodeJSON(req.Options)
		object, isObject := options.(map[string]any)
		if err != nil || !isObject {
			return nil, bad("build options must be a JSON object")
		}
		codec, err := builder.Build(object)
		if err != nil {
			return nil, err
		}
		return &reply{Codec: codec}, nil
	}
	return nil, bad("unknown op %q", req.Op)
}

// checkSize: the chunk's bytes are what its shape and dtype say; anything else is the client's mistake.
func checkSize(chunk *Array) error {
	size, known := itemSizes[chunk.Dtype]
	if !known {
		return bad("unknown dtype %q", chunk.Dtype)
	}
	count := size
	for _, n := range chunk.Shape {
		if n < 0 || (n > 0 && count > (1<<40)/n) {
			return bad("bad chunk shape %v", chunk.Shape)
		}
		count *= n
	}
	if count != len(chunk.Data) {
		return bad("chunk data has %d bytes, shape %v of %s needs %d", len(chunk.Data), chunk.Shape, chunk.Dtype, count)
	}
	return nil
}

// bench does what the encode or decode request it names does, repeat times in a row, and
// replies with the seconds each took on the monotonic clock: the codec's own speed in this
// process, which the protocol benchmark compares its throughput through the protocol with.
func (s *session[H]) bench(req *request) (*reply, error) {
	if req.Repeat < 1 || req.Repeat > maxRepeat {
		return nil, bad("bench: repeat must be 1 to %d, got %d", maxRepeat, req.Repeat)
	}
	if req.Of != "encode" && req.Of != "decode" {
		return nil, bad("bench: of must be \"encode\" or \"decode\", got %q", req.Of)
	}
	one := *req
	one.Op = req.Of
	seconds := make([]float64, req.Repeat)
	for i := range seconds {
		start := time.Now() // carries a monotonic reading; Since uses it
		if _, err := s.dispatch(&one); err != nil {
			return nil, err
		}
		seconds[i] = time.Since(start).Seconds()
	}
	return &reply{Seconds: seconds}, nil
}

func (s *session[H]) start(req *request) (*reply, error) {
	if string(req.Protocol) != strconv.Itoa(Protocol) {
		return nil, bad("this harness speaks protocol %d, not %s", Protocol, req.Protocol)
	}
	s.started = true
	versions := s.info.Versions
	if versions == nil {
		versions = map[string]string{}
	}
	r := &reply{Protocol: Protocol, Name: s.info.Name, Version: s.info.Version, Roles: s.info.Roles,
		Versions: versions, Kind: s.info.Kind, Language: s.info.Language}
	for _, f := range req.Framings {
		if f == "binary" {
			r.Framing = "binary"
		}
	}
	return r, nil
}

func (s *session[H]) handle(handle string) (H, error) {
	parsed, ok := s.handles[handle]
	if !ok {
		return parsed, bad("unknown handle %q", handle)
	}
	return parsed, nil
}
