// Command jpeg-conformance-harness is the conformance harness of a Zarr jpeg codec in Go, on the
// harness kit: the kit speaks the protocol, this file calls the codec. The codec here is the
// standard library's image/jpeg (it decodes; this harness does not encode); it has no parser of
// its own, so Parse borrows the kit's. A codec that parses its configuration itself calls its
// own parser there: its verdicts are then its own.
package main

import (
	"bytes"
	"image/color"
	"image/jpeg"
	"os"
	"runtime"

	"github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit"
)

type harness struct{}

func (harness) Parse(codec any) (kit.Config, error) {
	cfg, err := kit.ParseCodec(codec)
	if err == nil && cfg.Decoded == "ycbcr" {
		// An optional feature the codec does not have is refused when parsing, as the spec asks.
		err = kit.Reject("JPEG-DCS-05", "image/jpeg returns RGB here, never the stored YCbCr")
	}
	return cfg, err
}

func (harness) Encode(kit.Config, kit.Array) ([]byte, error) {
	return nil, kit.Reject("", "this harness does not encode") // not asked: Info.Roles is decode only
}

func (harness) Decode(cfg kit.Config, stream []byte, shape []int) ([]byte, error) {
	height, width, components, err := kit.Geometry(shape) // the spec's chunk-shape table
	if err != nil {
		return nil, err
	}
	// Before any pixel is decoded: a frame that does not fit the chunk is refused, not cropped.
	header, err := jpeg.DecodeConfig(bytes.NewReader(stream))
	if err != nil {
		return nil, kit.Refuse("image/jpeg", err) // every error of the library is a refusal
	}
	gray := header.ColorModel == color.GrayModel
	if header.Height != height || header.Width != width || gray != (components == 1) || components != cfg.ChunkComponents() {
		return nil, kit.Reject("JPEG-DIM-03", "the stream's %dx%d frame (gray: %t) does not fit the chunk %v",
			header.Height, header.Width, gray, shape)
	}
	img, err := jpeg.Decode(bytes.NewReader(stream))
	if err != nil {
		return nil, kit.Refuse("image/jpeg", err)
	}
	out := make([]byte, 0, height*width*components)
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			if gray {
				out = append(out, color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)
				continue
			}
			r, g, b, _ := img.At(x, y).RGBA()
			out = append(out, byte(r>>8), byte(g>>8), byte(b>>8))
		}
	}
	return out, nil
}

func main() {
	info := kit.Info{Name: "example-image-jpeg", Version: "0.1.0", Roles: []string{"decode"},
		Versions: map[string]string{"go": runtime.Version()}}
	os.Exit(kit.Run[kit.Config](info, harness{}))
}
