//! A torus split into slabs along its slowest axis — rows in 2D, planes of constant x in 3D —,
//! each advanced by its own engine (a GPU, a process), with halos deep enough that one exchange
//! serves many generations.
//!
//! # How a slab stays exact
//!
//! The split axis is cut into *layers*: a row of a 2D grid, a plane of a 3D cube (M of the
//! cube's lines, [`crate::cube`]). Part `p` owns the layers `start..end` of the torus's L (its
//! *interior*, h layers). Its engine holds an *extended* slab of h + 2d layers: the d layers
//! before the interior (global layers `start − d..start`, wrapping), the interior, the d layers
//! after it. The engine advances that extended slab as a torus of its own, whose first and last
//! layers are wrongly each other's neighbours; the error moves one layer per generation, so after
//! k ≤ d generations the interior is still exact and only the halos are wrong. The halos are then
//! refreshed from the neighbouring parts' interiors (the d layers each side), and the next k
//! generations can run. Any engine that runs a torus of any length along the split axis can so
//! run a slab unchanged; the cost is the 2d extra layers each part advances, and one exchange of
//! 2d layers per part every d generations.
//!
//! Depth d is at most the smallest interior, so that each halo comes from one neighbour. With
//! one part, the part is its own neighbour above and below. The other axes are never split:
//! every part wraps them as the whole torus does.
//!
//! A bounded plane (2D, `:P`) is split the same way, with its rule, whose engines keep the
//! cells past an extended slab's ends and sides dead: inside the plane that is the same error
//! as a torus's wrong wrap, absorbed by the halos, and at the plane's own top and bottom it is
//! exactly right, so there the first part has no halo above it and the last none below
//! ([`Slabs::halos`]); what a neighbour sends towards a missing halo is not written anywhere.
//!
//! Everything here moves whole rows of [`World::rows`] (a layer is [`World::layer_rows`] of
//! them), so that the same code serves both dimensions.
//!
//! # Exchanges
//!
//! [`Decomposed`] exchanges halos GPU to GPU where it was given a [`PeerCopy`] and every part
//! keeps its rows on a GPU ([`RowAccess::device_rows`]): 2 copies of d layers per part, straight
//! from the sender's interior into the receiver's halo. Then nothing waits on the host between
//! rounds: each GPU's rounds and copies are queued ([`Engine::queue_round`]) with the copies
//! ordered after the neighbours' rounds on the GPUs themselves, so a GPU starts its next round
//! as soon as its own halos have arrived — or before, where its engine can first make the
//! layers that need no halo while the copies run. Otherwise the rows go through host memory
//! ([`Slab::outgoing`], [`Slab::incoming`]) after every part has finished its round, as they do
//! between MPI ranks.

use std::ops::Range;
use std::time::Instant;

use crate::engine::{DeviceRows, Engine, EngineId, HostRows, RowAccess, World};
use crate::error::{Error, Result};
use crate::grid::Grid;
use crate::rule::{Rule, Topology};

/// Halo depth in 2D when none is asked for, in rows: deep enough that exchanges are rare,
/// shallow enough that the extra rows cost little on large slabs.
pub const DEFAULT_DEPTH: usize = 256;

/// Halo depth in 3D when none is asked for, in planes. A plane is M rows, so halos are far
/// costlier to advance than in 2D: on two H200s, 1024³ ran fastest with 16 (8 and 32 were
/// 4–12% slower); with rounds that make the planes needing no halo first, 12 and 16 are within
/// 1% and 8 and 32 1–5% slower.
pub const DEFAULT_DEPTH_3D: usize = 16;

/// The name under which [`Decomposed`] reports the time spent exchanging halos
/// ([`Engine::timings`]).
pub const EXCHANGE_TIMING: &str = "halo exchange";

/// Where the layers of a torus go when split into parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slabs {
    width: usize,
    layers: usize,
    /// Rows of [`World::rows`] per layer.
    layer_rows: usize,
    /// What a layer is called in messages ("row" or "plane").
    layer: &'static str,
    /// Part p owns layers `bounds[p]..bounds[p + 1]`.
    bounds: Vec<usize>,
    depth: usize,
    /// Whether the split axis ends at dead layers (a bounded plane) rather than wrapping.
    plane: bool,
}

impl Slabs {
    /// `parts` slabs of a world of kind `W` whose rows are `width` cells wide and whose split
    /// axis has `layers` layers (a grid's height, a cube's side), as even as can be, with halos
    /// `depth` layers deep (capped at the smallest slab). Refused if there are more parts than
    /// layers.
    pub fn new<W: World>(width: usize, layers: usize, parts: usize, depth: usize) -> Result<Slabs> {
        let layer_rows = W::layer_rows(width);
        crate::grid::check_size(width, layers.saturating_mul(layer_rows))?;
        let layer = if W::AXES == 2 { "row" } else { "plane" };
        if parts == 0 || parts > layers {
            return Err(Error::Invalid(format!(
                "cannot split {layers} {layer}s into {parts} slabs (each needs at least one {layer})"
            )));
        }
        if depth == 0 {
            return Err(Error::Invalid(format!(
                "a halo must be at least 1 {layer} deep"
            )));
        }
        let bounds: Vec<usize> = (0..=parts)
            .map(|p| (p as u128 * layers as u128 / parts as u128) as usize)
            .collect();
        let smallest = bounds
            .windows(2)
            .map(|b| b[1] - b[0])
            .min()
            .unwrap_or(layers);
        Ok(Slabs {
            width,
            layers,
            layer_rows,
            layer,
            bounds,
            depth: depth.min(smallest),
            plane: false,
        })
    }

    /// The same slabs of a world of `topology`: on a bounded plane the split axis ends at dead
    /// layers, so the first part has no halo above it and the last none below (see the
    /// module's notes).
    pub fn on(mut self, topology: Topology) -> Slabs {
        self.plane = topology == Topology::Plane;
        self
    }

    /// The slabs of `world` (see [`Slabs::new`]).
    pub fn of<W: World>(world: &W, parts: usize, depth: usize) -> Result<Slabs> {
        let rows = world.rows();
        let layers = rows.height() / W::layer_rows(rows.width());
        Slabs::new::<W>(rows.width(), layers, parts, depth)
    }

    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Halo depth in layers: the generations one exchange serves.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Width of the rows (of the torus and of every slab).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Layers of the whole torus along the split axis.
    pub fn layers(&self) -> usize {
        self.layers
    }

    /// Rows of [`World::rows`] in one layer.
    pub fn layer_rows(&self) -> usize {
        self.layer_rows
    }

    /// Rows of the whole torus.
    pub fn rows(&self) -> usize {
        self.layers * self.layer_rows
    }

    /// What a layer is called: "row" or "plane".
    pub fn layer(&self) -> &'static str {
        self.layer
    }

    /// The global layers part `p` owns.
    pub fn interior(&self, p: usize) -> Range<usize> {
        self.bounds[p]..self.bounds[p + 1]
    }

    /// The global rows part `p` owns.
    pub fn interior_rows(&self, p: usize) -> Range<usize> {
        let layers = self.interior(p);
        layers.start * self.layer_rows..layers.end * self.layer_rows
    }

    /// Layers of part `p`'s halos above and below its interior: the depth, or none past a
    /// bounded plane's top (part 0) and bottom (the last part).
    pub fn halos(&self, p: usize) -> (usize, usize) {
        let above = if self.plane && p == 0 { 0 } else { self.depth };
        let below = if self.plane && p + 1 == self.parts() {
            0
        } else {
            self.depth
        };
        (above, below)
    }

    /// Rows of part `p`'s extended slab: its interior and its halos.
    pub fn extended_rows(&self, p: usize) -> usize {
        let (above, below) = self.halos(p);
        (above + self.interior(p).len() + below) * self.layer_rows
    }

    /// The global rows of part `p`'s extended slab, in order (wrapping around the torus).
    pub fn extended(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        let start = (self.bounds[p] + self.layers - self.halos(p).0) * self.layer_rows;
        let rows = self.rows();
        (0..self.extended_rows(p)).map(move |r| (start + r) % rows)
    }

    /// Part `p`'s extended slab cut from the whole torus `world`.
    pub fn cut<W: World>(&self, world: &W, p: usize) -> Result<W> {
        let whole = world.rows();
        let mut slab = Grid::new(self.width, self.extended_rows(p))?;
        for (r, y) in self.extended(p).enumerate() {
            slab.row_mut(r).copy_from_slice(whole.row(y));
        }
        W::slab(slab)
    }

    /// Generations advanced in each round between exchanges, for `generations` in all.
    pub fn rounds(&self, generations: u64) -> impl Iterator<Item = u64> {
        let depth = self.depth as u64;
        (0..generations.div_ceil(depth)).map(move |i| depth.min(generations - i * depth))
    }
}

/// Copies rows from GPU to GPU without the host (the CUDA crate's peer copies), for the
/// exchanges of [`Decomposed`].
pub trait PeerCopy: Send + Sync {
    /// Queues a copy of each `(from, to)` pair after the work queued so far on both ranges'
    /// queues ([`DeviceRows::queue`]). Returns without waiting; work queued later on either
    /// queue waits for the copy only once the queue has joined it ([`PeerCopy::join`]).
    ///
    /// # Safety
    /// Each range must lie within one live allocation of its GPU that stays alive until the
    /// copies have run, each queue must be a live stream of that GPU, `from` and `to` must have
    /// the same length, and no `to` range may overlap any other range of the call. Until a
    /// queue has joined the copies, the work queued on it must not write a `from` range of it
    /// nor read or write a `to` range.
    unsafe fn copy(&self, pairs: &[(DeviceRows, DeviceRows)]) -> Result<()>;

    /// Makes the work queued from now on on `waiter` wait for the copies of [`PeerCopy::copy`]
    /// that send from `queue` or receive into it. `waiter` is `queue` or another queue of the
    /// same device that `queue`'s work then waits for before it touches the copied ranges.
    fn join(&self, queue: u64, waiter: u64) -> Result<()>;

    /// The time that the copies queued since the last call that have run by now took on the
    /// GPUs, in seconds (the largest total of any receiving GPU); forgets those, and keeps the
    /// others for a later call. Never waits; refused while a queue owes a join.
    fn take_seconds(&self) -> Result<f64>;

    /// What [`PeerCopy::take_seconds`] would give now, forgetting nothing.
    fn pending_seconds(&self) -> Result<f64>;

    /// How the copies travel, for reports.
    fn describe(&self) -> String;
}

/// A part's halo rows in GPU memory: what it sends and where it receives.
struct DeviceHalos {
    /// The first d interior rows (for the part above's bottom halo).
    send_top: DeviceRows,
    /// The last d interior rows (for the part below's top halo).
    send_bottom: DeviceRows,
    /// The top halo (none at a bounded plane's top).
    receive_top: Option<DeviceRows>,
    /// The bottom halo (none at a bounded plane's bottom).
    receive_bottom: Option<DeviceRows>,
}

/// One part of a decomposed torus: an engine holding the part's extended slab.
pub struct Slab<W: World = Grid> {
    engine: Box<dyn Engine<W>>,
    width: usize,
    /// Interior rows.
    rows: usize,
    /// Halo depth in layers: the most generations between exchanges.
    depth: usize,
    /// Rows in a halo of the full depth: what travels each way at an exchange.
    halo_rows: usize,
    /// Rows of the halos above and below the interior (`halo_rows`, or 0 at a bounded plane's
    /// top and bottom).
    above_rows: usize,
    below_rows: usize,
    words_per_row: usize,
    /// The rows sent at the last exchange: buffers kept from one exchange to the next, as
    /// fresh ones would cost a page fault per page at every exchange.
    sent: Outgoing,
}

/// The rows a part sends at an exchange: its first and last `d` interior layers, which are the
/// bottom halo of the part above and the top halo of the part below.
#[derive(Default)]
pub struct Outgoing {
    /// The first d interior layers (for the part above).
    pub top: HostRows,
    /// The last d interior layers (for the part below).
    pub bottom: HostRows,
}

impl<W: World> Slab<W> {
    /// A part to be advanced by `engine`; nothing is loaded yet. Refused where the engine
    /// gives no row access ([`Engine::rows`]).
    pub fn new(engine: Box<dyn Engine<W>>) -> Result<Slab<W>> {
        if engine.rows().is_none() {
            return Err(crate::engine::no_slabs(engine.id()));
        }
        Ok(Slab {
            engine,
            width: 0,
            rows: 0,
            depth: 0,
            halo_rows: 0,
            above_rows: 0,
            below_rows: 0,
            words_per_row: 0,
            sent: Outgoing::default(),
        })
    }

    /// The engine's row access, which [`Slab::new`] checked it has.
    fn access(&self) -> &dyn RowAccess {
        self.engine.rows().expect("Slab::new checks for row access")
    }

    /// [`Slab::access`], to write rows.
    fn access_mut(&mut self) -> &mut dyn RowAccess {
        self.engine
            .rows_mut()
            .expect("Slab::new checks for row access")
    }

    /// Loads part `p` of `slabs`, whose extended slab is `extended` ([`Slabs::cut`], or read
    /// row by row).
    /// The slabs must be on the rule's topology ([`Slabs::on`]).
    pub fn load(&mut self, slabs: &Slabs, p: usize, extended: &W, rule: Rule) -> Result<()> {
        let rows = extended.rows();
        assert_eq!(rows.height(), slabs.extended_rows(p), "extended slab");
        assert_eq!(
            slabs.plane,
            rule.topology() == Topology::Plane,
            "slabs on the rule's topology"
        );
        self.engine.load(extended, rule)?;
        let (above, below) = slabs.halos(p);
        self.width = slabs.width();
        self.rows = slabs.interior_rows(p).len();
        self.depth = slabs.depth();
        self.halo_rows = slabs.depth() * slabs.layer_rows();
        self.above_rows = above * slabs.layer_rows();
        self.below_rows = below * slabs.layer_rows();
        self.words_per_row = rows.words_per_row();
        Ok(())
    }

    /// The engine.
    pub fn engine(&self) -> &dyn Engine<W> {
        self.engine.as_ref()
    }

    /// Advances `generations` (at most the depth) since the last exchange.
    pub fn advance(&mut self, generations: u64) -> Result<()> {
        debug_assert!(generations <= self.depth as u64);
        self.engine.step(generations)
    }

    /// Queues a round of `generations` (at most the depth) on the engine's device
    /// ([`Engine::queue_round`]), joining the halo copies of `peer` ([`PeerCopy::join`]) when
    /// the engine is ready to wait for them.
    fn queue_round(&mut self, generations: u64, peer: &dyn PeerCopy) -> Result<()> {
        debug_assert!(generations <= self.depth as u64);
        // The engine's queue, as any of its device rows give it.
        let queue = match self.access().device_rows(self.above_rows, self.halo_rows) {
            Some(rows) => rows?.queue,
            None => return Err(Error::Engine("a slab queued off its GPU".into())),
        };
        let layer = self.halo_rows / self.depth;
        let halos = (self.above_rows / layer, self.below_rows / layer);
        self.engine.queue_round(generations, halos, &mut |waiter| {
            peer.join(queue, waiter.unwrap_or(queue))
        })
    }

    fn read(&self, first: usize, rows: usize) -> Result<Vec<u64>> {
        let mut words = vec![0; rows * self.words_per_row];
        self.access().read_rows(first, &mut words)?;
        Ok(words)
    }

    /// Words in a halo of the full depth (d layers): what travels each way at an exchange.
    pub fn halo_words(&self) -> usize {
        self.halo_rows * self.words_per_row
    }

    /// The first row of the interior's last d layers (what the part below receives).
    fn last_layers(&self) -> usize {
        self.above_rows + self.rows - self.halo_rows
    }

    /// The rows this part sends at an exchange, read into buffers the part keeps (host memory
    /// of the engine's choosing, [`RowAccess::host_rows`]).
    pub fn outgoing(&mut self) -> Result<&Outgoing> {
        let words = self.halo_words();
        if self.sent.top.len() != words {
            self.sent = Outgoing {
                top: self.host_rows(words)?,
                bottom: self.host_rows(words)?,
            };
        }
        let (first, last) = (self.above_rows, self.last_layers());
        let access = self.engine.rows().expect("Slab::new checks for row access");
        access.read_rows(first, &mut self.sent.top)?;
        access.read_rows(last, &mut self.sent.bottom)?;
        Ok(&self.sent)
    }

    /// `words` zeroed words of host memory of the engine's choosing for rows that travel
    /// ([`RowAccess::host_rows`]).
    pub fn host_rows(&self, words: usize) -> Result<HostRows> {
        self.access().host_rows(words)
    }

    /// Where the rows [`Slab::outgoing`] reads and [`Slab::incoming`] writes lie on the GPU;
    /// `None` where the engine keeps no rows there.
    fn device_halos(&self) -> Option<Result<DeviceHalos>> {
        let rows = |first| self.access().device_rows(first, self.halo_rows);
        let (above, below) = (self.above_rows, self.above_rows + self.rows);
        let [send_top, send_bottom] = [rows(above)?, rows(self.last_layers())?];
        let receive = |first, present: bool| present.then(|| rows(first)).flatten();
        let receive_top = receive(0, self.above_rows > 0);
        let receive_bottom = receive(below, self.below_rows > 0);
        Some((|| {
            Ok(DeviceHalos {
                send_top: send_top?,
                send_bottom: send_bottom?,
                receive_top: receive_top.transpose()?,
                receive_bottom: receive_bottom.transpose()?,
            })
        })())
    }

    /// Fills the halos: `top` from the part above (its last d interior layers), `bottom` from
    /// the part below (its first d); a halo the part does not have (at a bounded plane's top
    /// or bottom) takes nothing.
    pub fn incoming(&mut self, top: &[u64], bottom: &[u64]) -> Result<()> {
        let (above, below, bottom_at) = (
            self.above_rows,
            self.below_rows,
            self.above_rows + self.rows,
        );
        let access = self.access_mut();
        if above > 0 {
            access.write_rows(0, top)?;
        }
        if below > 0 {
            access.write_rows(bottom_at, bottom)?;
        }
        Ok(())
    }

    /// Copies the interior rows now into `words` (whole rows of the torus's width).
    pub fn read_interior(&self, words: &mut [u64]) -> Result<()> {
        self.access().read_rows(self.above_rows, words)
    }

    /// The interior rows now, as a grid of that many rows (of [`World::rows`]).
    pub fn interior(&self) -> Result<Grid> {
        let mut grid = Grid::new(self.width, self.rows)?;
        self.read_interior(grid.words_mut())?;
        Ok(grid)
    }

    /// Live cells of the interior: the whole slab's count less the halos'.
    pub fn population(&self) -> Result<u64> {
        let halo = |first: usize, rows: usize| -> Result<u64> {
            if rows == 0 {
                return Ok(0);
            }
            if let Some(counted) = self.access().population_of_rows(first, rows) {
                return counted;
            }
            let words = self.read(first, rows)?;
            Ok(words.iter().map(|w| w.count_ones() as u64).sum())
        };
        let below = halo(self.above_rows + self.rows, self.below_rows)?;
        Ok(self.engine.population()? - halo(0, self.above_rows)? - below)
    }
}

/// A torus split into slabs advanced side by side in one process, one engine each (one per GPU),
/// exchanging halos GPU to GPU or through host memory (see the module's notes). It is an
/// [`Engine`] itself, bit-identical to one engine advancing the whole torus.
pub struct Decomposed<W: World = Grid> {
    parts: Vec<Slab<W>>,
    depth: usize,
    peer: Option<Box<dyn PeerCopy>>,
    slabs: Option<Slabs>,
    /// Whether the halos are out of date (generations ran since the last exchange).
    stale: bool,
    /// Whether GPU work may still be queued ([`Engine::wait`] has it to wait for).
    queued: bool,
    exchange_seconds: f64,
}

impl<W: World> Decomposed<W> {
    /// Slabs advanced by `engines` (one part each; every one must support row access), with
    /// halos `depth` layers deep (capped at the smallest slab).
    pub fn new(engines: Vec<Box<dyn Engine<W>>>, depth: usize) -> Result<Decomposed<W>> {
        if engines.is_empty() {
            return Err(Error::Invalid(
                "a decomposed run needs at least one engine".into(),
            ));
        }
        Ok(Decomposed {
            parts: engines.into_iter().map(Slab::new).collect::<Result<_>>()?,
            depth,
            peer: None,
            slabs: None,
            stale: false,
            queued: false,
            exchange_seconds: 0.0,
        })
    }

    fn slabs(&self) -> Result<&Slabs> {
        self.slabs
            .as_ref()
            .ok_or_else(|| Error::Engine("decomposed engine: no grid loaded".into()))
    }

    /// Exchanges halos GPU to GPU through `peer` where every part's engine keeps its rows on a
    /// GPU; through host memory otherwise.
    pub fn with_peer_copy(mut self, peer: Box<dyn PeerCopy>) -> Decomposed<W> {
        self.peer = Some(peer);
        self
    }

    /// Whether halos go GPU to GPU: there is a [`PeerCopy`] and every part keeps its rows on a
    /// GPU.
    fn on_gpus(&self) -> bool {
        self.peer.is_some() && self.parts.iter().all(|part| part.device_halos().is_some())
    }

    /// Refreshes every halo: queued GPU to GPU where `on_gpus`, else through host memory once
    /// every part has finished its round.
    fn exchange(&mut self, on_gpus: bool) -> Result<()> {
        if on_gpus {
            self.exchange_on_gpus()?;
        } else {
            let start = Instant::now();
            each(&mut self.parts, |_, part| part.outgoing().map(drop))?;
            // Lent out while the parts take in their neighbours' rows, then handed back.
            let outgoing: Vec<Outgoing> = (self.parts.iter_mut())
                .map(|part| std::mem::take(&mut part.sent))
                .collect();
            let n = self.parts.len();
            let received = each(&mut self.parts, |p, part| {
                let (above, below) = (&outgoing[(p + n - 1) % n], &outgoing[(p + 1) % n]);
                part.incoming(&above.bottom, &below.top)
            });
            for (part, sent) in self.parts.iter_mut().zip(outgoing) {
                part.sent = sent;
            }
            received?;
            self.exchange_seconds += start.elapsed().as_secs_f64();
        }
        self.stale = false;
        Ok(())
    }

    /// Queues the halo exchange GPU to GPU (see [`Decomposed::on_gpus`]).
    fn exchange_on_gpus(&self) -> Result<()> {
        let peer = self.peer.as_ref().expect("on GPUs");
        let halos = (self.parts.iter())
            .map(|part| part.device_halos().expect("on GPUs"))
            .collect::<Result<Vec<_>>>()?;
        let n = halos.len();
        // No copy goes towards a halo a part does not have (at a bounded plane's edges).
        let pairs: Vec<(DeviceRows, DeviceRows)> = (0..n)
            .flat_map(|p| {
                let (above, below) = (&halos[(p + n - 1) % n], &halos[(p + 1) % n]);
                [
                    (halos[p].send_top, above.receive_bottom),
                    (halos[p].send_bottom, below.receive_top),
                ]
            })
            .filter_map(|(from, to)| Some((from, to?)))
            .collect();
        // SAFETY: every range and queue was given by a part's engine for its own state and
        // stream, which live as long as `self`, and `step` waits for every part before it
        // returns, so the copies run while they are alive. Each range is d whole rows of one
        // slab's width (d the rows of a halo). The receiving ranges are the halos, rows 0..a
        // and a+h..a+h+d of an extended slab with a halo of a rows (d or 0) above; the sending
        // ranges are interior rows a..a+d and a+h-d..a+h, and d ≤ h, so no halo overlaps
        // another range of the call. Until a part joins the copies, its engine queues only work
        // that neither reads a halo nor changes the current rows ([`Engine::queue_round`]).
        unsafe { peer.copy(&pairs) }
    }

    /// How halos travel, for reports.
    fn exchange_path(&self) -> String {
        let on_gpus = self
            .parts
            .iter()
            .all(|part| matches!(part.device_halos(), Some(Ok(_))));
        match &self.peer {
            Some(peer) if on_gpus => peer.describe(),
            _ => "through host memory".into(),
        }
    }
}

/// Runs `work(index, item)` on every item side by side, on the threads of rayon's pool (which
/// live on, so a GPU's driver state per thread is set up once, not at every round), and
/// collects the results; the first error wins.
fn each<T: Send, R: Send>(
    items: &mut [T],
    work: impl Fn(usize, &mut T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    use rayon::prelude::*;
    items
        .par_iter_mut()
        .with_max_len(1)
        .enumerate()
        .map(|(i, item)| work(i, item))
        .collect()
}

impl<W: World> Engine<W> for Decomposed<W> {
    fn id(&self) -> EngineId {
        self.parts[0].engine.id()
    }

    fn load(&mut self, world: &W, rule: Rule) -> Result<()> {
        self.wait()?;
        if let Some(peer) = &self.peer {
            // The last run's copies, whose times are not this run's.
            peer.take_seconds()?;
        }
        self.slabs = None;
        let slabs = Slabs::of(world, self.parts.len(), self.depth)?.on(rule.topology());
        each(&mut self.parts, |p, part| {
            part.load(&slabs, p, &slabs.cut(world, p)?, rule)
        })?;
        self.slabs = Some(slabs);
        self.stale = false;
        self.exchange_seconds = 0.0;
        Ok(())
    }

    fn step(&mut self, generations: u64) -> Result<()> {
        let rounds: Vec<u64> = self.slabs()?.rounds(generations).collect();
        let on_gpus = self.on_gpus();
        for k in rounds {
            if self.stale {
                self.exchange(on_gpus)?;
            }
            if let (true, Some(peer)) = (on_gpus, self.peer.as_deref()) {
                // Each part's launches queued from a thread of its own (queuing them costs the
                // host about as much as the GPU takes to run them); nothing here waits for a
                // GPU, so the threads run ahead of the GPUs.
                each(&mut self.parts, |_, part| part.queue_round(k, peer))?;
            } else {
                each(&mut self.parts, |_, part| part.advance(k))?;
            }
            self.stale = true;
        }
        if let (true, Some(peer)) = (on_gpus, self.peer.as_deref()) {
            // The times of the copies that have run (the earlier steps'), read while the GPUs
            // work; the rest at a later step or in `timings`.
            self.exchange_seconds += peer.take_seconds()?;
            self.queued = true;
            self.wait()?;
        }
        Ok(())
    }

    fn wait(&mut self) -> Result<()> {
        if std::mem::take(&mut self.queued) {
            each(&mut self.parts, |_, part| part.engine.wait())?;
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<W> {
        let slabs = self.slabs()?;
        let mut rows = Grid::new(slabs.width(), slabs.rows())?;
        let wpr = rows.words_per_row();
        for (p, part) in self.parts.iter().enumerate() {
            let interior = slabs.interior_rows(p);
            part.read_interior(&mut rows.words_mut()[interior.start * wpr..interior.end * wpr])?;
        }
        W::slab(rows)
    }

    fn population(&self) -> Result<u64> {
        self.slabs()?;
        self.parts.iter().map(Slab::population).sum()
    }

    fn details(&self) -> String {
        match &self.slabs {
            Some(slabs) => format!(
                "{} slabs with {}-{} halos exchanged {}, on {}",
                slabs.parts(),
                slabs.depth(),
                slabs.layer(),
                self.exchange_path(),
                grouped(self.parts.iter().map(|p| p.engine.details()))
            ),
            None => String::new(),
        }
    }

    fn timings(&self) -> Vec<(&'static str, f64)> {
        // Copies whose times were not read yet (NaN where they cannot be).
        let pending = (self.peer.as_ref()).map_or(Ok(0.0), |peer| peer.pending_seconds());
        let exchange = self.exchange_seconds + pending.unwrap_or(f64::NAN);
        let mut timings = vec![(EXCHANGE_TIMING, exchange)];
        // The parts' own timings, the slowest part's for each (they run side by side).
        for part in &self.parts {
            for (what, seconds) in part.engine.timings() {
                match timings.iter_mut().find(|(w, _)| *w == what) {
                    Some((_, longest)) => *longest = longest.max(seconds),
                    None => timings.push((what, seconds)),
                }
            }
        }
        timings
    }
}

/// The parts' details, each distinct one once, in order, with how many parts share it where
/// more than one does ("each of 4: …" where all do): the same plan is not repeated a GPU.
fn grouped(details: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for d in details {
        match seen.iter_mut().find(|(text, _)| *text == d) {
            Some((_, count)) => *count += 1,
            None => seen.push((d, 1)),
        }
    }
    match seen.as_slice() {
        [(text, count)] if *count > 1 => format!("each of {count}: {text}"),
        _ => seen
            .iter()
            .map(|(text, count)| match count {
                1 => text.clone(),
                n => format!("{n} × {text}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::cpu::{Bitsliced, Bitsliced3d, Scalar, Scalar3d};
    use crate::engine::{evolve, EngineSpec};
    use crate::seed::density_soup;
    use crate::Cube;

    #[test]
    fn slabs_cover_the_rows_once_and_cap_the_depth() {
        let slabs = Slabs::new::<Grid>(10, 7, 3, 64).unwrap();
        assert_eq!(slabs.interior(0), 0..2);
        assert_eq!(slabs.interior(1), 2..4);
        assert_eq!(slabs.interior(2), 4..7);
        assert_eq!(slabs.depth(), 2);
        assert_eq!(slabs.extended(0).collect::<Vec<_>>(), [5, 6, 0, 1, 2, 3]);
        assert_eq!(slabs.rounds(5).collect::<Vec<_>>(), [2, 2, 1]);
        assert!(Slabs::new::<Grid>(10, 2, 3, 1)
            .unwrap_err()
            .to_string()
            .contains("2 rows into 3 slabs"));
    }

    #[test]
    fn cube_slabs_are_whole_planes() {
        let slabs = Slabs::new::<Cube>(3, 3, 2, 5).unwrap();
        assert_eq!((slabs.depth(), slabs.layer_rows(), slabs.rows()), (1, 3, 9));
        assert_eq!(slabs.interior(1), 1..3);
        assert_eq!(slabs.interior_rows(1), 3..9);
        // Planes 0, 1, 2 and 0 again: rows of lines x·3 + y.
        let rows: Vec<usize> = slabs.extended(1).collect();
        assert_eq!(rows, [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2]);
        let cube = Cube::density_soup(3, 0.5, 9).unwrap();
        let cut = slabs.cut(&cube, 1).unwrap();
        assert_eq!(cut.planes(), 4);
        assert_eq!(cut.lines().row(10), cube.lines().row(1));
        assert!(Slabs::new::<Cube>(4, 4, 5, 1)
            .unwrap_err()
            .to_string()
            .contains("4 planes into 5 slabs"));
    }

    #[test]
    fn decomposed_cubes_match_one_engine() {
        for &(side, parts, depth, gens) in &[
            (1, 1, 4, 3),
            (3, 3, 1, 5),
            (5, 2, 2, 7),
            (17, 3, 3, 10),
            (66, 4, 4, 9),
        ] {
            for rule in ["B6/S567", "B4-6/S3-8", "B0,2/S1,26"] {
                let rule = Rule::parse(rule).unwrap();
                let cube = Cube::density_soup(side, 0.3, (side * parts) as u64).unwrap();
                let mut oracle = Scalar3d::default();
                oracle.load(&cube, rule).unwrap();
                oracle.step(gens).unwrap();
                let expected = oracle.snapshot().unwrap();
                let engines: Vec<Box<dyn Engine<Cube>>> = (0..parts)
                    .map(|_| Box::new(Bitsliced3d::default()) as Box<dyn Engine<Cube>>)
                    .collect();
                let mut decomposed = Decomposed::new(engines, depth).unwrap();
                decomposed.load(&cube, rule).unwrap();
                decomposed.step(gens / 2).unwrap();
                decomposed.step(gens - gens / 2).unwrap();
                let what = format!("side {side}, {parts} parts, depth {depth}, {rule}");
                let got = decomposed.snapshot().unwrap();
                assert_eq!(got.first_difference(&expected), None, "{what}");
                assert!(got.is_whole(), "{what}");
                assert_eq!(decomposed.population().unwrap(), expected.population());
                assert!(decomposed.details().contains("-plane halos"), "{what}");
            }
        }
    }

    #[test]
    fn decomposed_runs_match_one_engine() {
        let oracle = EngineSpec {
            id: EngineId::CpuScalar,
            description: "",
            create: |_| Ok(Box::new(Scalar::default())),
        };
        let mut seed = 1u64;
        for &(w, h, parts, depth, gens) in &[
            (1, 1, 1, 64, 5),
            (3, 2, 2, 1, 7),
            (65, 3, 3, 4, 9),
            (100, 37, 4, 5, 23),
            (130, 64, 3, 64, 100),
            (64, 50, 7, 3, 0),
        ] {
            for rule in [
                "B3/S23",
                "B36/S23",
                "B0/S8",
                "B2/S",
                "B3/S23:P",
                "B36/S23:P",
                "B2/S:P",
            ] {
                seed += 1;
                let rule = Rule::parse(rule).unwrap();
                let grid = density_soup(w, h, 0.35, seed).unwrap();
                let expected = evolve(&oracle, &grid, rule, gens).unwrap();
                let engines: Vec<Box<dyn Engine>> = (0..parts)
                    .map(|_| Box::new(Bitsliced::default()) as Box<dyn Engine>)
                    .collect();
                let mut decomposed = Decomposed::new(engines, depth).unwrap();
                decomposed.load(&grid, rule).unwrap();
                // In uneven steps, so that rounds start part-way through a halo's depth.
                decomposed.step(gens / 3).unwrap();
                decomposed.step(gens - gens / 3).unwrap();
                let got = decomposed.snapshot().unwrap();
                assert_eq!(
                    got, expected,
                    "{w}x{h}, {parts} parts, depth {depth}, {rule}"
                );
                assert_eq!(decomposed.population().unwrap(), expected.population());
            }
        }
    }

    /// An engine whose "GPU memory" is host memory, so that the wiring of GPU-to-GPU exchanges
    /// is checked without a GPU: cpu-scalar advances it, and it hands out its words' addresses
    /// as device rows.
    struct HostRows {
        grid: std::cell::UnsafeCell<Grid>,
        rule: Option<Rule>,
    }

    impl HostRows {
        fn new() -> HostRows {
            HostRows {
                grid: Grid::new(1, 1).unwrap().into(),
                rule: None,
            }
        }

        fn grid(&self) -> &Grid {
            // SAFETY: the grid is changed only through `&mut self` or by `HostCopy`, which runs
            // while no reference into it is alive.
            unsafe { &*self.grid.get() }
        }
    }

    impl Engine for HostRows {
        fn id(&self) -> EngineId {
            // Advanced by cpu-scalar; only its row access is its own.
            EngineId::CpuScalar
        }
        fn load(&mut self, grid: &Grid, rule: Rule) -> Result<()> {
            *self.grid.get_mut() = grid.clone();
            self.rule = Some(rule);
            Ok(())
        }
        fn step(&mut self, generations: u64) -> Result<()> {
            let mut scalar = Scalar::default();
            scalar.load(self.grid.get_mut(), self.rule.unwrap())?;
            scalar.step(generations)?;
            *self.grid.get_mut() = scalar.snapshot()?;
            Ok(())
        }
        fn snapshot(&self) -> Result<Grid> {
            Ok(self.grid().clone())
        }
        fn population(&self) -> Result<u64> {
            Ok(self.grid().population())
        }
        fn rows(&self) -> Option<&dyn RowAccess> {
            Some(self)
        }
        fn rows_mut(&mut self) -> Option<&mut dyn RowAccess> {
            Some(self)
        }
    }

    impl RowAccess for HostRows {
        fn read_rows(&self, first: usize, words: &mut [u64]) -> Result<()> {
            let start = first * self.grid().words_per_row();
            words.copy_from_slice(&self.grid().words()[start..start + words.len()]);
            Ok(())
        }
        fn write_rows(&mut self, first: usize, words: &[u64]) -> Result<()> {
            let start = first * self.grid.get_mut().words_per_row();
            self.grid.get_mut().words_mut()[start..start + words.len()].copy_from_slice(words);
            Ok(())
        }
        fn device_rows(&self, first: usize, rows: usize) -> Option<Result<DeviceRows>> {
            let wpr = self.grid().words_per_row();
            assert!((first + rows) * wpr <= self.grid().words().len());
            // SAFETY: a pointer into the grid's words, written only by `HostCopy`.
            let base = unsafe { (*self.grid.get()).words_mut().as_mut_ptr() };
            Some(Ok(DeviceRows {
                device: 0,
                address: base.wrapping_add(first * wpr) as u64,
                bytes: rows * wpr * 8,
                queue: 0,
            }))
        }
    }

    /// Copies between [`HostRows`] engines at once, counting the copies and the parts' joins.
    struct HostCopy {
        copies: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        joins: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl PeerCopy for HostCopy {
        unsafe fn copy(&self, pairs: &[(DeviceRows, DeviceRows)]) -> Result<()> {
            for (from, to) in pairs {
                assert_eq!(from.bytes, to.bytes);
                // SAFETY: by the contract of `PeerCopy::copy` (the ranges are live words of
                // `HostRows` grids, and no target overlaps another range).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        from.address as *const u8,
                        to.address as *mut u8,
                        from.bytes,
                    )
                };
                (self.copies).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(())
        }
        fn join(&self, queue: u64, waiter: u64) -> Result<()> {
            assert_eq!((queue, waiter), (0, 0), "the queue HostRows gives");
            (self.joins).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        fn take_seconds(&self) -> Result<f64> {
            Ok(0.0)
        }
        fn pending_seconds(&self) -> Result<f64> {
            Ok(0.0)
        }
        fn describe(&self) -> String {
            "by host copies".into()
        }
    }

    #[test]
    fn exchanges_from_device_rows_match_one_engine() {
        for &(w, h, parts, depth, gens, rule) in &[
            (1, 1, 1, 64, 5, "B36/S23"),
            (3, 2, 2, 1, 7, "B36/S23"),
            (70, 9, 3, 2, 13, "B36/S23"),
            (130, 64, 4, 7, 40, "B36/S23"),
            (70, 9, 3, 2, 13, "B36/S23:P"),
            (130, 64, 4, 7, 40, "B3/S23:P"),
            (3, 2, 2, 1, 7, "B2/S:P"),
        ] {
            let rule = Rule::parse(rule).unwrap();
            let grid = density_soup(w, h, 0.4, (w * h) as u64).unwrap();
            let mut oracle = Scalar::default();
            oracle.load(&grid, rule).unwrap();
            oracle.step(gens).unwrap();
            let engines: Vec<Box<dyn Engine>> = (0..parts)
                .map(|_| Box::new(HostRows::new()) as Box<dyn Engine>)
                .collect();
            let (copies, joins) = <(std::sync::Arc<_>, std::sync::Arc<_>)>::default();
            let mut decomposed = Decomposed::new(engines, depth)
                .unwrap()
                .with_peer_copy(Box::new(HostCopy {
                    copies: std::sync::Arc::clone(&copies),
                    joins: std::sync::Arc::clone(&joins),
                }));
            decomposed.load(&grid, rule).unwrap();
            decomposed.step(gens).unwrap();
            let what = format!("{w}x{h}, {parts} parts, depth {depth}, {rule}");
            assert_eq!(
                decomposed.snapshot().unwrap(),
                oracle.snapshot().unwrap(),
                "{what}"
            );
            let exchanges = (gens as usize).div_ceil(decomposed.slabs().unwrap().depth()) - 1;
            let counted = copies.load(std::sync::atomic::Ordering::Relaxed);
            // A plane's top and bottom parts receive nothing past its edges.
            let received = match rule.topology() {
                Topology::Plane => 2 * parts - 2,
                _ => 2 * parts,
            };
            assert_eq!(counted, received * exchanges, "{what}");
            // Every part joins the copies once a round (none are owed in the first).
            let joined = joins.load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(joined, parts * (exchanges + 1), "{what}");
            assert!(
                decomposed.details().contains("exchanged by host copies"),
                "{what}"
            );
        }
    }

    #[test]
    fn a_bounded_plane_has_no_halos_past_its_edges() {
        let slabs = Slabs::new::<Grid>(10, 9, 3, 2).unwrap().on(Topology::Plane);
        assert_eq!(slabs.halos(0), (0, 2));
        assert_eq!(slabs.halos(1), (2, 2));
        assert_eq!(slabs.halos(2), (2, 0));
        assert_eq!(slabs.extended(0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(slabs.extended(2).collect::<Vec<_>>(), [4, 5, 6, 7, 8]);
        let one = Slabs::new::<Grid>(10, 9, 1, 4).unwrap().on(Topology::Plane);
        assert_eq!(one.extended(0).count(), 9);
        let torus = Slabs::new::<Grid>(10, 9, 3, 2).unwrap();
        assert_eq!(torus.halos(0), (2, 2));
        assert_eq!(torus.extended(0).collect::<Vec<_>>(), [7, 8, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn engines_without_row_access_are_refused_with_their_name() {
        let err = Decomposed::new(vec![Box::new(Scalar::default())], 4)
            .err()
            .expect("cpu-scalar gives no row access")
            .to_string();
        assert!(err.contains("cpu-scalar cannot run as a slab"), "{err}");
    }

    #[test]
    fn parts_with_the_same_details_are_named_once() {
        let of = |texts: &[&str]| grouped(texts.iter().map(|t| t.to_string()));
        assert_eq!(of(&["plan A", "plan A", "plan A"]), "each of 3: plan A");
        assert_eq!(of(&["plan A", "plan B", "plan A"]), "2 × plan A; plan B");
        assert_eq!(of(&["plan A"]), "plan A");
    }
}
