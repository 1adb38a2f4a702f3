// Command go-image-jpeg is the harness of zarr-jpeg-conformance for Go's standard image/jpeg,
// on the harness kit (./kit), which speaks the protocol, applies the spec's parse rules and
// checks the chunk's dtype and shape: this file is only the calls into image/jpeg.
//
//	go build -o go-image-jpeg . && ./go-image-jpeg
package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit"
)

func main() {
	info := kit.Info{Name: "go-image-jpeg", Version: "unknown", Kind: "library",
		Versions: map[string]string{"go": runtime.Version()}}
	// The harness's version and the toolchain that built it (image/jpeg is the toolchain's).
	if build, ok := debug.ReadBuildInfo(); ok {
		info.Version = build.Main.Version
		info.Versions["go"] = build.GoVersion
		for _, s := range build.Settings {
			if s.Key == "vcs.revision" {
				info.Versions["harness revision"] = s.Value
			}
		}
	}
	os.Exit(kit.Run(info, kit.SpecParse(imageJPEG{})))
}

type imageJPEG struct{}

// Supports: image/jpeg parses every valid configuration; what it cannot write it refuses when encoding.
func (imageJPEG) Supports(kit.Config) error { return nil }

// The standard library's image/jpeg as a Go Zarr codec would call it: jpeg.Encode with a
// quality, jpeg.DecodeConfig to read the frame header, jpeg.Decode. An error the library
// returns is its refusal (rejected); a panic is a failure (error).

// encode writes a (height, width, components) uint8 chunk. image/jpeg writes a 1-component
// stream for *image.Gray and 4:2:0 YCbCr for every other image, with no JFIF or Adobe
// marker: what it cannot write is refused here, before it would write something else.
func (imageJPEG) Encode(cfg kit.Config, samples []byte, height, width, components int) ([]byte, error) {
	rect := image.Rect(0, 0, width, height)
	var img image.Image
	switch {
	case cfg.Encoded == "grayscale":
		img = &image.Gray{Pix: samples, Stride: width, Rect: rect}
	case cfg.Encoded == "rgb":
		return nil, &kit.Rejection{Requirement: "JPEG-ECS-09", Exception: "Unsupported",
			Message: "image/jpeg cannot write rgb: it converts 3-component images to YCbCr and writes no APP14 Adobe marker"}
	case cfg.Subsampling[0] != [2]int{2, 2}:
		f := cfg.Subsampling
		r := &kit.Rejection{Exception: "Unsupported",
			Message: fmt.Sprintf("image/jpeg writes 4:2:0 only ([[2, 2], [1, 1], [1, 1]]), not %v", [][2]int(f))}
		if !kit.RequiredScheme(f[0]) {
			r.Requirement = "JPEG-X-04"
		}
		return nil, r
	case cfg.Decoded == "ycbcr":
		// A *image.YCbCr is written as it is: its samples are the stream's, unconverted.
		m := image.NewYCbCr(rect, image.YCbCrSubsampleRatio444)
		for i := 0; i < height*width; i++ {
			m.Y[i], m.Cb[i], m.Cr[i] = samples[3*i], samples[3*i+1], samples[3*i+2]
		}
		img = m
	default:
		m := image.NewRGBA(rect)
		for i := 0; i < height*width; i++ {
			copy(m.Pix[4*i:4*i+3], samples[3*i:3*i+3])
			m.Pix[4*i+3] = 0xff
		}
		img = m
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: cfg.Quality}); err != nil {
		return nil, kit.Refuse("image/jpeg", err)
	}
	return out.Bytes(), nil
}

// decode returns exactly height x width x components samples of the stream.
func (imageJPEG) Decode(cfg kit.Config, stream []byte, height, width, components int) ([]byte, error) {
	// The header first: a frame that does not fit the chunk is refused before any pixel
	// buffer is allocated for it.
	header, err := jpeg.DecodeConfig(bytes.NewReader(stream))
	if err != nil {
		return nil, kit.Refuse("image/jpeg", err)
	}
	var stored string
	var channels int
	switch header.ColorModel {
	case color.GrayModel:
		stored, channels = "grayscale", 1
	case color.YCbCrModel:
		stored, channels = "YCbCr", 3
	case color.RGBAModel:
		stored, channels = "RGB", 3
	case color.CMYKModel:
		stored, channels = "CMYK", 4
	default:
		stored, channels = fmt.Sprintf("%T", header.ColorModel), 0
	}
	if channels != components {
		return nil, &kit.Rejection{Requirement: "JPEG-DIM-03", Exception: "StreamError",
			Message: fmt.Sprintf("the stream has %d component(s) (%s), the chunk %d", channels, stored, components)}
	}
	if header.Height*header.Width != height*width {
		return nil, &kit.Rejection{Requirement: "JPEG-DIM-03", Exception: "StreamError",
			Message: fmt.Sprintf("the stream is %dx%d (HxW), the chunk needs %dx%d", header.Height, header.Width, height, width)}
	}
	if header.Height != height || header.Width != width {
		return nil, &kit.Rejection{Requirement: "JPEG-X-08", Exception: "StreamError",
			Message: fmt.Sprintf("the stream is %dx%d (HxW), a different factorization of the chunk's %dx%d", header.Height, header.Width, height, width)}
	}
	if cfg.Decoded == "ycbcr" && stored != "YCbCr" {
		return nil, &kit.Rejection{Requirement: "JPEG-ECS-12", Exception: "StreamError",
			Message: fmt.Sprintf("the stream stores %s: image/jpeg gives stored samples and cannot give YCbCr from it", stored)}
	}
	img, err := jpeg.Decode(bytes.NewReader(stream))
	if err != nil {
		return nil, kit.Refuse("image/jpeg", err)
	}
	bounds := img.Bounds()
	if bounds.Dx() != width || bounds.Dy() != height {
		return nil, fmt.Errorf("image/jpeg decoded a %dx%d image from a %dx%d header", bounds.Dy(), bounds.Dx(), height, width)
	}
	out := make([]byte, 0, height*width*components)
	switch m := img.(type) {
	case *image.Gray:
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			row := m.PixOffset(bounds.Min.X, y)
			out = append(out, m.Pix[row:row+width]...)
		}
		return out, nil
	case *image.YCbCr:
		if cfg.Decoded == "ycbcr" {
			// Stored samples, chroma repeated over the pixels it covers.
			for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
				for x := bounds.Min.X; x < bounds.Max.X; x++ {
					yi, ci := m.YOffset(x, y), m.COffset(x, y)
					out = append(out, m.Y[yi], m.Cb[ci], m.Cr[ci])
				}
			}
			return out, nil
		}
		rgba := image.NewRGBA(image.Rect(0, 0, width, height))
		draw.Draw(rgba, rgba.Bounds(), m, bounds.Min, draw.Src)
		return packRGB(rgba, out), nil
	case *image.RGBA:
		return packRGB(m, out), nil
	}
	return nil, fmt.Errorf("image/jpeg returned a %T for a %d-component stream", img, components)
}

func packRGB(m *image.RGBA, out []byte) []byte {
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			out = append(out, row[i], row[i+1], row[i+2])
		}
	}
	return out
}
