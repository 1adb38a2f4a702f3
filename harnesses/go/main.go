// Command go-image-jpeg is the harness of zarr-jpeg-conformance for Go's standard image/jpeg:
// the harness protocol, version 1 (docs/protocol.md), on stdin and stdout, in JSON lines or,
// when the client offers it, binary framing.
//
//	go build -o go-image-jpeg . && ./go-image-jpeg
//
// It parses the codec object by the spec's rules (config.go) and checks the chunk's dtype and
// shape, as a Go codec must; pixels and streams are image/jpeg's (codec.go).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"
)

const protocol = 1
const traceCap = 4096

var itemSizes = map[string]int{
	"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
	"float16": 2, "float32": 4, "float64": 8, "complex64": 8, "complex128": 16,
}

// rejection is a clean refusal: the protocol's rejected reply.
type rejection struct {
	requirement, message, exception string
}

func (r *rejection) Error() string { return r.message }

// badRequest is a request the harness cannot act on: an error reply without a trace.
type badRequest struct{ message string }

func (b *badRequest) Error() string { return b.message }

func bad(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

type array struct {
	Shape []int  `json:"shape"`
	Dtype string `json:"dtype"`
	Data  []byte `json:"data,omitempty"` // base64 in JSON lines; the payload in binary framing
}

type request struct {
	Op         string          `json:"op"`
	Protocol   json.RawMessage `json:"protocol"`
	Framings   []string        `json:"framings"`
	Codec      json.RawMessage `json:"codec"`
	Handle     string          `json:"handle"`
	Chunk      *array          `json:"chunk"`
	Data       []byte          `json:"data"`
	ChunkShape []int           `json:"chunk_shape"`
	Of         string          `json:"of"`     // bench: the op to time
	Repeat     int             `json:"repeat"` // bench: how many times
}

type reply struct {
	Seq         *int              `json:"seq"`
	Status      string            `json:"status"`
	Protocol    int               `json:"protocol,omitempty"`
	Name        string            `json:"name,omitempty"`
	Version     string            `json:"version,omitempty"`
	Roles       []string          `json:"roles,omitempty"`
	Versions    map[string]string `json:"versions,omitempty"`
	Kind        string            `json:"kind,omitempty"`
	Language    string            `json:"language,omitempty"`
	Framing     string            `json:"framing,omitempty"`
	Handle      string            `json:"handle,omitempty"`
	Data        []byte            `json:"data,omitempty"`
	Chunk       *array            `json:"chunk,omitempty"`
	Message     string            `json:"message,omitempty"`
	Exception   string            `json:"exception,omitempty"`
	Requirement string            `json:"requirement,omitempty"`
	Trace       string            `json:"trace,omitempty"`
	Seconds     []float64         `json:"seconds,omitempty"`
	Payload     *int              `json:"payload,omitempty"`
}

type harness struct {
	in      *bufio.Reader
	out     *bufio.Writer
	binary  bool // binary framing, from the request after the start reply on
	started bool
	stopped bool
	handles map[string]config
}

func main() {
	h := &harness{in: bufio.NewReaderSize(os.Stdin, 1<<16), out: bufio.NewWriterSize(os.Stdout, 1<<16), handles: map[string]config{}}
	// stdout carries protocol messages only.
	os.Stdout = os.Stderr
	for !h.stopped {
		line, err := h.in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) == 0 {
			if err != nil {
				return // end of input: the session is gone
			}
			continue
		}
		r, binaryNext := h.serve(line)
		if err := h.write(r); err != nil {
			fmt.Fprintln(os.Stderr, "cannot write a reply:", err)
			os.Exit(1)
		}
		h.binary = binaryNext
	}
}

// serve answers one request line (with its payload, in binary framing).
func (h *harness) serve(line []byte) (r *reply, binaryNext bool) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(line, &head); err != nil {
		return failure(nil, bad("the request is not a JSON object: %v", err), ""), h.binary
	}
	var req request
	var payload []byte
	if raw, has := head["payload"]; has && h.binary {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 0 {
			return failure(nil, bad("payload must be a non-negative integer, got %s", raw), ""), h.binary
		}
		payload = make([]byte, n)
		if _, err := io.ReadFull(h.in, payload); err != nil {
			return failure(nil, bad("input ended inside a %d-byte payload", n), ""), h.binary
		}
	}
	seq, err := strconv.Atoi(string(head["seq"]))
	if err != nil || seq < 0 {
		return failure(nil, bad("the request has no integer seq"), ""), h.binary
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return failure(&seq, bad("the request does not fit the protocol: %v", err), ""), h.binary
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
	r, err = h.dispatch(&req)
	if err != nil {
		return failure(&seq, err, ""), h.binary
	}
	r.Seq, r.Status = &seq, "ok"
	return r, h.binary || r.Framing == "binary"
}

func failure(seq *int, err error, trace string) *reply {
	var rej *rejection
	if errors.As(err, &rej) {
		return &reply{Seq: seq, Status: "rejected", Message: rej.message, Exception: rej.exception, Requirement: rej.requirement}
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
func (h *harness) write(r *reply) error {
	var payload []byte
	if h.binary {
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
	enc := json.NewEncoder(h.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // one line, ended by '\n'
		return err
	}
	if _, err := h.out.Write(payload); err != nil {
		return err
	}
	return h.out.Flush()
}

func (h *harness) dispatch(req *request) (*reply, error) {
	switch req.Op {
	case "start":
		return h.start(req)
	case "stop":
		h.stopped = true
		return &reply{}, nil
	}
	if !h.started {
		return nil, bad("%q before start", req.Op)
	}
	switch req.Op {
	case "parse":
		if req.Codec == nil {
			return nil, bad("a parse request needs a codec")
		}
		dec := json.NewDecoder(bytes.NewReader(req.Codec))
		dec.UseNumber() // 90.0 and 1e2 stay numbers with their text, not float64 guesses
		var codec any
		if err := dec.Decode(&codec); err != nil {
			return nil, bad("the codec is not JSON: %v", err)
		}
		cfg, err := parseCodec(codec)
		if err != nil {
			return nil, err
		}
		handle := strconv.Itoa(len(h.handles) + 1)
		h.handles[handle] = cfg
		return &reply{Handle: handle}, nil
	case "bench":
		return h.bench(req)
	case "encode":
		cfg, err := h.config(req.Handle)
		if err != nil {
			return nil, err
		}
		if req.Chunk == nil {
			return nil, bad("an encode request needs a chunk")
		}
		data, err := encodeChunk(cfg, req.Chunk)
		if err != nil {
			return nil, err
		}
		return &reply{Data: data}, nil
	case "decode":
		cfg, err := h.config(req.Handle)
		if err != nil {
			return nil, err
		}
		if req.Data == nil || req.ChunkShape == nil {
			return nil, bad("a decode request needs data and chunk_shape")
		}
		samples, err := decodeChunk(cfg, req.Data, req.ChunkShape)
		if err != nil {
			return nil, err
		}
		return &reply{Chunk: &array{Shape: req.ChunkShape, Dtype: "uint8", Data: samples}}, nil
	}
	return nil, bad("unknown op %q", req.Op)
}

// maxRepeat bounds a bench request: a client's slip must not hold the harness for hours.
const maxRepeat = 100000

// bench does what the encode or decode request it names does, repeat times in a row, and
// replies with the seconds each took on the monotonic clock: the library's own speed in
// this process, which the protocol benchmark compares its throughput through the protocol with.
func (h *harness) bench(req *request) (*reply, error) {
	if req.Repeat < 1 || req.Repeat > maxRepeat {
		return nil, bad("bench: repeat must be 1 to %d, got %d", maxRepeat, req.Repeat)
	}
	var call func() error
	switch req.Of {
	case "encode", "decode":
		one := *req
		one.Op = req.Of
		call = func() error { _, err := h.dispatch(&one); return err }
	default:
		return nil, bad("bench: of must be \"encode\" or \"decode\", got %q", req.Of)
	}
	seconds := make([]float64, req.Repeat)
	for i := range seconds {
		start := time.Now() // carries a monotonic reading; Since uses it
		if err := call(); err != nil {
			return nil, err
		}
		seconds[i] = time.Since(start).Seconds()
	}
	return &reply{Seconds: seconds}, nil
}

func (h *harness) start(req *request) (*reply, error) {
	if string(req.Protocol) != strconv.Itoa(protocol) {
		return nil, bad("this harness speaks protocol %d, not %s", protocol, req.Protocol)
	}
	h.started = true
	r := &reply{Protocol: protocol, Name: "go-image-jpeg", Version: "unknown", Roles: []string{"encode", "decode"},
		Versions: map[string]string{"go": runtime.Version()}, Kind: "library", Language: "Go"}
	// The harness's version and the toolchain that built it (image/jpeg is the toolchain's).
	if info, ok := debug.ReadBuildInfo(); ok {
		r.Version = info.Main.Version
		r.Versions["go"] = info.GoVersion
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				r.Versions["harness revision"] = s.Value
			}
		}
	}
	for _, f := range req.Framings {
		if f == "binary" {
			r.Framing = "binary"
		}
	}
	return r, nil
}

func (h *harness) config(handle string) (config, error) {
	cfg, ok := h.handles[handle]
	if !ok {
		return config{}, bad("unknown handle %q", handle)
	}
	return cfg, nil
}

// geometry is (height, width, components) of a chunk shape, by the spec's "Supported chunk
// shapes" table and its 65535 limit on each spatial axis.
func geometry(shape []int) (int, int, int, error) {
	if len(shape) < 2 {
		return 0, 0, 0, &rejection{"JPEG-SHP-01", fmt.Sprintf("chunk shape %v is %dD: reshape to 2D first", shape, len(shape)), "ChunkError"}
	}
	if len(shape) > 3 {
		return 0, 0, 0, &rejection{"JPEG-SHP-06", fmt.Sprintf("chunk shape %v is %dD: at most 3D", shape, len(shape)), "ChunkError"}
	}
	components := 1
	if len(shape) == 3 {
		components = shape[2]
	}
	if components != 1 && components != 3 {
		return 0, 0, 0, &rejection{"JPEG-SHP-05", fmt.Sprintf("chunk shape %v has %d channels: 1 or 3 fit a JPEG image", shape, components), "ChunkError"}
	}
	for axis, name := range []string{"height", "width"} {
		if shape[axis] < 1 || shape[axis] > 65535 {
			return 0, 0, 0, &rejection{"JPEG-DIM-02", fmt.Sprintf("chunk shape %v: a JPEG image's %s is 1 to 65535, got %d", shape, name, shape[axis]), "ChunkError"}
		}
	}
	return shape[0], shape[1], components, nil
}

func encodeChunk(cfg config, chunk *array) ([]byte, error) {
	size, known := itemSizes[chunk.Dtype]
	if !known {
		return nil, bad("unknown dtype %q", chunk.Dtype)
	}
	count := size
	for _, n := range chunk.Shape {
		if n < 0 || (n > 0 && count > (1<<40)/n) {
			return nil, bad("bad chunk shape %v", chunk.Shape)
		}
		count *= n
	}
	if count != len(chunk.Data) {
		return nil, bad("chunk data has %d bytes, shape %v of %s needs %d", len(chunk.Data), chunk.Shape, chunk.Dtype, count)
	}
	if chunk.Dtype != "uint8" {
		return nil, &rejection{"JPEG-DT-01", "chunk dtype is " + chunk.Dtype + ": only uint8 is supported", "ChunkError"}
	}
	height, width, components, err := geometry(chunk.Shape)
	if err != nil {
		return nil, err
	}
	if components != cfg.chunkComponents() {
		return nil, &rejection{"JPEG-CFG-02", fmt.Sprintf("chunk shape %v has %d component(s), encoded_color_space %s needs %d",
			chunk.Shape, components, cfg.encoded, cfg.chunkComponents()), "ChunkError"}
	}
	return encode(cfg, chunk.Data, height, width, components)
}

func decodeChunk(cfg config, stream []byte, shape []int) ([]byte, error) {
	height, width, components, err := geometry(shape)
	if err != nil {
		return nil, err
	}
	if components != cfg.chunkComponents() {
		return nil, &rejection{"JPEG-DIM-03", fmt.Sprintf("chunk shape %v has %d component(s), decoded_color_space %s has %d",
			shape, components, cfg.decoded, cfg.chunkComponents()), "ChunkError"}
	}
	samples, err := decode(cfg, stream, height, width, components)
	if err == nil && len(samples) != height*width*components {
		err = fmt.Errorf("image/jpeg returned %d samples for a %dx%dx%d chunk", len(samples), height, width, components)
	}
	return samples, err
}
