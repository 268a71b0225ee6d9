//! SVG plots (plotters): latency and goodput against the offered step, and the per-second timeline.
use crate::analyze::model::*;
use plotters::prelude::*;

const W: u32 = 960;

struct Series {
    label: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
    dashed: bool,
}

struct Panel<'a> {
    title: String,
    x_label: &'a str,
    y_label: &'a str,
    x: (f64, f64),
    series: Vec<Series>,
    /// Horizontal reference lines (value, label).
    hlines: Vec<(f64, String)>,
    /// Vertical markers (x, label).
    vlines: Vec<(f64, String)>,
    legend: SeriesLabelPosition,
}

const BLUE: RGBColor = RGBColor(31, 119, 180);
const ORANGE: RGBColor = RGBColor(255, 127, 14);
const RED: RGBColor = RGBColor(214, 39, 40);
const GREEN: RGBColor = RGBColor(44, 160, 44);
const PURPLE: RGBColor = RGBColor(148, 103, 189);
const GREY: RGBColor = RGBColor(120, 120, 120);
const BROWN: RGBColor = RGBColor(140, 86, 75);
const PALETTE: [RGBColor; 6] = [BLUE, ORANGE, GREEN, PURPLE, BROWN, RED];

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Panel,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let mut ymax = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.1))
        .fold(0.0f64, f64::max);
    for (v, _) in &p.hlines {
        ymax = ymax.max(*v);
    }
    let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.1 };
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
        .map_err(e)?;
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
        .map_err(e)?;
    for (x, label) in &p.vlines {
        chart
            .draw_series(LineSeries::new(
                vec![(*x, 0.0), (*x, ymax)],
                GREY.stroke_width(1),
            ))
            .map_err(e)?;
        if !label.is_empty() {
            chart
                .draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, ymax * 0.97),
                    ("sans-serif", 12).into_font().color(&BLACK),
                )))
                .map_err(e)?;
        }
    }
    for (v, label) in &p.hlines {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(x0, *v), (x1, *v)],
                6,
                4,
                RED.stroke_width(2),
            ))
            .map_err(e)?
            .label(label.clone())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
    }
    for s in &p.series {
        let c = s.color;
        let style = c.stroke_width(2);
        if s.dashed {
            chart
                .draw_series(DashedLineSeries::new(s.points.clone(), 5, 4, style))
                .map_err(e)?
        } else {
            chart
                .draw_series(LineSeries::new(s.points.clone(), style))
                .map_err(e)?
        }
        .label(s.label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        if s.points.len() <= 30 {
            chart
                .draw_series(s.points.iter().map(|q| Circle::new(*q, 3, c.filled())))
                .map_err(e)?;
        }
    }
    chart
        .configure_series_labels()
        .position(p.legend.clone())
        .background_style(WHITE.mix(0.85))
        .border_style(GREY)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(e)?;
    Ok(())
}

fn render(height: u32, panels: &[Panel]) -> Result<String, String> {
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

/// Latency (p50/p95/p99) and goodput against the offered step, SLO line and knee marked.
pub fn steps_svg(r: &Report) -> Result<String, String> {
    let u = r.unit();
    let xs: Vec<f64> = r.steps.iter().map(|s| s.target as f64).collect();
    let x = (
        xs.iter().copied().fold(f64::MAX, f64::min),
        xs.iter().copied().fold(0.0, f64::max),
    );
    let pad = ((x.1 - x.0) * 0.05).max(1.0);
    let x = (x.0 - pad, x.1 + pad);
    let pts = |f: &dyn Fn(&StepReport) -> f64| {
        r.steps
            .iter()
            .map(|s| (s.target as f64, f(s)))
            .collect::<Vec<_>>()
    };
    let knee = r
        .knee
        .map(|k| (k as f64, format!(" knee {k}")))
        .into_iter()
        .collect::<Vec<_>>();
    let lat = Panel {
        title: format!(
            "Latency per step (requests started in the step), SLO p95 {} ms",
            r.params.slo_p95_ms
        ),
        x_label: if u == "VUs" { "VUs" } else { "offered rps" },
        y_label: "ms",
        x,
        series: vec![
            Series {
                label: "p50".into(),
                color: BLUE,
                points: pts(&|s| s.p50_ms),
                dashed: false,
            },
            Series {
                label: "p95".into(),
                color: ORANGE,
                points: pts(&|s| s.p95_ms),
                dashed: false,
            },
            Series {
                label: "p99".into(),
                color: PURPLE,
                points: pts(&|s| s.p99_ms),
                dashed: true,
            },
        ],
        hlines: vec![(
            r.params.slo_p95_ms,
            format!("SLO {} ms", r.params.slo_p95_ms),
        )],
        vlines: knee.clone(),
        legend: SeriesLabelPosition::UpperLeft,
    };
    let mut tput = vec![
        Series {
            label: "sent/s".into(),
            color: GREY,
            points: pts(&|s| s.sent_per_s),
            dashed: true,
        },
        Series {
            label: "ok/s (goodput)".into(),
            color: GREEN,
            points: pts(&|s| s.ok_per_s),
            dashed: false,
        },
    ];
    if u == "rps" {
        tput.insert(
            0,
            Series {
                label: "offered".into(),
                color: BROWN,
                points: pts(&|s| s.target as f64),
                dashed: true,
            },
        );
    }
    let goodput = Panel {
        title: "Throughput per step".into(),
        x_label: if u == "VUs" { "VUs" } else { "offered rps" },
        y_label: "requests/s",
        x,
        series: tput,
        hlines: vec![],
        vlines: knee,
        legend: SeriesLabelPosition::UpperLeft,
    };
    render(760, &[lat, goodput])
}

/// The run second by second: done/s, p95, in-flight and CPU per role, with step boundaries.
pub fn timeline_svg(r: &Report) -> Result<String, String> {
    let t = &r.timeline;
    let x = (
        t.first().map_or(0.0, |s| s.rel as f64),
        t.last().map_or(1.0, |s| s.rel as f64 + 1.0),
    );
    let first_start = r.steps.first().map_or(0, |s| s.start_ms);
    let vlines: Vec<(f64, String)> = r
        .steps
        .iter()
        .map(|s| {
            (
                (s.start_ms - first_start) as f64 / 1000.0,
                format!(" {}", s.target),
            )
        })
        .collect();
    let pts =
        |f: &dyn Fn(&SecondRow) -> f64| t.iter().map(|s| (s.rel as f64, f(s))).collect::<Vec<_>>();
    let mut panels = vec![
        Panel {
            title: "Requests per second (step starts marked with the target)".into(),
            x_label: "seconds since the first step",
            y_label: "requests/s",
            x,
            series: vec![
                Series {
                    label: "started/s".into(),
                    color: GREY,
                    points: pts(&|s| s.started as f64),
                    dashed: true,
                },
                Series {
                    label: "done/s".into(),
                    color: BLUE,
                    points: pts(&|s| s.done as f64),
                    dashed: false,
                },
                Series {
                    label: "ok/s".into(),
                    color: GREEN,
                    points: pts(&|s| s.ok as f64),
                    dashed: false,
                },
            ],
            hlines: vec![],
            vlines: vlines.clone(),
            legend: SeriesLabelPosition::LowerRight,
        },
        Panel {
            title: "Latency of the responses completed each second".into(),
            x_label: "seconds since the first step",
            y_label: "ms",
            x,
            series: vec![
                Series {
                    label: "p50".into(),
                    color: BLUE,
                    points: pts(&|s| s.p50_ms),
                    dashed: false,
                },
                Series {
                    label: "p95".into(),
                    color: ORANGE,
                    points: pts(&|s| s.p95_ms),
                    dashed: false,
                },
            ],
            hlines: vec![(
                r.params.slo_p95_ms,
                format!("SLO {} ms", r.params.slo_p95_ms),
            )],
            vlines: vlines.iter().map(|v| (v.0, String::new())).collect(),
            legend: SeriesLabelPosition::UpperLeft,
        },
    ];
    let roles = super::content::order_roles(t.iter().flat_map(|s| s.cpu_pct.keys()));
    if roles.is_empty() {
        panels.push(Panel {
            title: "Requests in flight (time-averaged per second)".into(),
            x_label: "seconds since the first step",
            y_label: "in flight",
            x,
            series: vec![Series {
                label: "in flight".into(),
                color: PURPLE,
                points: pts(&|s| s.inflight),
                dashed: false,
            }],
            hlines: vec![],
            vlines: vlines.iter().map(|v| (v.0, String::new())).collect(),
            legend: SeriesLabelPosition::UpperLeft,
        });
    } else {
        panels.push(Panel {
            title: "CPU per role (% of one core)".into(),
            x_label: "seconds since the first step",
            y_label: "% of one core",
            x,
            series: roles
                .iter()
                .enumerate()
                .map(|(i, role)| Series {
                    label: role.clone(),
                    color: PALETTE[i % PALETTE.len()],
                    points: t
                        .iter()
                        .filter_map(|s| Some((s.rel as f64, *s.cpu_pct.get(role)?)))
                        .collect(),
                    dashed: false,
                })
                .collect(),
            hlines: vec![],
            vlines: vlines.iter().map(|v| (v.0, String::new())).collect(),
            legend: SeriesLabelPosition::UpperLeft,
        });
    }
    render(1000, &panels)
}
