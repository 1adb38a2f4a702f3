module example.org/my-jpeg-codec

go 1.19

require github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit v1.0.0

// The harness kit, copied out of the installed suite by
// `python -m zarr_jpeg_conformance.harnesses kit go --copy jpeg-conformance-kit`.
// Once the module can be fetched from the module proxy, remove this line.
replace github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit => ./jpeg-conformance-kit
