//! The page's self-checks, run natively on each backend: every family reports rows and every row
//! passes.

use crate::backends;

#[test]
fn every_self_check_passes_natively() {
    for g in backends::devices() {
        check(&g);
    }
}

fn check(g: &std::rc::Rc<attnlab::Device>) {
    let kind = g.kind();
    let rows = pollster::block_on(attnlab::ops::run_checks(g)).unwrap();
    for r in &rows {
        println!(
            "{kind} {:<14} {:<50} err {:.2e} tol {:.0e} {}",
            r.op,
            r.case,
            r.max_err,
            r.tol,
            if r.passed { "ok" } else { "FAIL" }
        );
    }
    let families: std::collections::BTreeSet<_> = rows.iter().map(|r| r.op.as_str()).collect();
    assert!(
        families.len() >= 10,
        "{kind}: families with checks: {families:?}"
    );
    assert!(
        rows.iter().all(|r| r.passed),
        "{kind}: some self-checks failed"
    );
}
