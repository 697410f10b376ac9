//! f16 checkpoints (`checkpoint::to_bytes_f16`, `attnlab convert --f16`): every weight reads back
//! as its IEEE half rounding, the file is about half the size, a weight beyond f16's range is
//! refused instead of written as infinity, and the CLI refuses `--f16` outside convert.

use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::Device;
use std::process::Command;

fn tiny(variant: Variant) -> GptConfig {
    GptConfig {
        n_layer: 2,
        n_head: 2,
        n_embd: 16,
        ..GptConfig::assignment(variant, 12)
    }
}

fn values(model: &Gpt) -> Vec<(String, Vec<f32>)> {
    model
        .params
        .iter()
        .map(|p| {
            let v = pollster::block_on(p.var.value().to_vec_f32()).expect("read back");
            (p.name.clone(), v)
        })
        .collect()
}

#[test]
fn f16_reads_back_as_the_half_rounding_of_every_weight() {
    let dev = Device::cpu();
    for variant in [Variant::Vanilla, Variant::Synthesizer] {
        let model = Gpt::new(&dev, tiny(variant), 7).expect("model");
        let full = pollster::block_on(checkpoint::to_bytes(&model, "□⁇abcdefghij")).expect("f32");
        let half =
            pollster::block_on(checkpoint::to_bytes_f16(&model, "□⁇abcdefghij")).expect("f16");
        assert!(
            (half.len() as f64) < 0.6 * full.len() as f64,
            "{variant:?}: f16 file {} bytes vs f32 {}",
            half.len(),
            full.len()
        );
        let (back, header) =
            checkpoint::from_bytes(&dev, &half, None, "half.safetensors").expect("read f16");
        assert_eq!(header.cfg.n_embd, 16);
        let mut changed = 0;
        for ((name, want), (_, got)) in values(&model).iter().zip(values(&back).iter()) {
            for (w, g) in want.iter().zip(got) {
                let rounded = half::f16::from_f32(*w).to_f32();
                assert_eq!(
                    rounded.to_bits(),
                    g.to_bits(),
                    "{variant:?} {name}: {w} read back as {g}"
                );
                changed += (rounded != *w) as usize;
            }
        }
        assert!(
            changed > 0,
            "{variant:?}: no weight changed by rounding, so the test shows nothing"
        );
    }
}

#[test]
fn a_weight_beyond_f16_range_is_refused() {
    let dev = Device::cpu();
    let model = Gpt::new(&dev, tiny(Variant::Vanilla), 7).expect("model");
    let p = &model.params[0];
    let n = p.var.shape().iter().product::<usize>();
    let big = attnlab::Tensor::from_f32(&dev, p.var.shape(), &vec![1.0e5; n]).expect("tensor");
    p.var.value().copy_from(0, &big, 0, n).expect("copy");
    let e = pollster::block_on(checkpoint::to_bytes_f16(&model, "□⁇abcdefghij")).unwrap_err();
    assert!(e.to_string().contains("beyond f16's range"), "{e}");
}

#[test]
fn the_cli_refuses_f16_outside_convert() {
    let out = Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(["evaluate", "vanilla", "--f16", "--tiny"])
        .output()
        .expect("run attnlab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--f16 is for convert only"),
        "{err}"
    );
}
