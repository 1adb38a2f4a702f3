package kit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Config is a codec configuration parsed by the spec's rules, with every default applied.
type Config struct {
	Quality     int
	Encoded     string   // what the stream stores: grayscale, ycbcr or rgb
	Decoded     string   // what the chunk holds
	Subsampling [][2]int // {h, v} per component
}

// ChunkComponents is the chunk's component count, fixed by decoded_color_space.
func (c Config) ChunkComponents() int {
	if c.Decoded == "grayscale" {
		return 1
	}
	return 3
}

var colorSpaces = map[string]bool{"grayscale": true, "ycbcr": true, "rgb": true}
var configMembers = map[string]bool{"quality": true, "encoded_color_space": true, "decoded_color_space": true, "subsampling": true}

// combinations are the decoded/encoded pairs of the spec's conversion table.
var combinations = map[string]bool{"grayscale/grayscale": true, "rgb/ycbcr": true, "rgb/rgb": true, "ycbcr/ycbcr": true}

// show renders a JSON value for messages.
func show(v any, present bool) string {
	if !present {
		return "nothing"
	}
	text, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(text) > 120 {
		return string(text[:117]) + "..."
	}
	return string(text)
}

// integer is the integer a JSON number stands for: 90.0 is 90 (JPEG-X-02 allows it).
func integer(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 32); err == nil {
		return int(i), true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

func configError(requirement, format string, args ...any) *Rejection {
	return &Rejection{Requirement: requirement, Message: fmt.Sprintf(format, args...), Exception: "ConfigError"}
}

// ParseCodec applies the spec's parse rules to a codec object decoded with json.Number numbers.
func ParseCodec(codec any) (Config, error) {
	object, ok := codec.(map[string]any)
	if !ok {
		return Config{}, configError("JPEG-CFG-01", "the codec object must be a JSON object, got %s", show(codec, true))
	}
	if name, has := object["name"]; name != "jpeg" {
		return Config{}, configError("JPEG-NAME-01", "the codec name must be \"jpeg\", got %s", show(name, has))
	}
	// must_understand: Zarr v3 core allows it on every extension object, a codec too (JPEG-X-19).
	for key := range object {
		if key != "name" && key != "configuration" && key != "must_understand" {
			return Config{}, configError("JPEG-X-01", "unknown member of the codec object: %s", key)
		}
	}
	if value, has := object["must_understand"]; has {
		if _, ok := value.(bool); !ok {
			return Config{}, configError("JPEG-X-19", "\"must_understand\" must be true or false, got %s", show(value, true))
		}
	}
	raw, has := object["configuration"]
	cfg, ok := raw.(map[string]any)
	if !ok {
		return Config{}, configError("JPEG-CFG-01", "\"configuration\" must be a JSON object, got %s", show(raw, has))
	}
	for key := range cfg {
		if !configMembers[key] {
			return Config{}, configError("JPEG-X-01", "unknown configuration member: %s", key)
		}
	}

	q, has := cfg["quality"]
	if !has {
		return Config{}, configError("JPEG-Q-05", "quality is required and has no default")
	}
	quality, ok := integer(q)
	if !ok || quality < 1 || quality > 100 {
		return Config{}, configError("JPEG-Q-01", "quality must be an integer from 1 to 100, got %s", show(q, true))
	}
	if _, has := cfg["encoded_color_space"]; !has {
		return Config{}, configError("JPEG-ECS-07", "encoded_color_space is required")
	}
	encoded, err := colorSpace(cfg, "encoded_color_space", "JPEG-ECS-01")
	if err != nil {
		return Config{}, err
	}
	decoded := "rgb"
	if encoded == "grayscale" {
		decoded = "grayscale"
	}
	if _, has := cfg["decoded_color_space"]; has {
		if decoded, err = colorSpace(cfg, "decoded_color_space", "JPEG-DCS-01"); err != nil {
			return Config{}, err
		}
	}
	if !combinations[decoded+"/"+encoded] {
		return Config{}, configError("JPEG-DCS-04", "decoded_color_space %s with encoded_color_space %s is not allowed", decoded, encoded)
	}

	components := 3
	if encoded == "grayscale" {
		components = 1
	}
	standard := make([][2]int, components)
	for i := range standard {
		standard[i] = [2]int{1, 1}
	}
	factors := standard
	if value, has := cfg["subsampling"]; !has {
		if encoded == "ycbcr" {
			return Config{}, configError("JPEG-SUB-04", "subsampling is required with encoded_color_space ycbcr")
		}
	} else {
		if factors, err = parseFactors(value, components); err != nil {
			return Config{}, err
		}
		for i := 1; i < components; i++ {
			if encoded == "ycbcr" && factors[i] != [2]int{1, 1} {
				return Config{}, configError("JPEG-SUB-03", "the chroma factors must be [1, 1], got %s", show(value, true))
			}
		}
		if encoded != "ycbcr" {
			for i := range factors {
				if factors[i] != standard[i] {
					return Config{}, configError("JPEG-SUB-07", "subsampling with %s must be its default, got %s", encoded, show(value, true))
				}
			}
		}
	}
	return Config{Quality: quality, Encoded: encoded, Decoded: decoded, Subsampling: factors}, nil
}

func colorSpace(cfg map[string]any, key, requirement string) (string, error) {
	value := cfg[key]
	if s, ok := value.(string); ok && colorSpaces[s] {
		return s, nil
	}
	return "", configError(requirement, "%s must be one of grayscale, ycbcr, rgb, got %s", key, show(value, true))
}

func parseFactors(value any, components int) ([][2]int, error) {
	entries, ok := value.([]any)
	if !ok {
		return nil, configError("JPEG-SUB-01", "subsampling must be an array of [h, v] pairs, got %s", show(value, true))
	}
	if len(entries) != components {
		return nil, configError("JPEG-CFG-01", "subsampling has %d entries for %d component(s)", len(entries), components)
	}
	factors := make([][2]int, components)
	for i, entry := range entries {
		pair, ok := entry.([]any)
		if ok && len(pair) == 2 {
			h, hok := integer(pair[0])
			v, vok := integer(pair[1])
			if hok && vok && h >= 1 && h <= 4 && v >= 1 && v <= 4 {
				factors[i] = [2]int{h, v}
				continue
			}
		}
		return nil, configError("JPEG-SUB-01", "each subsampling entry must be [h, v] with integers from 1 to 4, got %s", show(entry, true))
	}
	return factors, nil
}
