//! The history page in headless Chromium: 45 nights made from exp1's recorded round (a 9 %
//! step with php8.4-fpm's version at night 31), its page written by `perflab history --pages`'s
//! writer. Nothing but the file is requested, the console stays empty, the change point and
//! the version change are in the rendered DOM with the package named, and the page is not
//! blank at 360 and 1280 px.
use crate::browser_support::{load, png_colours, screenshot};
use crate::history_support::series;

#[test]
fn history_page_in_headless_chromium() {
    let _serial = crate::serial();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let runs = series(&out);
    let req = perflab::history::Request {
        experiments: vec!["exp1".into()],
        ..Default::default()
    };
    let h = perflab::history::gather(&out, &req, None);
    let pages = perflab::html::history_page::write(&out, &h).unwrap();
    assert_eq!(pages, [out.join("history/exp1.html")]);
    let dom = load(&pages[0], "", tmp.path());
    assert_eq!(dom.matches("<line class=\"cp\"").count(), 2, "CPU and p95");
    let plots = dom.matches("<figure class=\"hist\">").count();
    assert_eq!(plots, 5, "4 figures and the claim's value");
    assert_eq!(
        dom.matches("<line class=\"ver\"").count(),
        plots,
        "one per plot"
    );
    assert!(dom.contains(&format!("exp1/{}", runs[30])));
    assert!(dom.contains("php-fpm.dpkg:php8.4-fpm 8.4.27-1~deb13u1 → 8.4.28-1~deb13u1"));
    let index = load(&out.join("index.html"), "", tmp.path());
    assert!(index.contains("href=\"./history/exp1.html\""));
    for w in [360, 1280] {
        let n = png_colours(&screenshot(&pages[0], w, tmp.path()));
        assert!(n > 8, "screenshot at {w} px has {n} colours: blank?");
    }
}
