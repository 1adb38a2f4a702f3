module github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit

// 1.19: Debian 12's golang-go builds it; only the standard library is used.
go 1.19
