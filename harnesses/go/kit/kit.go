// Package kit is the harness kit of zarr-jpeg-conformance for Go: it speaks the harness
// protocol, version 1 (JSON lines, the binary framing a client may offer, bench timed for
// you, panics turned into error replies) on stdin and stdout, so that a harness is only the
// calls into the codec under test.
//
// A Zarr codec that parses its own configuration implements [Codec] (Parse, Encode, Decode;
// optionally [Builder]) and calls [Run]. A JPEG library with no parser of its own implements
// [Library] and calls Run with [SpecParse], which applies the spec's parse rules and the
// chunk-shape table first. The module's major version is the protocol's.
package kit

import (
	"errors"
	"fmt"
)

// Protocol is the version of the harness protocol this kit speaks.
const Protocol = 1

// Info is what the start reply says of the implementation.
type Info struct {
	Name     string            // the --impl name: letters, digits and ._+-
	Version  string            // the implementation's version
	Kind     string            // "codec" (the default) or "library"
	Language string            // "Go" by default
	Roles    []string          // "encode", "decode", "build"; nil: encode and decode
	Versions map[string]string // the libraries and runtime it uses
}

// Array is a chunk as a request carries it: shape, dtype (zarr v3 names) and samples in C
// order, little-endian.
type Array struct {
	Shape []int  `json:"shape"`
	Dtype string `json:"dtype"`
	Data  []byte `json:"data,omitempty"` // base64 in JSON lines; the payload in binary framing
}

// Codec is a codec under test with its parsed-configuration type H.
type Codec[H any] interface {
	// Parse builds the codec from a codec object, any JSON value (numbers as json.Number).
	Parse(codec any) (H, error)
	// Encode writes one chunk, of any shape and dtype a request names, to a JPEG stream.
	Encode(handle H, chunk Array) ([]byte, error)
	// Decode reads one stream to the uint8 samples of shape, C order.
	Decode(handle H, stream []byte, shape []int) ([]byte, error)
}

// Builder is a Codec that also writes codec objects (role "build"): the object a user's
// constructor options make, as it goes into zarr.json.
type Builder interface {
	Build(options map[string]any) (any, error)
}

// Rejection is a clean refusal, the protocol's rejected reply: an invalid input, or a
// feature the implementation does not have. Any other error a callback returns is an error
// reply. Requirement (a requirement ID such as JPEG-Q-01) is shown, never judged.
type Rejection struct {
	Requirement, Message, Exception string
}

func (r *Rejection) Error() string { return r.Message }

// Reject is a Rejection resting on requirement ("" if none) with a formatted message.
func Reject(requirement, format string, args ...any) *Rejection {
	return &Rejection{Requirement: requirement, Message: fmt.Sprintf(format, args...)}
}

// Refuse turns a library's error into a Rejection naming its type: what a harness does with a
// library whose every failure is one error type.
func Refuse(library string, err error) *Rejection {
	var r *Rejection
	if errors.As(err, &r) {
		return r
	}
	return &Rejection{Message: library + " refused it: " + err.Error(), Exception: fmt.Sprintf("%T", err)}
}
