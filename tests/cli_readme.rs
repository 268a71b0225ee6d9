//! The README's catalog table is the output of `perflab list --markdown`.
use assert_cmd::Command;

#[test]
fn readme_catalog_table_is_in_sync() {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .args(["list", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let readme = std::fs::read_to_string("README.md").unwrap();
    let begin = "<!-- catalog:begin -->\n";
    let start = readme
        .find(begin)
        .expect("README has the catalog:begin marker")
        + begin.len();
    let end = readme
        .find("<!-- catalog:end -->")
        .expect("README has the catalog:end marker");
    assert_eq!(
        &readme[start..end],
        table,
        "README catalog table is stale: regenerate it with `perflab list --markdown` between the markers"
    );
}
