//! The HTML page frame shared by report.html and index.html: escaping, the inline stylesheet
//! (the plots' colour-blind-safe palette, dark mode, 360-1920 px, A4 print), the document shell.

/// Escape text for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The plots' palette (src/report/plots.rs: blue, orange, green, purple, brown, red).
pub(crate) const PALETTE: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#d62728",
];

const STYLE: &str = r#"
:root{--fg:#1b1b1b;--bg:#fff;--muted:#5a5a5a;--line:#d0d0d0;--head:#f2f4f7;
--blue:#1f77b4;--orange:#ff7f0e;--green:#2ca02c;--red:#d62728;--failbg:#fde2e2;--okbg:#e3f1e3;--link:#1f5f99}
@media (prefers-color-scheme: dark){:root{--fg:#e6e6e6;--bg:#15171a;--muted:#a8a8a8;
--line:#3a3d42;--head:#23262b;--failbg:#4a1f1f;--okbg:#1f3a22;--link:#8cc4f0}}
*{box-sizing:border-box}
[hidden]{display:none!important}
td.cav,td.ver{white-space:normal;min-width:14em;font-size:.92em}
td.st.failed,td.st.aborted,td.st.unreadable{background:var(--failbg)}
td.st.running{background:var(--head)}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;padding:12px;max-width:1400px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.35rem;margin:.2em 0 .4em;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.4em 0 .4em;padding-bottom:.15em;border-bottom:2px solid var(--blue)}
h3{font-size:1rem;margin:.2em 0}
p,li{overflow-wrap:anywhere}
a{color:var(--link)}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:.85em}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--head);padding:8px;border-radius:4px}
.note{color:var(--muted);font-size:.85rem}
.verdict{border-left:6px solid var(--orange);padding:4px 12px;background:var(--head);border-radius:4px}
.verdict .lead{font-size:1.15rem;font-weight:600;margin:.3em 0}
.verdict .noknee{color:var(--fg)}
.verdict.v-regressed{border-left-color:var(--red)}.verdict.v-improved{border-left-color:var(--green)}
.verdict.v-same{border-left-color:var(--blue)}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
.pair>div{border:1px solid var(--line);border-radius:4px;padding:8px 12px}
.finding{border-left:6px solid var(--green)!important}
.injected{border-left:6px solid var(--red);background:var(--failbg);padding:4px 12px;font-weight:600;border-radius:4px}
.scroll{overflow-x:auto;max-width:100%;border:1px solid var(--line);border-radius:4px;margin:.4em 0}
table{border-collapse:collapse;font-size:.82rem;font-variant-numeric:tabular-nums}
th,td{padding:3px 5px;border-bottom:1px solid var(--line);white-space:nowrap}
th{background:var(--head);position:sticky;top:0}
td.l,th.l{text-align:left}td.r,th.r{text-align:right}
td.fail{background:var(--failbg);font-weight:600}
td.fail sup{color:var(--red);font-size:.75em;margin-left:2px}
tr.pass td.st{background:var(--okbg)}
figure.plot{margin:.5em 0;background:#fff;border:1px solid var(--line);border-radius:4px;padding:4px;overflow-x:auto}
.narrow{display:none}
@media (max-width:700px){.narrow{display:block}}
.ctx{color:var(--muted);margin:0 0 .6em;overflow-wrap:anywhere}
.warn{background:var(--failbg);border-radius:4px;padding:4px 8px;font-size:.92em}
ul.why{color:var(--muted);font-size:.85rem;padding-left:1.2em}
#steps td:first-child,#steps th:first-child,.exp td:first-child,.exp th:first-child{position:sticky;left:0;z-index:1;background:var(--bg)}
#steps th:first-child,.exp th:first-child{background:var(--head);z-index:2}
#steps td.fail:first-child{background:var(--failbg)}
table.wrap td{white-space:normal;overflow-wrap:anywhere}
figure.plot svg,figure.hist svg{display:block;width:100%;height:auto}
.meaning{border-left:6px solid var(--blue);padding:4px 12px;background:var(--head);border-radius:4px}
.meaning h2{border:none;margin-top:.2em}
ul.next{padding-left:1.2em}ul.next code{overflow-wrap:anywhere}
table.claims td{min-width:8em}
@media (max-width:420px){figure.plot{overflow-x:auto;padding:0;-webkit-overflow-scrolling:touch}figure.plot svg{width:640px;max-width:none}
#steps .scroll{max-width:calc(100vw - 16px);overflow-x:scroll;-webkit-overflow-scrolling:touch}}
details{margin:.4em 0}summary{cursor:pointer;font-weight:600}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:.6em 0}
.filters input,.filters select{font:inherit;padding:4px 6px;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:4px}
figure.hist{margin:.3em 0;max-width:640px}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:50%;vertical-align:middle;margin:0 3px}
@media (max-width:600px){body{padding:8px;font-size:14px}table{font-size:.78rem}.verdict .lead{font-size:1.02rem}}
@media print{@page{size:A4 landscape;margin:10mm}
body{max-width:none;padding:0;font-size:9pt;color:#000;background:#fff}
.scroll{overflow:visible;border:none}
table{font-size:7.5pt;page-break-inside:auto}
th,td{padding:1px 3px}th{white-space:normal}td.cav,td.ver{min-width:0}
thead{display:table-header-group}tr{break-inside:avoid}
figure.plot{break-inside:avoid}h2{break-after:avoid}
.filters{display:none}figure.plot svg{min-width:0}details>summary{list-style:none}}
"#;

/// A complete HTML document: `title` is plain text, `heading` and `body` are HTML; `script`
/// (inline, optional) runs after the body. No external resource of any kind.
pub(crate) fn page(title: &str, heading: &str, body: &str, script: Option<&str>) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<title>{}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<h1>{heading}</h1>\n{body}{}</body>\n</html>\n",
        esc(title),
        script
            .map(|s| format!("<script>{s}</script>\n"))
            .unwrap_or_default()
    )
}

/// The one way the pages build a link: relative path segments (a `..` climbs), each
/// percent-encoded but for `A-Z a-z 0-9 - . _ ~`, joined by `/` and prefixed `./`. A segment
/// cannot name a scheme (`javascript:`), a host, a query, a fragment or a markup character,
/// whatever folder or manifest it came from.
pub fn href<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> String {
    let mut out = String::from(".");
    for s in segments {
        out.push('/');
        for b in s.as_ref().bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }
}
