//! Arrays on the wire (shape, dtype, samples) and the spec's chunk-shape table.

use serde_json::Value;

use crate::{Config, Failure, Refusal};

/// Bytes per sample of each dtype the protocol carries (zarr v3 core names).
pub fn itemsize(dtype: &str) -> Option<usize> {
    Some(match dtype {
        "bool" | "int8" | "uint8" => 1,
        "int16" | "uint16" | "float16" => 2,
        "int32" | "uint32" | "float32" => 4,
        "int64" | "uint64" | "float64" | "complex64" => 8,
        "complex128" => 16,
        _ => return None,
    })
}

/// A shape as the protocol sends it: an array of non-negative integers.
pub fn wire_shape(value: Option<&Value>, what: &str) -> Result<Vec<u64>, Failure> {
    value
        .and_then(Value::as_array)
        .and_then(|axes| axes.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or_else(|| Failure::bad_request(format!("{what} must be an array of non-negative integers, got {}", show(value))))
}

pub(crate) fn show(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_string(), Value::to_string)
}

/// Height, width and components of an image, as a chunk shape gives them or a frame header records them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub height: usize,
    pub width: usize,
    pub components: usize,
}

impl Geometry {
    pub fn samples(&self) -> usize {
        self.height * self.width * self.components
    }

    /// The geometry of a chunk shape by the spec's table (JPEG-SHP-*), with the dimensions a
    /// JPEG frame header can record (JPEG-DIM-02).
    pub fn of_chunk(shape: &[u64]) -> Result<Geometry, Refusal> {
        let shown = format!("{shape:?}");
        let reject = |requirement, message: String| Refusal::new(Some(requirement), message).exception("ChunkError");
        let (height, width, components) = match *shape {
            [h, w] => (h, w, 1),
            [h, w, c @ (1 | 3)] => (h, w, c),
            [_, _, c] => {
                return Err(reject(
                    "JPEG-SHP-05",
                    format!("chunk shape {shown} has {c} channels: the channel axis must be 1 or 3"),
                ))
            }
            _ if shape.len() < 2 => {
                return Err(reject("JPEG-SHP-01", format!("chunk shape {shown} is {}D: reshape to 2D first", shape.len())))
            }
            _ => {
                return Err(reject(
                    "JPEG-SHP-06",
                    format!("chunk shape {shown} is {}D: transpose/reshape down to 2D or 3D", shape.len()),
                ))
            }
        };
        for (axis, n) in [("height", height), ("width", width)] {
            if n == 0 || n > 65535 {
                return Err(reject(
                    "JPEG-DIM-02",
                    format!("chunk shape {shown} gives an image {axis} of {n}: a JPEG frame records 1 to 65535"),
                ));
            }
        }
        Ok(Geometry { height: height as usize, width: width as usize, components: components as usize })
    }

    /// The chunk of a decode request must hold what the configuration decodes to.
    pub fn check_decoded(&self, config: &Config, shape: &[u64]) -> Result<(), Refusal> {
        if self.components != config.components() {
            return Err(Refusal::new(
                Some("JPEG-DIM-03"),
                format!(
                    "chunk shape {shape:?} has {} component(s) but decoded_color_space {} has {}",
                    self.components,
                    config.decoded.name(),
                    config.components()
                ),
            )
            .exception("ChunkError"));
        }
        Ok(())
    }

    /// A stream's frame must fit the chunk before any pixel is decoded: same component count,
    /// same height and width (what every caller needs to reshape the samples).
    pub fn check_frame(&self, frame: Geometry) -> Result<(), Refusal> {
        let reject = |requirement, message: String| Err(Refusal::new(Some(requirement), message).exception("StreamError"));
        let (fh, fw, fc) = (frame.height, frame.width, frame.components);
        let (h, w, c) = (self.height, self.width, self.components);
        if fc != c {
            return reject("JPEG-DIM-03", format!("the stream has {fc} component(s), the chunk {c}"));
        }
        if fh * fw != h * w {
            return reject("JPEG-DIM-03", format!("the stream is {fh}x{fw} (HxW), the chunk needs {h}x{w}"));
        }
        if (fh, fw) != (h, w) {
            return reject(
                "JPEG-X-08",
                format!("the stream is {fh}x{fw} (HxW), a different factorization of the chunk's {h}x{w}"),
            );
        }
        Ok(())
    }
}

/// The samples of an encode request, checked against the spec and the configuration.
pub struct Image<'a> {
    pub height: u16,
    pub width: u16,
    /// 1 or 3, as the configuration says.
    pub components: usize,
    /// `height * width * components` samples, C order (rows, then columns, then components).
    pub samples: &'a [u8],
}

impl<'a> Image<'a> {
    pub(crate) fn of_chunk(config: &Config, shape: &[u64], dtype: &str, samples: &'a [u8]) -> Result<Image<'a>, Refusal> {
        if dtype != "uint8" {
            return Err(Refusal::new(Some("JPEG-DT-01"), format!("chunk dtype is {dtype}: only uint8 is supported"))
                .exception("ChunkError"));
        }
        let geometry = Geometry::of_chunk(shape)?;
        if geometry.components != config.components() {
            return Err(Refusal::new(
                Some("JPEG-CFG-02"),
                format!(
                    "chunk shape {shape:?} has {} component(s) but encoded_color_space {} needs {}",
                    geometry.components,
                    config.encoded.name(),
                    config.components()
                ),
            )
            .exception("ChunkError"));
        }
        Ok(Image { height: geometry.height as u16, width: geometry.width as u16, components: geometry.components, samples })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_shapes_follow_the_table() {
        let req = |shape: &[u64]| Geometry::of_chunk(shape).err().and_then(|r| r.requirement);
        assert_eq!(Geometry::of_chunk(&[4, 5]).unwrap(), Geometry { height: 4, width: 5, components: 1 });
        assert_eq!(Geometry::of_chunk(&[4, 5, 1]).unwrap().components, 1);
        assert_eq!(Geometry::of_chunk(&[4, 5, 3]).unwrap().components, 3);
        assert_eq!(req(&[]), Some("JPEG-SHP-01"));
        assert_eq!(req(&[16]), Some("JPEG-SHP-01"));
        assert_eq!(req(&[4, 5, 2]), Some("JPEG-SHP-05"));
        assert_eq!(req(&[4, 5, 4]), Some("JPEG-SHP-05"));
        assert_eq!(req(&[1, 4, 5, 3]), Some("JPEG-SHP-06"));
        assert_eq!(req(&[0, 5]), Some("JPEG-DIM-02"));
        assert_eq!(req(&[65536, 5]), Some("JPEG-DIM-02"));
        assert!(Geometry::of_chunk(&[65535, 1]).is_ok());
    }

    #[test]
    fn frames_must_fit_the_chunk() {
        let chunk = Geometry { height: 4, width: 6, components: 3 };
        let req = |h, w, c| chunk.check_frame(Geometry { height: h, width: w, components: c }).err().and_then(|r| r.requirement);
        assert_eq!(req(4, 6, 3), None);
        assert_eq!(req(4, 6, 1), Some("JPEG-DIM-03"));
        assert_eq!(req(4, 7, 3), Some("JPEG-DIM-03"));
        assert_eq!(req(6, 4, 3), Some("JPEG-X-08"));
    }
}
