//! `gol identify FILE` and `gol run … --identify`: what a pattern is, as a report or JSON.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use gol::identify::{Cycle, Verdict};
use gol::{Identity, PlaneSimulation, Setup, Start};
use serde::Serialize;

use crate::cli::IdentifyArgs;

/// The machine-readable answer (`--json`).
#[derive(Serialize)]
pub(crate) struct Report {
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

#[derive(Serialize)]
struct Bounds {
    x: i64,
    y: i64,
    width: u64,
    height: u64,
}

#[derive(Serialize)]
struct Trend {
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
    pub(crate) fn of(identity: &Identity, rule: String, source: String, seconds: f64) -> Report {
        let cycle: Option<&Cycle> = match &identity.verdict {
            Verdict::Periodic(cycle) => Some(cycle),
            _ => None,
        };
        let kind = match &identity.verdict {
            Verdict::Periodic(cycle) => cycle.kind(),
            Verdict::DiesOut { .. } => "dies out",
            Verdict::NotFound { .. } => "no period found",
        };
        let trend = match identity.verdict {
            Verdict::NotFound {
                limit,
                outgrew,
                first,
                most,
                last,
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
            apgcode: cycle.and_then(|c| c.apgcode.clone()),
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

    pub(crate) fn print(&self) {
        println!("Pattern: {}, rule {}", self.source, self.rule);
        match &self.trend {
            Some(t) => {
                let within = match t.outgrew {
                    true => format!(
                        "by generation {}, where its bounding box grew past {} cells",
                        t.limit,
                        gol::identify::MOST_CELLS
                    ),
                    false => format!("within {} generations", t.limit),
                };
                println!(
                    "Type: no period found {within} (population {} at generation 0, {} at the last; {}: at most {} in the first half, {} in the second)",
                    t.first, t.last, t.direction, t.most_first_half, t.most_second_half
                )
            }
            None if self.period.is_none() => {
                println!("Type: dies out at generation {}", self.settled_at)
            }
            None => println!("Type: {}", self.kind),
        }
        if let Some(code) = &self.apgcode {
            println!("apgcode: {code}");
        }
        if let (Some(period), Some(modulus)) = (self.period, self.modulus) {
            println!("Period: {period} (mod {modulus})");
        }
        if let (Some(speed), Some((dx, dy))) = (&self.speed, self.displacement) {
            println!("Speed: {speed} (moves {dx} right, {dy} down each period)");
        }
        if self.period.is_some() && self.settled_at > 0 {
            println!("Settles at generation {}", self.settled_at);
        }
        if let Some(b) = &self.bounding_box {
            println!(
                "Bounding box: x {}, y {}, width {}, height {}",
                b.x, b.y, b.width, b.height
            );
        }
        match self.population_range {
            Some((least, most, mean)) if least != most => println!(
                "Population: {} ({least} to {most}, mean {mean:.3})",
                self.population
            ),
            _ => println!("Population: {}", self.population),
        }
        if let (Some(heat), Some(temperature)) = (self.heat, self.temperature) {
            let volatility = self
                .volatility
                .map_or(String::new(), |v| format!(", volatility {v:.4}"));
            println!("Heat: {heat:.4}, temperature {temperature:.4}{volatility}");
        }
        println!("Time (sec.): {:.6}", self.seconds);
    }
}

pub fn identify(args: &IdentifyArgs) -> Result<()> {
    let start = Instant::now();
    let setup = Setup {
        start: Start::File(args.input.clone()),
        rule: args.rule.as_deref().map(gol::Rule::parse).transpose()?,
        infinite: true,
        memory: args.memory,
        ..Setup::default()
    };
    let sim = PlaneSimulation::new(&setup)?;
    let identity = sim.identify(args.max_gens, &AtomicBool::new(false))?;
    let report = Report::of(
        &identity,
        sim.rule().to_string(),
        sim.source().to_string(),
        start.elapsed().as_secs_f64(),
    );
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        report.print();
    }
    Ok(())
}
