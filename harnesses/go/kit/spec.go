package kit

import "fmt"

// Library is a JPEG library behind the spec's parse rules and chunk-shape table
// ([SpecParse]): what is left to it is its own work and its own refusals.
type Library interface {
	// Supports refuses, when parsing, a valid configuration the library cannot honor (an
	// optional feature): the spec wants such configurations rejected at parse time.
	Supports(cfg Config) error
	// Encode writes a (height, width, components) uint8 chunk whose components match cfg.
	Encode(cfg Config, samples []byte, height, width, components int) ([]byte, error)
	// Decode returns exactly height x width x components samples of the stream.
	Decode(cfg Config, stream []byte, height, width, components int) ([]byte, error)
}

// SpecParse is a Library as a Codec: the spec's parse rules, its chunk-shape table and dtype
// rule, then the library.
func SpecParse(library Library) Codec[Config] { return specParse{library} }

type specParse struct{ library Library }

func (s specParse) Parse(codec any) (Config, error) {
	cfg, err := ParseCodec(codec)
	if err != nil {
		return cfg, err
	}
	return cfg, s.library.Supports(cfg)
}

func (s specParse) Encode(cfg Config, chunk Array) ([]byte, error) {
	if chunk.Dtype != "uint8" {
		return nil, &Rejection{"JPEG-DT-01", "chunk dtype is " + chunk.Dtype + ": only uint8 is supported", "ChunkError"}
	}
	height, width, components, err := Geometry(chunk.Shape)
	if err != nil {
		return nil, err
	}
	if components != cfg.ChunkComponents() {
		return nil, &Rejection{"JPEG-CFG-02", fmt.Sprintf("chunk shape %v has %d component(s), encoded_color_space %s needs %d",
			chunk.Shape, components, cfg.Encoded, cfg.ChunkComponents()), "ChunkError"}
	}
	return s.library.Encode(cfg, chunk.Data, height, width, components)
}

func (s specParse) Decode(cfg Config, stream []byte, shape []int) ([]byte, error) {
	height, width, components, err := Geometry(shape)
	if err != nil {
		return nil, err
	}
	if components != cfg.ChunkComponents() {
		return nil, &Rejection{"JPEG-DIM-03", fmt.Sprintf("chunk shape %v has %d component(s), decoded_color_space %s has %d",
			shape, components, cfg.Decoded, cfg.ChunkComponents()), "ChunkError"}
	}
	return s.library.Decode(cfg, stream, height, width, components)
}

// Geometry is (height, width, components) of a chunk shape, by the spec's "Supported chunk
// shapes" table and its 65535 limit on each spatial axis.
func Geometry(shape []int) (int, int, int, error) {
	if len(shape) < 2 {
		return 0, 0, 0, &Rejection{"JPEG-SHP-01", fmt.Sprintf("chunk shape %v is %dD: reshape to 2D first", shape, len(shape)), "ChunkError"}
	}
	if len(shape) > 3 {
		return 0, 0, 0, &Rejection{"JPEG-SHP-06", fmt.Sprintf("chunk shape %v is %dD: at most 3D", shape, len(shape)), "ChunkError"}
	}
	components := 1
	if len(shape) == 3 {
		components = shape[2]
	}
	if components != 1 && components != 3 {
		return 0, 0, 0, &Rejection{"JPEG-SHP-05", fmt.Sprintf("chunk shape %v has %d channels: 1 or 3 fit a JPEG image", shape, components), "ChunkError"}
	}
	for axis, name := range []string{"height", "width"} {
		if shape[axis] < 1 || shape[axis] > 65535 {
			return 0, 0, 0, &Rejection{"JPEG-DIM-02", fmt.Sprintf("chunk shape %v: a JPEG image's %s is 1 to 65535, got %d", shape, name, shape[axis]), "ChunkError"}
		}
	}
	return shape[0], shape[1], components, nil
}

// RequiredScheme: the luma factors of 4:4:4, 4:2:2, 4:4:0 and 4:2:0 (JPEG-SUB-08), which every
// implementation must support; others are optional.
func RequiredScheme(luma [2]int) bool {
	return luma[0] <= 2 && luma[1] <= 2
}
