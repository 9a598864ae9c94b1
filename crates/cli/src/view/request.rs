//! The messages a page sends `gol view` (the protocol is in `view/mod.rs`), read from JSON, and
//! the bounds every request is held to. Self-contained (serde and num-bigint only), so that the
//! fuzz target `view_request` reads messages with this very code.

use num_bigint::BigInt;
use serde::{Deserialize, Deserializer};

/// The largest canvas a frame is made for, each way, in pixels.
pub const MAX_CANVAS: usize = 8192;

/// The most pixels a frame has (a 4096² canvas; a larger one gets a frame scaled down).
pub const MAX_PIXELS: usize = 1 << 24;

/// The most generations a step or a speed may ask for: 2^40.
pub const MOST_GENERATIONS: u64 = 1 << 40;

/// A message from the page.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    View {
        #[serde(deserialize_with = "integer")]
        x: BigInt,
        #[serde(deserialize_with = "integer")]
        y: BigInt,
        #[serde(deserialize_with = "integer")]
        width: BigInt,
        #[serde(deserialize_with = "integer")]
        height: BigInt,
        pixels_wide: usize,
        pixels_high: usize,
    },
    Play,
    Pause,
    Step {
        generations: Option<u64>,
    },
    Speed {
        generations: u64,
    },
    Restart {
        width: usize,
        height: usize,
        seed: u32,
        density: Option<f64>,
        rule: String,
    },
    Load {
        name: String,
        /// The file as text, or (`bytes`) any file, compressed ones too, in base64.
        text: Option<String>,
        bytes: Option<String>,
    },
    Look {
        axis: String,
        slice: Option<usize>,
    },
}

/// An integer written as a JSON number or as a decimal string (of any size).
fn integer<'de, D: Deserializer<'de>>(d: D) -> Result<BigInt, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Signed(i64),
        Unsigned(u64),
        Text(String),
    }
    match Written::deserialize(d)? {
        Written::Signed(n) => Ok(n.into()),
        Written::Unsigned(n) => Ok(n.into()),
        Written::Text(text) => text.trim().parse().map_err(|_| {
            let shown: String = text.chars().take(40).collect();
            serde::de::Error::custom(format!("{shown:?} is not an integer"))
        }),
    }
}

impl Request {
    /// The request of a page's message; a message that is not one is an error for the page,
    /// quoting at most a little of it.
    pub fn parse(text: &str) -> Result<Request, String> {
        serde_json::from_str(text).map_err(|e| {
            let said = e.to_string();
            let cut: String = said.chars().take(200).collect();
            format!("bad request: {cut}")
        })
    }
}

/// The canvas a frame is made for: at most [`MAX_CANVAS`] each way and [`MAX_PIXELS`] in all,
/// scaled down as a whole (the page stretches a smaller frame over its canvas).
pub fn canvas(wide: usize, high: usize) -> (usize, usize) {
    let (wide, high) = (wide.clamp(1, MAX_CANVAS), high.clamp(1, MAX_CANVAS));
    if wide * high <= MAX_PIXELS {
        return (wide, high);
    }
    let scale = (MAX_PIXELS as f64 / (wide * high) as f64).sqrt();
    let shrunk = |n: usize| ((n as f64 * scale) as usize).max(1);
    (shrunk(wide), shrunk(high))
}

/// `generations` of a step or a speed, refused above [`MOST_GENERATIONS`].
pub fn most(generations: u64, what: &str) -> Result<u64, String> {
    if generations > MOST_GENERATIONS {
        return Err(format!(
            "a {what} is at most 2^{} generations",
            MOST_GENERATIONS.trailing_zeros()
        ));
    }
    Ok(generations)
}
