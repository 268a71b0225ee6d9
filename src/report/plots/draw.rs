//! Drawing a stack of line-chart panels into one SVG: axes, series, reference lines, legend.
use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

const W: u32 = 960;

pub(super) const BLUE: RGBColor = RGBColor(31, 119, 180);
pub(super) const ORANGE: RGBColor = RGBColor(255, 127, 14);
pub(super) const RED: RGBColor = RGBColor(214, 39, 40);
pub(super) const GREEN: RGBColor = RGBColor(44, 160, 44);
pub(super) const PURPLE: RGBColor = RGBColor(148, 103, 189);
pub(super) const GREY: RGBColor = RGBColor(120, 120, 120);
pub(super) const BROWN: RGBColor = RGBColor(140, 86, 75);
pub(super) const PALETTE: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, BROWN, RED];

/// One line of a panel.
pub(super) struct Series {
    pub label: String,
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
    /// Hollow markers only, no line (the refinement's probes).
    pub markers: bool,
    /// Filled markers only, no line (measured steps: nothing was measured between them);
    /// `Some(true)`: triangles, `Some(false)`: dots.
    pub points_only: Option<bool>,
}

impl Series {
    pub(crate) fn solid(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            color,
            points,
            dashed: false,
            markers: false,
            points_only: None,
        }
    }
    /// Filled dots at the points, no line between them.
    pub(crate) fn dots(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            points_only: Some(false),
            ..Series::solid(label, color, points)
        }
    }
    /// Filled triangles at the points, no line between them.
    pub(crate) fn triangles(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            points_only: Some(true),
            ..Series::solid(label, color, points)
        }
    }
    pub(crate) fn markers(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            markers: true,
            ..Series::solid(label, color, points)
        }
    }
    pub(crate) fn dashed(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            dashed: true,
            ..Series::solid(label, color, points)
        }
    }
}

/// One chart: its axes, lines and markers.
pub(super) struct Panel {
    pub title: String,
    pub x_label: &'static str,
    pub y_label: &'static str,
    pub x: (f64, f64),
    pub series: Vec<Series>,
    /// Horizontal reference lines (value, label).
    pub hlines: Vec<(f64, String)>,
    /// Vertical markers (x, label).
    pub vlines: Vec<(f64, String)>,
    pub legend: SeriesLabelPosition,
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The panels stacked top to bottom in an SVG `height` pixels high.
pub(super) fn render(height: u32, panels: &[Panel]) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let areas = root.split_evenly((panels.len(), 1));
        let panel_h = height as f64 / panels.len().max(1) as f64;
        for (a, p) in areas.iter().zip(panels) {
            draw_panel(a, p, panel_h)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    panel_h: f64,
) -> Result<(), String> {
    let ymax = y_max(p);
    let (x0, x1) = if p.x.1 > p.x.0 {
        p.x
    } else {
        (p.x.0 - 1.0, p.x.0 + 1.0)
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, 0.0..ymax)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(p.x_label)
        .y_desc(p.y_label)
        .light_line_style(RGBColor(235, 235, 235))
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| {
            if ymax < 10.0 {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            }
        })
        .label_style(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())?;
    draw_vlines(&mut chart, &p.vlines, ymax)?;
    draw_hlines(&mut chart, &p.hlines, (x0, x1))?;
    draw_series(&mut chart, &p.series)?;
    chart
        .configure_series_labels()
        .position(legend_position(p, (x0, x1), ymax, panel_h))
        .background_style(WHITE.mix(0.85))
        .border_style(GREY)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())
}

/// Where the legend hides the least: the panel's own corner when no line, point or marker
/// label runs under it, else the corner (or edge middle) covering the fewest; a marker's
/// label (the knee) weighs as much as fifty points of a line.
fn legend_position(
    p: &Panel,
    (x0, x1): (f64, f64),
    ymax: f64,
    panel_h: f64,
) -> SeriesLabelPosition {
    use SeriesLabelPosition::*;
    // The plotting area in pixels (axes' label areas, caption and margins off) and plotters'
    // legend box as a share of it: 13 px text about 7.5 px a character, 17 px a row, a 30 px
    // swatch, 10 px padding, 5 px from the edges.
    let (w, h) = (W as f64 - 80.0, (panel_h - 80.0).max(40.0));
    let rows = p.series.len() + p.hlines.len();
    let chars = p
        .series
        .iter()
        .map(|s| s.label.chars().count())
        .chain(p.hlines.iter().map(|l| l.1.chars().count()))
        .max()
        .unwrap_or(0);
    let (bw, bh) = (
        (50.0 + 7.5 * chars as f64) / w,
        (rows as f64 * 17.0 + 20.0) / h,
    );
    let (mx, my) = (5.0 / w, 5.0 / h);
    let under = marks_in_panel(p, (x0, x1), ymax, w);
    let covered = |pos: &SeriesLabelPosition| -> u32 {
        let l = match pos {
            UpperLeft | MiddleLeft | LowerLeft => mx,
            UpperMiddle | MiddleMiddle | LowerMiddle => 0.5 - bw / 2.0,
            _ => 1.0 - mx - bw,
        };
        let b = match pos {
            UpperLeft | UpperMiddle | UpperRight => 1.0 - my - bh,
            MiddleLeft | MiddleMiddle | MiddleRight => 0.5 - bh / 2.0,
            _ => my,
        };
        under
            .iter()
            .filter(|(x, y, _)| *x >= l && *x <= l + bw && *y >= b && *y <= b + bh)
            .map(|q| q.2)
            .sum()
    };
    let mut best = (p.legend.clone(), covered(&p.legend));
    for pos in [
        UpperLeft,
        UpperRight,
        LowerRight,
        LowerLeft,
        UpperMiddle,
        LowerMiddle,
        MiddleLeft,
        MiddleRight,
    ] {
        let c = covered(&pos);
        if c < best.1 {
            best = (pos, c);
        }
    }
    best.0
}

/// What a legend could hide, as (x, y) shares of the plotting area with a weight: each line
/// sampled across the panel, its points, the reference lines, and the markers' labels (`w`:
/// the area's width in pixels, for the labels' length).
fn marks_in_panel(p: &Panel, (x0, x1): (f64, f64), ymax: f64, w: f64) -> Vec<(f64, f64, u32)> {
    let fx = |x: f64| (x - x0) / (x1 - x0);
    let mut under: Vec<(f64, f64, u32)> = Vec::new();
    for s in &p.series {
        // Markers alone draw no line between their points.
        let joined = if s.points_only.is_some() { 0 } else { 2 };
        for win in s.points.windows(2).filter(|_| joined > 0) {
            let ((ax, ay), (bx, by)) = (win[0], win[1]);
            let n = ((fx(bx) - fx(ax)).abs() * 200.0).ceil().max(1.0) as usize;
            for i in 0..=n {
                let t = i as f64 / n as f64;
                under.push((fx(ax + (bx - ax) * t), (ay + (by - ay) * t) / ymax, 1));
            }
        }
        under.extend(s.points.iter().map(|q| (fx(q.0), q.1 / ymax, 1)));
    }
    for (v, _) in &p.hlines {
        under.extend((0..=200).map(|i| (i as f64 / 200.0, v / ymax, 1)));
    }
    for (x, label) in p.vlines.iter().filter(|v| !v.1.is_empty()) {
        let len = label.chars().count() as f64 * 7.0 / w;
        for i in 0..=4 {
            under.push((fx(*x) + len * i as f64 / 4.0, 0.96, 50));
        }
    }
    under
}

/// The y axis' top: 10 % above the highest point or reference line (1 when all are zero).
fn y_max(p: &Panel) -> f64 {
    let ymax = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.1))
        .chain(p.hlines.iter().map(|h| h.0))
        .fold(0.0f64, f64::max);
    if ymax <= 0.0 { 1.0 } else { ymax * 1.1 }
}

/// Grey vertical markers, labelled near the top.
fn draw_vlines<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    vlines: &[(f64, String)],
    ymax: f64,
) -> Result<(), String> {
    for (x, label) in vlines {
        chart
            .draw_series(LineSeries::new(
                vec![(*x, 0.0), (*x, ymax)],
                GREY.stroke_width(1),
            ))
            .map_err(|e| e.to_string())?;
        if !label.is_empty() {
            chart
                .draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, ymax * 0.97),
                    ("sans-serif", 12).into_font().color(&BLACK),
                )))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Red dashed reference lines across the panel, in the legend.
fn draw_hlines<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    hlines: &[(f64, String)],
    (x0, x1): (f64, f64),
) -> Result<(), String> {
    for (v, label) in hlines {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x0, *v), (x1, *v)],
                6,
                4,
                RED.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?
            .label(label.clone())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
    }
    Ok(())
}

/// The data lines, with dots when there are few points.
fn draw_series<DB: DrawingBackend>(chart: &mut Chart<DB>, series: &[Series]) -> Result<(), String> {
    for s in series {
        let c = s.color;
        let style = c.stroke_width(2);
        if let Some(triangle) = s.points_only {
            draw_points(chart, s, triangle)?;
            continue;
        }
        if s.markers {
            chart
                .draw_series(s.points.iter().map(|q| Circle::new(*q, 6, style)))
                .map_err(|e| e.to_string())?
                .label(s.label.clone())
                .legend(move |(x, y)| Circle::new((x + 9, y), 5, c.stroke_width(2)));
            continue;
        }
        if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(s.points.clone(), 5, 4, style))
                .map_err(|e| e.to_string())?
        } else {
            chart
                .draw_series(LineSeries::new(s.points.clone(), style))
                .map_err(|e| e.to_string())?
        }
        .label(s.label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        if s.points.len() <= 30 {
            chart
                .draw_series(s.points.iter().map(|q| Circle::new(*q, 3, c.filled())))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// A series as filled markers only (dots or triangles), in the legend as its marker.
fn draw_points<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    s: &Series,
    triangle: bool,
) -> Result<(), String> {
    let c = s.color;
    let label = s.label.clone();
    if triangle {
        chart
            .draw_series(
                s.points
                    .iter()
                    .map(|q| TriangleMarker::new(*q, 6, c.filled())),
            )
            .map_err(|e| e.to_string())?
            .label(label)
            .legend(move |(x, y)| TriangleMarker::new((x + 9, y), 6, c.filled()));
    } else {
        chart
            .draw_series(s.points.iter().map(|q| Circle::new(*q, 4, c.filled())))
            .map_err(|e| e.to_string())?
            .label(label)
            .legend(move |(x, y)| Circle::new((x + 9, y), 4, c.filled()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(points: Vec<(f64, f64)>, hlines: Vec<(f64, String)>) -> Panel {
        Panel {
            title: String::new(),
            x_label: "",
            y_label: "",
            x: (0.0, 1.0),
            series: vec![Series::solid("s", BLUE, points)],
            hlines,
            vlines: vec![],
            legend: SeriesLabelPosition::UpperLeft,
        }
    }

    fn corner(p: &Panel) -> String {
        format!("{:?}", legend_position(p, p.x, y_max(p), 380.0))
    }

    #[test]
    fn the_legend_moves_off_the_lines_and_the_knee_label() {
        // A rising line leaves the upper left free: the panel's own corner stays.
        let mut p = panel(vec![(0.0, 0.0), (1.0, 100.0)], vec![]);
        assert_eq!(corner(&p), "UpperLeft");
        // A falling line runs under the upper left: the legend moves to the upper right.
        p.series[0].points = vec![(0.0, 100.0), (1.0, 0.0)];
        assert_eq!(corner(&p), "UpperRight");
        // A knee label at the upper right, the line falling: the legend goes low, to the
        // corner the line leaves free.
        p.vlines = vec![(0.9, " knee 50".into())];
        assert_eq!(corner(&p), "LowerLeft");
        // Lines along every corner (a rising one and a falling one): an edge's middle.
        p.series
            .push(Series::solid("t", GREEN, vec![(0.0, 0.0), (1.0, 100.0)]));
        p.vlines.clear();
        assert_eq!(corner(&p), "UpperMiddle");
    }

    #[test]
    fn the_y_axis_clears_the_highest_point_or_reference_line() {
        assert_eq!(y_max(&panel(vec![], vec![])), 1.0);
        assert_eq!(y_max(&panel(vec![(0.0, 0.0)], vec![])), 1.0);
        assert!((y_max(&panel(vec![(0.0, 50.0)], vec![])) - 55.0).abs() < 1e-9);
        let slo = vec![(200.0, "SLO".to_string())];
        assert!((y_max(&panel(vec![(0.0, 50.0)], slo)) - 220.0).abs() < 1e-9);
    }
}
