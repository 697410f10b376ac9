//! The page's self-checks, run natively: every family reports rows and every row passes.

#[test]
fn every_self_check_passes_natively() {
    let g = attnlab::Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
    let rows = pollster::block_on(attnlab::checks::run_all(&g)).unwrap();
    for r in &rows {
        println!(
            "{:<14} {:<50} err {:.2e} tol {:.0e} {}",
            r.op,
            r.case,
            r.max_err,
            r.tol,
            if r.passed { "ok" } else { "FAIL" }
        );
    }
    let families: std::collections::BTreeSet<_> = rows.iter().map(|r| r.op.as_str()).collect();
    assert!(families.len() >= 10, "families with checks: {families:?}");
    assert!(rows.iter().all(|r| r.passed), "some self-checks failed");
}
