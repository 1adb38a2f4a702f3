package kit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// echo encodes to the samples reversed and decodes to the stream's bytes repeated: enough to
// see which bytes went where in either framing.
type echo struct{}

func (echo) Supports(cfg Config) error {
	if cfg.Encoded == "rgb" {
		return Reject("JPEG-ECS-09", "no rgb here")
	}
	return nil
}

func (echo) Encode(cfg Config, samples []byte, height, width, components int) ([]byte, error) {
	if cfg.Quality == 13 {
		panic("unlucky quality")
	}
	out := make([]byte, len(samples))
	for i, b := range samples {
		out[len(samples)-1-i] = b
	}
	return out, nil
}

func (echo) Decode(cfg Config, stream []byte, height, width, components int) ([]byte, error) {
	if len(stream) == 0 {
		return nil, Refuse("echo", errors.New("empty stream"))
	}
	out := make([]byte, height*width*components)
	for i := range out {
		out[i] = stream[i%len(stream)]
	}
	return out, nil
}

const gray = `{"name":"jpeg","configuration":{"quality":90,"encoded_color_space":"grayscale"}}`

type frame struct {
	header  map[string]any
	payload []byte
}

// exchange serves input and splits the output into replies: a JSON header and the payload bytes after it.
func exchange(t *testing.T, codec Codec[Config], input string) []frame {
	t.Helper()
	var out bytes.Buffer
	if err := Serve(Info{Name: "echo", Version: "1", Kind: "library"}, codec, strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	var frames []frame
	r := bufio.NewReader(&out)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return frames
		}
		var header map[string]any
		if err := json.Unmarshal(line, &header); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		n, _ := header["payload"].(float64)
		payload := make([]byte, int(n))
		if _, err := r.Read(payload); n > 0 && err != nil {
			t.Fatal(err)
		}
		frames = append(frames, frame{header, payload})
	}
}

func lines(requests ...string) string { return strings.Join(requests, "\n") + "\n" }

func status(f frame) string { return f.header["status"].(string) }

func TestJSONLinesCarryBase64(t *testing.T) {
	got := exchange(t, SpecParse(echo{}), lines(
		`{"seq":1,"op":"start","protocol":1}`,
		`{"seq":2,"op":"parse","codec":`+gray+`}`,
		`{"seq":3,"op":"encode","handle":"1","chunk":{"shape":[1,3],"dtype":"uint8","data":"AQID"}}`,
		`{"seq":4,"op":"decode","handle":"1","data":"CQg=","chunk_shape":[1,3,1]}`,
		`{"seq":5,"op":"stop"}`,
		`{"seq":6,"op":"stop"}`,
	))
	start := got[0].header
	if start["name"] != "echo" || start["kind"] != "library" || start["language"] != "Go" || start["framing"] != nil {
		t.Errorf("start reply %v", start)
	}
	if got[1].header["handle"] != "1" || got[2].header["data"] != "AwIB" {
		t.Errorf("parse, encode: %v %v", got[1].header, got[2].header)
	}
	if chunk := got[3].header["chunk"].(map[string]any); chunk["data"] != "CQgJ" {
		t.Errorf("decode: %v", got[3].header)
	}
	if len(got) != 5 || len(got[4].header) != 2 || status(got[4]) != "ok" {
		t.Errorf("stop is answered {seq, status: ok} and ends the session: %v", got)
	}
}

func TestBinaryFramingMovesTheBytesIntoPayloads(t *testing.T) {
	input := lines(`{"seq":1,"op":"start","protocol":1,"framings":["json","binary"]}`, `{"seq":2,"op":"parse","codec":`+gray+`}`) +
		`{"seq":3,"op":"encode","handle":"1","chunk":{"shape":[2,2],"dtype":"uint8"},"payload":4}` + "\n\x01\x02\x03\n" +
		`{"seq":4,"op":"decode","handle":"1","chunk_shape":[1,5],"payload":2}` + "\n\xff\xd8" +
		`{"seq":5,"op":"stop"}` + "\n"
	got := exchange(t, SpecParse(echo{}), input)
	if got[0].header["framing"] != "binary" {
		t.Fatalf("start: %v", got[0].header)
	}
	if string(got[2].payload) != "\n\x03\x02\x01" || got[2].header["data"] != nil {
		t.Errorf("encode: %v %q", got[2].header, got[2].payload)
	}
	if string(got[3].payload) != "\xff\xd8\xff\xd8\xff" {
		t.Errorf("decode: %v %q", got[3].header, got[3].payload)
	}
	if status(got[4]) != "ok" {
		t.Errorf("stop: %v", got[4].header)
	}
}

func TestRefusalsErrorsAndPanics(t *testing.T) {
	rgb := `{"name":"jpeg","configuration":{"quality":90,"encoded_color_space":"rgb"}}`
	unlucky := `{"name":"jpeg","configuration":{"quality":13,"encoded_color_space":"grayscale"}}`
	got := exchange(t, SpecParse(echo{}), lines(
		`{"seq":1,"op":"parse","codec":`+gray+`}`,
		`not json`,
		`{"seq":2,"op":"start","protocol":2}`,
		`{"seq":3,"op":"start","protocol":1}`,
		`{"seq":4,"op":"frobnicate"}`,
		`{"seq":5,"op":"parse","codec":`+rgb+`}`,
		`{"seq":6,"op":"parse","codec":`+unlucky+`}`,
		`{"seq":7,"op":"encode","handle":"1","chunk":{"shape":[1,1],"dtype":"uint8","data":"AA=="}}`,
		`{"seq":8,"op":"encode","handle":"1","chunk":{"shape":[1,1],"dtype":"float32","data":"AAAAAA=="}}`,
		`{"seq":9,"op":"encode","handle":"1","chunk":{"shape":[0,1],"dtype":"uint8","data":""}}`,
		`{"seq":10,"op":"decode","handle":"1","data":"","chunk_shape":[1,1]}`,
		`{"seq":11,"op":"build","options":{"encoded_color_space":"grayscale"}}`,
	))
	want := []string{"error", "error", "error", "ok", "error", "rejected", "ok", "error", "rejected", "rejected", "rejected", "error"}
	for i, w := range want {
		if status(got[i]) != w {
			t.Errorf("reply %d: want %s, got %v", i, w, got[i].header)
		}
	}
	if got[1].header["seq"] != nil {
		t.Errorf("an unreadable request is answered with seq null: %v", got[1].header)
	}
	if got[5].header["requirement"] != "JPEG-ECS-09" || got[8].header["requirement"] != "JPEG-DT-01" || got[9].header["requirement"] != "JPEG-DIM-02" {
		t.Errorf("requirements: %v %v %v", got[5].header, got[8].header, got[9].header)
	}
	if !strings.Contains(got[7].header["message"].(string), "unlucky quality") || got[7].header["trace"] == nil {
		t.Errorf("a panic is an error with its trace: %v", got[7].header)
	}
	if got[10].header["exception"] != "*errors.errorString" {
		t.Errorf("Refuse names the library error's type: %v", got[10].header)
	}
}

func TestBenchTimesTheCodec(t *testing.T) {
	got := exchange(t, SpecParse(echo{}), lines(
		`{"seq":1,"op":"start","protocol":1}`,
		`{"seq":2,"op":"parse","codec":`+gray+`}`,
		`{"seq":3,"op":"bench","handle":"1","of":"encode","repeat":3,"chunk":{"shape":[1,3],"dtype":"uint8","data":"AQID"}}`,
		`{"seq":4,"op":"bench","handle":"1","of":"decode","repeat":2,"data":"","chunk_shape":[1,3]}`,
		`{"seq":5,"op":"bench","handle":"1","of":"decode","repeat":0,"data":"CQg=","chunk_shape":[1,3]}`,
	))
	if seconds, _ := got[2].header["seconds"].([]any); len(seconds) != 3 {
		t.Errorf("bench of encode: %v", got[2].header)
	}
	if status(got[3]) != "rejected" || status(got[4]) != "error" {
		t.Errorf("a refused run ends the bench with the refusal; repeat must be at least 1: %v %v", got[3].header, got[4].header)
	}
}

// builder is a codec with the build role: it writes the options back under the name jpeg.
type builder struct{}

func (builder) Parse(codec any) (Config, error)              { return Config{}, nil }
func (builder) Encode(Config, Array) ([]byte, error)         { return nil, nil }
func (builder) Decode(Config, []byte, []int) ([]byte, error) { return nil, nil }
func (builder) Build(options map[string]any) (any, error) {
	if q, ok := options["quality"].(json.Number); ok && q.String() == "0" {
		return nil, Reject("JPEG-Q-01", "quality 0")
	}
	return map[string]any{"name": "jpeg", "configuration": options}, nil
}

func TestACodecDeclaresRolesAndBuilds(t *testing.T) {
	var out bytes.Buffer
	input := lines(`{"seq":1,"op":"start","protocol":1}`,
		`{"seq":2,"op":"build","options":{"encoded_color_space":"grayscale"}}`,
		`{"seq":3,"op":"build","options":{"quality":0,"encoded_color_space":"grayscale"}}`)
	info := Info{Name: "builder", Version: "2.0.0", Roles: []string{"decode", "build"}}
	if err := Serve[Config](info, builder{}, strings.NewReader(input), &out); err != nil {
		t.Fatal(err)
	}
	replies := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, want := range []string{
		`{"seq":1,"status":"ok","protocol":1,"name":"builder","version":"2.0.0","roles":["decode","build"],"versions":{},"kind":"codec","language":"Go"}`,
		`{"seq":2,"status":"ok","codec":{"configuration":{"encoded_color_space":"grayscale"},"name":"jpeg"}}`,
	} {
		if replies[i] != want {
			t.Errorf("reply %d:\n got %s\nwant %s", i, replies[i], want)
		}
	}
	if !strings.Contains(replies[2], `"status":"rejected"`) {
		t.Errorf("reply 2: %s", replies[2])
	}
}
