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
}

impl Series {
    pub fn solid(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            color,
            points,
            dashed: false,
            markers: false,
        }
    }
    pub fn markers(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
        Series {
            markers: true,
            ..Series::solid(label, color, points)
        }
    }
    pub fn dashed(label: &str, color: RGBColor, points: Vec<(f64, f64)>) -> Self {
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
        for (a, p) in areas.iter().zip(panels) {
            draw_panel(a, p)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Result<(), String> {
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
        .position(p.legend.clone())
        .background_style(WHITE.mix(0.85))
        .border_style(GREY)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())
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

    #[test]
    fn the_y_axis_clears_the_highest_point_or_reference_line() {
        assert_eq!(y_max(&panel(vec![], vec![])), 1.0);
        assert_eq!(y_max(&panel(vec![(0.0, 0.0)], vec![])), 1.0);
        assert!((y_max(&panel(vec![(0.0, 50.0)], vec![])) - 55.0).abs() < 1e-9);
        let slo = vec![(200.0, "SLO".to_string())];
        assert!((y_max(&panel(vec![(0.0, 50.0)], slo)) - 220.0).abs() < 1e-9);
    }
}
