//! The GPT's parameters match the assignment's: names, counts and decay groups.

use attnlab::model::params::{count, decays, layout};
use attnlab::model::{GptConfig, Variant};

#[test]
fn parameter_counts_match_the_reference() {
    assert_eq!(
        count(&GptConfig::assignment(Variant::Vanilla, 256)),
        3_323_392
    );
    assert_eq!(
        count(&GptConfig::assignment(Variant::Synthesizer, 256)),
        3_076_988
    );
}

#[test]
fn names_shapes_and_decay_groups_follow_the_state_dict() {
    let l = layout(&GptConfig::assignment(Variant::Synthesizer, 256));
    let get = |n: &str| {
        l.iter()
            .find(|(name, _, _)| name == n)
            .map(|(_, s, _)| s.clone())
    };
    assert_eq!(get("pos_emb"), Some(vec![1, 128, 256]));
    assert_eq!(get("blocks.0.attn.w2"), Some(vec![32, 127]));
    assert_eq!(get("blocks.3.attn.b2"), Some(vec![127]));
    assert_eq!(get("blocks.1.mlp.0.weight"), Some(vec![1024, 256]));
    assert_eq!(get("head.weight"), Some(vec![256, 256]));
    assert_eq!(get("head.bias"), None);
    for (name, want) in [
        ("blocks.0.ln1.weight", true),
        ("blocks.0.attn.w2", true),
        ("blocks.0.attn.b2", true),
        ("blocks.0.attn.w1.bias", false),
        ("tok_emb.weight", true),
        ("pos_emb", true),
        ("ln_f.bias", false),
    ] {
        assert_eq!(decays(name), want, "{name}");
    }
}
