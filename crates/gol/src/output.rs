//! What a run writes: the formats by extension, checked before the run starts, and pictures and
//! animations of the world ([`gol_core::picture`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use gol_core::picture::{self, Axis, Frame, Gif, View};
use gol_core::replace::Staged;

use crate::dimension::Dimension;
use crate::error::{invalid, Result};
use crate::setup::Dim;

/// The formats a world is written in, by extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// RLE, the whole torus (2D).
    Rle,
    /// Plaintext `.cells`, the whole grid (2D).
    Cells,
    /// Golly's macrocell `.mc`, the whole torus (2D).
    Macrocell,
    /// A picture: a view of a grid, or a cube's projection ([`Picture`]).
    Png,
    /// An animation of pictures taken during a run.
    Gif,
    /// The 3D contest's `.bin` cube.
    Bin,
}

impl Format {
    /// The format `path` names for a world of dimension `dim`; an unknown extension, or one of
    /// the other dimension, is refused naming those that are known.
    pub fn of(path: &Path, dim: Dim) -> Result<Format> {
        // `x.rle.gz` is RLE, written compressed (RLE, .cells and .mc only, below).
        let gzipped = gol_core::pattern::gzipped(path);
        let format = match gol_core::pattern::extension(path).as_deref() {
            Some("rle") => Format::Rle,
            Some("cells") => Format::Cells,
            Some("mc") => Format::Macrocell,
            Some("png") => Format::Png,
            Some("gif") => Format::Gif,
            Some("bin") => Format::Bin,
            _ => invalid!(
                "{}: unknown output format; {}",
                path.display(),
                Format::known(dim)
            ),
        };
        let fits = match dim {
            Dim::Two => format != Format::Bin,
            Dim::Three => matches!(format, Format::Bin | Format::Png | Format::Gif),
        };
        if !fits {
            let what = match format {
                Format::Bin => ".bin files hold 3D cubes",
                _ => "RLE, .cells and .mc files hold 2D grids",
            };
            invalid!("{}: {what}; {}", path.display(), Format::known(dim));
        }
        if gzipped && !matches!(format, Format::Rle | Format::Cells | Format::Macrocell) {
            invalid!(
                "{}: .gz applies to .rle, .cells and .mc outputs",
                path.display()
            );
        }
        Ok(format)
    }

    /// [`Format::of`], and a check that `path` can be written: a probe file made beside it and
    /// removed, so that a missing or read-only folder is found before a run rather than after.
    pub fn writable(path: &Path, dim: Dim) -> Result<Format> {
        let format = Format::of(path, dim)?;
        probe(path)?;
        Ok(format)
    }

    /// The formats of a dimension, for messages.
    fn known(dim: Dim) -> &'static str {
        match dim {
            Dim::Two => "2D worlds are written as .rle, .cells, .mc, .png or .gif (.rle.gz, .cells.gz, .mc.gz compressed)",
            Dim::Three => "3D worlds are written as .bin, .png or .gif",
        }
    }
}

/// How a world is drawn: which view of a grid, or along which axis a cube is projected, and
/// how many pixels a cell (see [`gol_core::picture`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Picture {
    /// The cells a grid's picture shows (wrapping round the torus); the whole grid by default.
    pub view: Option<View>,
    /// Pixels a cell; by default enough to make a small world at least 512 pixels wide.
    pub scale: Option<u32>,
    /// The axis a cube's picture sums along.
    pub axis: Axis,
    /// The colours the rule gives its states, shown where a picture shows whole cells.
    pub colours: Option<&'static gol_core::picture::StateColours>,
}

impl Picture {
    /// Refuses what does not apply to dimension `dim` (a view of a cube, an axis of a grid).
    pub fn check(&self, dim: Dim) -> Result<()> {
        match dim {
            Dim::Three if self.view.is_some() => {
                invalid!(
                    "a view applies to 2D grids; a cube's picture is its projection along an axis"
                )
            }
            Dim::Two if self.axis != Axis::default() => {
                invalid!("an axis applies to 3D cubes; a grid's picture shows a view of it")
            }
            _ => Ok(()),
        }
    }
}

/// Checks that `path` can be written, by making and removing the temporary file a write would
/// make beside it; the file itself is left as it is.
pub fn probe(path: &Path) -> Result<()> {
    Ok(Staged::create(path).map(drop)?)
}

/// Refuses files that name the same file, links followed (a run's input, output and
/// checkpoint: `--checkpoint` over `--input` would overwrite the pattern, `--output` over
/// `--checkpoint` lose the checkpoint): each is given with the name the user knows it by.
pub fn check_distinct(files: &[(&str, &Path)]) -> Result<()> {
    // The file a name comes to: links followed, the folder made absolute (the file itself
    // need not exist yet).
    let identity = |path: &Path| -> PathBuf {
        let written = gol_core::replace::written_path(path);
        if let Ok(full) = std::fs::canonicalize(&written) {
            return full;
        }
        let dir = match written.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        written
            .file_name()
            .map_or(dir.clone(), |name| dir.join(name))
    };
    let named: Vec<(&str, &Path, PathBuf)> = files
        .iter()
        .map(|&(flag, path)| (flag, path, identity(path)))
        .collect();
    for (i, (a, a_path, a_is)) in named.iter().enumerate() {
        for (b, b_path, b_is) in &named[i + 1..] {
            if a_is == b_is {
                invalid!(
                    "{a} {} and {b} {} are the same file ({}): give each its own",
                    a_path.display(),
                    b_path.display(),
                    a_is.display()
                );
            }
        }
    }
    Ok(())
}

/// A GIF animation written frame by frame as a run goes.
pub struct Animation {
    path: PathBuf,
    picture: Picture,
    /// The file, under a temporary name until [`Animation::finish`] puts it in place.
    staged: Staged,
    out: Option<BufWriter<File>>,
    gif: Option<Gif<BufWriter<File>>>,
}

/// Hundredths of a second each frame of an animation shows.
pub const FRAME_DELAY: u16 = 5;

impl Animation {
    /// An animation to be written to `path` (its temporary file created now, so that a bad
    /// path fails before the run; `path` itself is replaced only when the animation is
    /// finished), drawing each frame as `picture` says.
    pub fn create(path: &Path, picture: Picture) -> Result<Animation> {
        let staged = Staged::create(path)?;
        let file = staged.file().try_clone().map_err(|e| gol_core::Error::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        Ok(Animation {
            path: path.to_path_buf(),
            picture,
            staged,
            out: Some(BufWriter::new(file)),
            gif: None,
        })
    }

    /// Appends the picture of `world`.
    pub fn add<W: Dimension>(&mut self, world: &W) -> Result<()> {
        let frame = world.picture(&self.picture)?;
        self.add_frame(frame)
    }

    /// Appends `frame` (the first frame sets the animation's size; later ones must have it).
    pub fn add_frame(&mut self, frame: Frame) -> Result<()> {
        if self.gif.is_none() {
            let out = self
                .out
                .take()
                .expect("the file is open until the first frame");
            self.gif = Some(
                Gif::new(out, frame.width, frame.height, FRAME_DELAY)
                    .map_err(|e| self.io_error(e))?,
            );
        }
        let gif = self.gif.as_mut().expect("made above");
        gif.add(&frame).map_err(|e| self.io_error(e))
    }

    /// Ends the animation and flushes the file.
    pub fn finish(mut self) -> Result<()> {
        if let Some(gif) = self.gif.take() {
            let mut out = gif.finish().map_err(|e| self.io_error(e))?;
            out.flush().map_err(|e| self.io_error(e))?;
        }
        Ok(self.staged.commit(false)?)
    }

    fn io_error(&self, source: std::io::Error) -> crate::Error {
        gol_core::Error::Io {
            path: self.path.clone(),
            source,
        }
        .into()
    }
}

/// Writes `frame` to `path` as a PNG.
pub fn write_png(path: &Path, frame: &Frame) -> Result<()> {
    let io = |source| gol_core::Error::Io {
        path: path.to_path_buf(),
        source,
    };
    // Under a temporary name, then renamed: a write cut short keeps the file it would replace.
    Ok(gol_core::replace::replace(path, false, |file, _| {
        let mut out = BufWriter::new(file);
        picture::write_png(&mut out, frame)
            .and_then(|()| out.flush())
            .map_err(io)
    })?)
}
