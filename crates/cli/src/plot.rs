//! `gol bench`'s plot: cell updates/s against grid side, one line per engine, both axes
//! logarithmic, as a self-contained SVG.

use std::fmt::Write;

/// One measurement.
pub struct Point {
    /// The engine (one line each).
    pub series: String,
    /// Grid side.
    pub size: usize,
    /// Cell updates per second.
    pub cups: f64,
}

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 220.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Powers of ten (or of two for sides) spanning `lo..=hi`, and the axis range they give.
fn decades(lo: f64, hi: f64, base: f64) -> (Vec<f64>, f64, f64) {
    let first = lo.log(base).floor();
    let last = hi.log(base).ceil().max(first + 1.0);
    let ticks = (first as i32..=last as i32).map(|e| base.powi(e)).collect();
    (ticks, base.powf(first), base.powf(last))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The plot of `points` under `title`.
pub fn svg(title: &str, points: &[Point]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/><text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        escape(title)
    );
    if points.is_empty() {
        out.push_str("</svg>\n");
        return out;
    }
    let sizes = points.iter().map(|p| p.size as f64);
    let rates = points.iter().map(|p| p.cups.max(1.0));
    let (x_ticks, x_lo, x_hi) = decades(
        sizes.clone().fold(f64::INFINITY, f64::min),
        sizes.fold(0.0, f64::max),
        2.0,
    );
    let (y_ticks, y_lo, y_hi) = decades(
        rates.clone().fold(f64::INFINITY, f64::min),
        rates.fold(0.0, f64::max),
        10.0,
    );
    let (plot_w, plot_h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |v: f64| LEFT + (v / x_lo).ln() / (x_hi / x_lo).ln() * plot_w;
    let y = |v: f64| TOP + plot_h - (v / y_lo).ln() / (y_hi / y_lo).ln() * plot_h;
    for &t in &x_ticks {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#ddd"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(t),
            TOP + plot_h,
            TOP + plot_h + 18.0,
            t as u64
        );
    }
    for &t in &y_ticks {
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{4:.0e}</text>"##,
            y(t),
            LEFT + plot_w,
            LEFT - 6.0,
            y(t) + 4.0,
            t
        );
    }
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/><text x="{0}" y="{1}" text-anchor="middle">grid side (cells)</text><text transform="translate(18 {2}) rotate(-90)" text-anchor="middle">cell updates per second</text>"##,
        LEFT + plot_w / 2.0,
        HEIGHT - 16.0,
        TOP + plot_h / 2.0
    );
    let mut series: Vec<&str> = Vec::new();
    for p in points {
        if !series.contains(&p.series.as_str()) {
            series.push(&p.series);
        }
    }
    for (n, name) in series.iter().enumerate() {
        let colour = COLOURS[n % COLOURS.len()];
        let mut line: Vec<&Point> = points.iter().filter(|p| p.series == *name).collect();
        line.sort_by_key(|p| p.size);
        let coords: Vec<String> = line
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.size as f64), y(p.cups.max(1.0))))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            coords.join(" ")
        );
        for c in &coords {
            let (cx, cy) = c.split_once(',').expect("x,y");
            let _ = writeln!(
                out,
                r#"<circle cx="{cx}" cy="{cy}" r="3" fill="{colour}"/>"#
            );
        }
        let ly = TOP + 10.0 + 18.0 * n as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{0}" y1="{ly}" x2="{1}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{2}" y="{3}">{4}</text>"#,
            LEFT + plot_w + 12.0,
            LEFT + plot_w + 32.0,
            LEFT + plot_w + 38.0,
            ly + 4.0,
            escape(name)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn one_line_per_engine_with_a_point_per_size() {
        let points: Vec<Point> = [("a", 256, 1e9), ("a", 1024, 4e9), ("b", 256, 2e10)]
            .into_iter()
            .map(|(s, size, cups)| Point {
                series: s.into(),
                size,
                cups,
            })
            .collect();
        let svg = svg("t <&>", &points);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains("t &lt;&amp;&gt;"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Axis ticks: sides 256 and 1024 lie on powers of two; rates span 1e9..1e11.
        assert!(svg.contains(">1024<") && svg.contains(">1e11<"), "{svg}");
    }

    #[test]
    fn nothing_measured_still_gives_a_picture() {
        assert!(svg("empty", &[]).contains("</svg>"));
    }
}
