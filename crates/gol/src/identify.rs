//! What a pattern is ([`gol_census::identify()`]): the cells of a simulation, wherever it runs,
//! copied onto a plane of their own and run there until they repeat; the simulation itself
//! does not move.

use std::fmt;
use std::sync::atomic::AtomicBool;

use gol_census::Identity;
use gol_core::rule::Topology;
use gol_core::{EngineId, Grid, Rule};
use gol_plane::{Options, Start};
use serde::Serialize;

use crate::error::invalid;
use crate::{Dimension, PlaneSimulation, PlaneView, Result, Simulation};

pub use gol_census::identify::{Cycle, Verdict, MOST_CELLS};

/// The generations `identify` runs at most where none are given: 2^16.
pub const DEFAULT_LIMIT: u64 = 1 << 16;

/// Identifies `grid`, its top-left cell at (x, y) of the plane, under `rule` (on the infinite
/// plane; a tube or strip stays one): at most `limit` generations, `stop` ending it early.
pub fn identify(
    grid: &Grid,
    (x, y): (i64, i64),
    rule: Rule,
    limit: u64,
    stop: &AtomicBool,
) -> Result<Identity> {
    let rule = match rule.topology() {
        Topology::Strip(_) => rule,
        _ => rule.on(Topology::Torus),
    };
    // Tiles for two-state B/S rules, which they run fastest; HashLife for Generations rules
    // and rule tables; the window for what only it runs.
    let engine = [EngineId::Tiles, EngineId::Hashlife, EngineId::Window]
        .into_iter()
        .find(|&e| gol_plane::runs(e, &rule))
        .unwrap_or(EngineId::Window);
    let options = Options {
        memory: crate::plane::default_memory().min(4 << 30),
        threads: 1,
        parallel_level: None,
    };
    let mut plane = gol_plane::new(engine, Start::Grid { grid, x, y }, rule, &options)?;
    Ok(gol_census::identify(&mut *plane, limit, stop)?)
}

impl PlaneSimulation {
    /// What the pattern now is ([`identify`]).
    pub fn identify(&self, limit: u64, stop: &AtomicBool) -> Result<Identity> {
        let Some(rect) = self.bounding_box() else {
            invalid!("the pattern is empty: nothing to identify");
        };
        let fits = rect
            .size()
            .filter(|&(w, h)| w.saturating_mul(h) <= MOST_CELLS);
        let (Some(_), Some(corner)) = (fits, rect.corner()) else {
            invalid!("the pattern's bounding box {rect} is too large or too far out to identify");
        };
        let grid = self.window(&PlaneView::of(&rect))?;
        identify(&grid, corner, self.rule(), limit, stop)
    }
}

impl<W: Dimension> Simulation<W> {
    /// What the world's cells are on the infinite plane, its top-left cell at (0, 0)
    /// ([`identify`]); 2D only.
    pub fn identify(&self, limit: u64, stop: &AtomicBool) -> Result<Identity> {
        let world = self.world()?;
        let (width, height, _) = world.extent();
        if (width as u64).saturating_mul(height as u64) > MOST_CELLS {
            invalid!("a {width}x{height} grid is too large to identify");
        }
        world.identify(self.rule(), limit, stop)
    }
}

/// What [`identify()`] found, as `gol identify` reports it: fields for JSON (`serde`) and a
/// report of lines ([`fmt::Display`]).
#[derive(Serialize)]
pub struct Report {
    /// "still life", "oscillator", "spaceship", "dies out" or "no period found".
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    apgcode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    period: Option<u64>,
    #[serde(rename = "mod", skip_serializing_if = "Option::is_none")]
    modulus: Option<u64>,
    /// (right, down) in one period.
    #[serde(skip_serializing_if = "Option::is_none")]
    displacement: Option<(i64, i64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    heat: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    volatility: Option<f64>,
    /// The population where the cycle begins (or at the limit).
    population: u64,
    /// Least, greatest and mean population over the period.
    #[serde(skip_serializing_if = "Option::is_none")]
    population_range: Option<(u64, u64, f64)>,
    /// Where the cycle begins (or at the limit): x, y, width, height in Golly's coordinates.
    bounding_box: Option<Bounds>,
    /// Generations before the cycle begins (or the generation it died at, or the limit).
    settled_at: u64,
    /// Without a period: the population at generation 0, the largest in the first and in the
    /// second half of the run, and at the limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    trend: Option<Trend>,
    rule: String,
    source: String,
    seconds: f64,
}

/// A bounding box in Golly's coordinates.
#[derive(Serialize)]
pub struct Bounds {
    x: i64,
    y: i64,
    width: u64,
    height: u64,
}

/// How a run without a period went.
#[derive(Serialize)]
pub struct Trend {
    /// Generations run.
    limit: u64,
    /// Whether the run ended there because the bounding box grew past what is read a
    /// generation (16,777,216 cells).
    outgrew: bool,
    first: u64,
    most_first_half: u64,
    most_second_half: u64,
    last: u64,
    /// "growing", "shrinking" or "bounded", from the halves' largest populations.
    direction: &'static str,
}

impl Report {
    /// The report as one line of JSON.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a report is plain data")
    }

    /// The report of `identity`, of a pattern under `rule` from `source`, found in `seconds`.
    pub fn of(identity: &Identity, rule: String, source: String, seconds: f64) -> Report {
        let cycle: Option<&Cycle> = match &identity.verdict {
            Verdict::Periodic(cycle) => Some(cycle),
            _ => None,
        };
        let kind = match &identity.verdict {
            Verdict::Periodic(cycle) => cycle.kind(),
            Verdict::DiesOut { .. } => "dies out",
            Verdict::NotFound { .. } => "no period found",
        };
        let growth = match &identity.verdict {
            Verdict::NotFound { growth, .. } => growth.clone(),
            _ => None,
        };
        let trend = match identity.verdict {
            Verdict::NotFound {
                limit,
                outgrew,
                first,
                most,
                last,
                ..
            } => Some(Trend {
                limit,
                outgrew,
                first,
                most_first_half: most.0,
                most_second_half: most.1,
                last,
                direction: if most.1 as f64 > 1.1 * most.0 as f64 {
                    "growing"
                } else if (most.1 as f64) < 0.9 * most.0 as f64 {
                    "shrinking"
                } else {
                    "bounded"
                },
            }),
            _ => None,
        };
        Report {
            kind,
            apgcode: cycle.and_then(|c| c.apgcode.clone()).or(growth),
            period: cycle.map(|c| c.period),
            modulus: cycle.map(|c| c.modulus),
            displacement: cycle.map(|c| c.displacement),
            speed: cycle.and_then(Cycle::speed),
            heat: cycle.map(|c| c.heat),
            temperature: cycle.map(|c| c.temperature),
            volatility: cycle.and_then(|c| c.volatility),
            population: identity.population,
            population_range: cycle.map(|c| c.populations),
            bounding_box: identity.bounding_box.map(|(x, y, width, height)| Bounds {
                x,
                y,
                width,
                height,
            }),
            settled_at: identity.settled_at,
            trend,
            rule,
            source,
            seconds,
        }
    }
}

impl fmt::Display for Report {
    /// The report's lines, each ending in a newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Pattern: {}, rule {}", self.source, self.rule)?;
        match &self.trend {
            Some(t) => {
                let within = match t.outgrew {
                    true => format!(
                        "by generation {}, where its bounding box grew past {MOST_CELLS} cells",
                        t.limit
                    ),
                    false => format!("within {} generations", t.limit),
                };
                writeln!(
                    f,
                    "Type: no period found {within} (population {} at generation 0, {} at the last; {}: at most {} in the first half, {} in the second)",
                    t.first, t.last, t.direction, t.most_first_half, t.most_second_half
                )?;
            }
            None if self.period.is_none() => {
                writeln!(f, "Type: dies out at generation {}", self.settled_at)?;
            }
            None => writeln!(f, "Type: {}", self.kind)?,
        }
        if let Some(code) = &self.apgcode {
            writeln!(f, "apgcode: {code}")?;
        }
        if let (Some(period), Some(modulus)) = (self.period, self.modulus) {
            writeln!(f, "Period: {period} (mod {modulus})")?;
        }
        if let (Some(speed), Some((dx, dy))) = (&self.speed, self.displacement) {
            writeln!(
                f,
                "Speed: {speed} (moves {dx} right, {dy} down each period)"
            )?;
        }
        if self.period.is_some() && self.settled_at > 0 {
            writeln!(f, "Settles at generation {}", self.settled_at)?;
        }
        if let Some(b) = &self.bounding_box {
            writeln!(
                f,
                "Bounding box: x {}, y {}, width {}, height {}",
                b.x, b.y, b.width, b.height
            )?;
        }
        match self.population_range {
            Some((least, most, mean)) if least != most => writeln!(
                f,
                "Population: {} ({least} to {most}, mean {mean:.3})",
                self.population
            )?,
            _ => writeln!(f, "Population: {}", self.population)?,
        }
        if let (Some(heat), Some(temperature)) = (self.heat, self.temperature) {
            let volatility = self
                .volatility
                .map_or(String::new(), |v| format!(", volatility {v:.4}"));
            writeln!(
                f,
                "Heat: {heat:.4}, temperature {temperature:.4}{volatility}"
            )?;
        }
        writeln!(f, "Time (sec.): {:.6}", self.seconds)
    }
}
