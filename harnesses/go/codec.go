package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
)

// The standard library's image/jpeg as a Go Zarr codec would call it: jpeg.Encode with a
// quality, jpeg.DecodeConfig to read the frame header, jpeg.Decode. An error the library
// returns is its refusal (rejected); a panic is a failure (error).

// encode writes a (height, width, components) uint8 chunk. image/jpeg writes a 1-component
// stream for *image.Gray and 4:2:0 YCbCr for every other image, with no JFIF or Adobe
// marker: what it cannot write is refused here, before it would write something else.
func encode(cfg config, samples []byte, height, width, components int) ([]byte, error) {
	rect := image.Rect(0, 0, width, height)
	var img image.Image
	switch {
	case cfg.encoded == "grayscale":
		img = &image.Gray{Pix: samples, Stride: width, Rect: rect}
	case cfg.encoded == "rgb":
		return nil, &rejection{requirement: "JPEG-ECS-09", exception: "Unsupported",
			message: "image/jpeg cannot write rgb: it converts 3-component images to YCbCr and writes no APP14 Adobe marker"}
	case cfg.subsampling[0] != [2]int{2, 2}:
		f := cfg.subsampling
		r := &rejection{exception: "Unsupported",
			message: fmt.Sprintf("image/jpeg writes 4:2:0 only ([[2, 2], [1, 1], [1, 1]]), not %v", [][2]int(f))}
		if !requiredScheme(f[0]) {
			r.requirement = "JPEG-X-04"
		}
		return nil, r
	case cfg.decoded == "ycbcr":
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
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: cfg.quality}); err != nil {
		return nil, libraryRefusal(err)
	}
	return out.Bytes(), nil
}

// requiredScheme: the luma factors of 4:4:4, 4:2:2, 4:4:0 and 4:2:0 (JPEG-SUB-08).
func requiredScheme(luma [2]int) bool {
	return luma[0] <= 2 && luma[1] <= 2
}

// decode returns exactly height x width x components samples of the stream.
func decode(cfg config, stream []byte, height, width, components int) ([]byte, error) {
	// The header first: a frame that does not fit the chunk is refused before any pixel
	// buffer is allocated for it.
	header, err := jpeg.DecodeConfig(bytes.NewReader(stream))
	if err != nil {
		return nil, libraryRefusal(err)
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
		return nil, &rejection{requirement: "JPEG-DIM-03", exception: "StreamError",
			message: fmt.Sprintf("the stream has %d component(s) (%s), the chunk %d", channels, stored, components)}
	}
	if header.Height*header.Width != height*width {
		return nil, &rejection{requirement: "JPEG-DIM-03", exception: "StreamError",
			message: fmt.Sprintf("the stream is %dx%d (HxW), the chunk needs %dx%d", header.Height, header.Width, height, width)}
	}
	if header.Height != height || header.Width != width {
		return nil, &rejection{requirement: "JPEG-X-08", exception: "StreamError",
			message: fmt.Sprintf("the stream is %dx%d (HxW), a different factorization of the chunk's %dx%d", header.Height, header.Width, height, width)}
	}
	if cfg.decoded == "ycbcr" && stored != "YCbCr" {
		return nil, &rejection{requirement: "JPEG-ECS-12", exception: "StreamError",
			message: fmt.Sprintf("the stream stores %s: image/jpeg gives stored samples and cannot give YCbCr from it", stored)}
	}
	img, err := jpeg.Decode(bytes.NewReader(stream))
	if err != nil {
		return nil, libraryRefusal(err)
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
		if cfg.decoded == "ycbcr" {
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

// libraryRefusal turns an error of image/jpeg (jpeg.FormatError, jpeg.UnsupportedError, a
// short read) into a clean rejection naming its type.
func libraryRefusal(err error) *rejection {
	return &rejection{message: "image/jpeg refused it: " + err.Error(), exception: fmt.Sprintf("%T", err)}
}
