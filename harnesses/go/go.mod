module zarr-jpeg-conformance/harnesses/go

// 1.19: Debian 12's golang-go builds it; only the standard library and the kit are used.
go 1.19

require github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit v1.0.0

// The kit of this repository, not a download.
replace github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit => ./kit
