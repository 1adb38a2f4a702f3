//! The spec's parse rules for the codec object `{"name": "jpeg", "configuration": {...}}`.
//!
//! The same rules as the project's Python parser and the JSON Schema, written again in Rust
//! because a harness in another language parses the codec object itself, as a Rust codec
//! author would. Every rejection names the requirement it rests on.

use serde_json::{Map, Value};

use crate::Refusal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorSpace {
    Grayscale,
    Ycbcr,
    Rgb,
}

impl ColorSpace {
    pub fn name(self) -> &'static str {
        match self {
            ColorSpace::Grayscale => "grayscale",
            ColorSpace::Ycbcr => "ycbcr",
            ColorSpace::Rgb => "rgb",
        }
    }

    fn from_json(value: &Value) -> Option<ColorSpace> {
        match value.as_str()? {
            "grayscale" => Some(ColorSpace::Grayscale),
            "ycbcr" => Some(ColorSpace::Ycbcr),
            "rgb" => Some(ColorSpace::Rgb),
            _ => None,
        }
    }
}

/// A configuration with every default applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub quality: u8,
    pub encoded: ColorSpace,
    pub decoded: ColorSpace,
    /// `[horizontal, vertical]` per component of the encoded color space.
    pub subsampling: Vec<(u8, u8)>,
}

impl Config {
    /// Components of the encoded (and decoded) samples: 1 for grayscale, 3 otherwise (JPEG-ECS-02).
    pub fn components(&self) -> usize {
        if self.encoded == ColorSpace::Grayscale {
            1
        } else {
            3
        }
    }

    /// The first component's sampling factors; the others are `[1, 1]` (JPEG-SUB-03).
    pub fn luma_factors(&self) -> (u8, u8) {
        self.subsampling[0]
    }

    /// True for grayscale, rgb and the four J:a:b schemes every implementation must support (JPEG-SUB-08).
    pub fn is_required_scheme(&self) -> bool {
        self.encoded != ColorSpace::Ycbcr || matches!(self.luma_factors(), (1, 1) | (2, 1) | (1, 2) | (2, 2))
    }
}

// must_understand: Zarr v3 core allows it on every extension object, a codec too (JPEG-X-19).
const CODEC_MEMBERS: [&str; 3] = ["name", "configuration", "must_understand"];
const CONFIG_MEMBERS: [&str; 4] = ["quality", "encoded_color_space", "decoded_color_space", "subsampling"];

fn reject(requirement: &'static str, message: String) -> Refusal {
    Refusal::new(Some(requirement), message).exception("ConfigError")
}

/// An integer, also when written 90.0 or 1e2 (JPEG-X-02 allows accepting those); never a bool or string.
fn integer(value: &Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(n) = number.as_i64() {
        return Some(n);
    }
    let f = number.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 1e15).then_some(f as i64)
}

fn unknown_members(object: &Map<String, Value>, known: &[&str]) -> Option<String> {
    let extra: Vec<&str> = object.keys().map(String::as_str).filter(|k| !known.contains(k)).collect();
    (!extra.is_empty()).then(|| extra.join(", "))
}

fn color_space(cfg: &Map<String, Value>, key: &str, requirement: &'static str) -> Result<ColorSpace, Refusal> {
    let value = &cfg[key];
    ColorSpace::from_json(value)
        .ok_or_else(|| reject(requirement, format!("'{key}' must be one of grayscale, ycbcr, rgb, got {value}")))
}

fn factors(value: &Value, components: usize) -> Result<Vec<(u8, u8)>, Refusal> {
    let entries = value
        .as_array()
        .ok_or_else(|| reject("JPEG-SUB-01", format!("'subsampling' must be an array of [h, v] pairs, got {value}")))?;
    if entries.len() != components {
        return Err(reject(
            "JPEG-CFG-01",
            format!("'subsampling' has {} entries but the encoded color space has {components} component(s)", entries.len()),
        ));
    }
    entries
        .iter()
        .map(|entry| {
            let pair = entry
                .as_array()
                .filter(|pair| pair.len() == 2)
                .ok_or_else(|| reject("JPEG-SUB-01", format!("each 'subsampling' entry must be a pair [h, v], got {entry}")))?;
            match (integer(&pair[0]), integer(&pair[1])) {
                (Some(h @ 1..=4), Some(v @ 1..=4)) => Ok((h as u8, v as u8)),
                _ => Err(reject("JPEG-SUB-01", format!("sampling factors must be integers in the range 1-4, got {entry}"))),
            }
        })
        .collect()
}

/// Parse a whole codec object as found in `zarr.json`.
pub fn parse_codec(codec: &Value) -> Result<Config, Refusal> {
    let codec =
        codec.as_object().ok_or_else(|| reject("JPEG-CFG-01", format!("the codec object must be a JSON object, got {codec}")))?;
    match codec.get("name") {
        Some(Value::String(name)) if name == "jpeg" => {}
        other => {
            let got = other.map_or("nothing".to_string(), Value::to_string);
            return Err(reject("JPEG-NAME-01", format!("the codec name must be \"jpeg\", got {got}")));
        }
    }
    if let Some(extra) = unknown_members(codec, &CODEC_MEMBERS) {
        return Err(reject("JPEG-X-01", format!("the codec object has unknown member(s): {extra}")));
    }
    if let Some(value) = codec.get("must_understand") {
        if !value.is_boolean() {
            return Err(reject("JPEG-X-19", format!("\"must_understand\" must be true or false, got {value}")));
        }
    }
    let cfg = match codec.get("configuration") {
        Some(Value::Object(cfg)) => cfg,
        other => {
            let got = other.map_or("nothing".to_string(), Value::to_string);
            return Err(reject("JPEG-CFG-01", format!("the codec object needs a 'configuration' object, got {got}")));
        }
    };
    if let Some(extra) = unknown_members(cfg, &CONFIG_MEMBERS) {
        return Err(reject("JPEG-X-01", format!("the configuration has unknown member(s): {extra}")));
    }

    let quality = cfg
        .get("quality")
        .ok_or_else(|| reject("JPEG-Q-05", "the configuration has no 'quality' (it is required and has no default)".into()))?;
    let quality = match integer(quality) {
        Some(q @ 1..=100) => q as u8,
        Some(q) => return Err(reject("JPEG-Q-01", format!("'quality' must be in the range 1-100, got {q}"))),
        None => return Err(reject("JPEG-Q-01", format!("'quality' must be an integer, got {quality}"))),
    };
    if !cfg.contains_key("encoded_color_space") {
        return Err(reject("JPEG-ECS-07", "the configuration has no 'encoded_color_space' (it is required)".into()));
    }
    let encoded = color_space(cfg, "encoded_color_space", "JPEG-ECS-01")?;
    let decoded = if cfg.contains_key("decoded_color_space") {
        color_space(cfg, "decoded_color_space", "JPEG-DCS-01")?
    } else if encoded == ColorSpace::Grayscale {
        ColorSpace::Grayscale
    } else {
        ColorSpace::Rgb
    };
    use ColorSpace::*;
    if !matches!((decoded, encoded), (Grayscale, Grayscale) | (Rgb, Ycbcr) | (Rgb, Rgb) | (Ycbcr, Ycbcr)) {
        return Err(reject(
            "JPEG-DCS-04",
            format!("decoded_color_space {} with encoded_color_space {} is not allowed", decoded.name(), encoded.name()),
        ));
    }

    let components = if encoded == Grayscale { 1 } else { 3 };
    let default = vec![(1, 1); components];
    let subsampling = match cfg.get("subsampling") {
        None if encoded == Ycbcr => {
            return Err(reject("JPEG-SUB-04", "'subsampling' is required with encoded_color_space ycbcr".into()))
        }
        None => default,
        Some(value) => {
            let subsampling = factors(value, components)?;
            if encoded == Ycbcr && subsampling[1..].iter().any(|&f| f != (1, 1)) {
                return Err(reject("JPEG-SUB-03", format!("chroma sampling factors must be [1, 1], got {value}")));
            }
            if encoded != Ycbcr && subsampling != default {
                return Err(reject(
                    "JPEG-SUB-07",
                    format!("'subsampling' with {} must equal its default, got {value}", encoded.name()),
                ));
            }
            subsampling
        }
    };
    Ok(Config { quality, encoded, decoded, subsampling })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requirement(codec: Value) -> Option<&'static str> {
        parse_codec(&codec).err().map(|r| r.requirement.unwrap())
    }

    #[test]
    fn valid_configurations_get_their_defaults() {
        let cfg =
            parse_codec(&json!({"name": "jpeg", "configuration": {"quality": 90.0, "encoded_color_space": "rgb"}})).unwrap();
        assert_eq!(cfg, Config { quality: 90, encoded: ColorSpace::Rgb, decoded: ColorSpace::Rgb, subsampling: vec![(1, 1); 3] });
        let cfg = parse_codec(&json!({"name": "jpeg", "configuration": {"quality": 1, "encoded_color_space": "ycbcr",
            "decoded_color_space": "ycbcr", "subsampling": [[4, 1], [1, 1], [1, 1]]}}))
        .unwrap();
        assert_eq!((cfg.decoded, cfg.luma_factors(), cfg.is_required_scheme()), (ColorSpace::Ycbcr, (4, 1), false));
    }

    #[test]
    fn invalid_configurations_cite_their_requirement() {
        let cases = [
            (json!("jpeg"), "JPEG-CFG-01"),
            (json!({"name": "jpg", "configuration": {}}), "JPEG-NAME-01"),
            (json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}, "x": 1}), "JPEG-X-01"),
            (json!({"name": "jpeg", "configuration": {"encoded_color_space": "grayscale"}}), "JPEG-Q-05"),
            (json!({"name": "jpeg", "configuration": {"quality": true, "encoded_color_space": "grayscale"}}), "JPEG-Q-01"),
            (json!({"name": "jpeg", "configuration": {"quality": 0, "encoded_color_space": "grayscale"}}), "JPEG-Q-01"),
            (json!({"name": "jpeg", "configuration": {"quality": 90.5, "encoded_color_space": "grayscale"}}), "JPEG-Q-01"),
            (json!({"name": "jpeg", "configuration": {"quality": 90}}), "JPEG-ECS-07"),
            (json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "RGB"}}), "JPEG-ECS-01"),
            (
                json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb", "decoded_color_space": "ycbcr"}}),
                "JPEG-DCS-04",
            ),
            (json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr"}}), "JPEG-SUB-04"),
            (
                json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2]]}}),
                "JPEG-CFG-01",
            ),
            (
                json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[5, 1], [1, 1], [1, 1]]}}),
                "JPEG-SUB-01",
            ),
            (
                json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [2, 1], [1, 1]]}}),
                "JPEG-SUB-03",
            ),
            (
                json!({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[2, 2]]}}),
                "JPEG-SUB-07",
            ),
        ];
        for (codec, expected) in cases {
            assert_eq!(requirement(codec.clone()), Some(expected), "{codec}");
        }
    }
}
