//! CI-size learning test: a tiny ViT trained for a few seconds on the CPU backend on generated
//! digits clearly beats chance (10%) on a held-out generated set, and its checkpoint round-trips.

use attnlab::data::digits;
use attnlab::model::vit::{checkpoint, evaluate, Vit, VitConfig, VitTrainConfig, VitTrainer};
use attnlab::Device;

#[test]
fn a_tiny_vit_should_learn_generated_digits() {
    let dev = Device::cpu();
    let cfg = VitConfig {
        patch: 7,
        n_layer: 1,
        n_head: 2,
        n_embd: 32,
        ..VitConfig::small()
    };
    let steps = 400;
    let tc = VitTrainConfig {
        batch: 32,
        learning_rate: 3e-3,
        ..VitTrainConfig::default_for(steps)
    };
    let mut tr = VitTrainer::new(Vit::new(&dev, cfg, 1).unwrap(), tc).unwrap();
    let mut first = None;
    let mut last = 0.0;
    for s in 0..steps {
        let (x, y) = digits::batch(100, s * 32, 32);
        let loss = tr.step(&x, &y).unwrap().read().unwrap()[0];
        first.get_or_insert(loss);
        last = loss;
    }
    let (tx, ty) = digits::batch(101, 0, 500);
    let (acc, confusion) = pollster::block_on(evaluate(&tr.model, &tx, &ty)).unwrap();
    println!("loss {first:?} -> {last}, held-out accuracy {acc}");
    assert!(last < first.unwrap() * 0.7, "loss {first:?} -> {last}");
    assert!(acc > 0.5, "held-out accuracy {acc} (chance is 0.1)");
    assert_eq!(confusion.iter().flatten().sum::<u32>(), 500);

    // The checkpoint gives back the same predictions.
    let bytes = pollster::block_on(checkpoint::to_bytes(&tr.model, &[])).unwrap();
    let (back, _) = checkpoint::from_bytes(&dev, &bytes, "round trip").unwrap();
    let (acc2, confusion2) = pollster::block_on(evaluate(&back, &tx, &ty)).unwrap();
    assert_eq!((acc, confusion), (acc2, confusion2));
}

#[test]
fn vit_checkpoints_refuse_bad_input() {
    let dev = Device::cpu();
    let model = Vit::new(
        &dev,
        VitConfig {
            n_embd: 8,
            n_head: 2,
            n_layer: 1,
            ..VitConfig::small()
        },
        0,
    )
    .unwrap();
    let good = pollster::block_on(checkpoint::to_bytes(&model, &[])).unwrap();
    let err = |b: &[u8]| {
        checkpoint::from_bytes(&dev, b, "f.safetensors")
            .err()
            .unwrap()
            .to_string()
    };
    assert!(err(&good[..good.len() / 2]).contains("f.safetensors"));
    assert!(err(b"not a checkpoint").contains("f.safetensors is text, not a model file"));
    assert!(err(b"").contains("f.safetensors is empty (0 bytes)"));
    // Bytes that are neither text nor a whole checkpoint: cut or corrupted.
    assert!(err(&[0xff; 40]).contains("not a readable safetensors"));
    // A checkpoint of another format (a GPT) is named as such.
    let gpt = attnlab::model::Gpt::new(
        &dev,
        attnlab::model::GptConfig::tiny(attnlab::model::Variant::Vanilla, 10),
        0,
    )
    .unwrap();
    let gb = pollster::block_on(attnlab::model::checkpoint::to_bytes(&gpt, "abcdefghij")).unwrap();
    assert!(err(&gb).contains("not a ViT"), "{}", err(&gb));
    assert!(
        err(&gb).contains("load it in the Models card"),
        "{}",
        err(&gb)
    );
    // And the other way round: a ViT checkpoint given as a GPT says where it belongs.
    let as_gpt = attnlab::model::checkpoint::from_bytes(&dev, &good, None, "vit.safetensors")
        .err()
        .unwrap()
        .to_string();
    assert!(
        as_gpt.contains("is a ViT checkpoint") && as_gpt.contains("ViT card"),
        "{as_gpt}"
    );
    // A course .params file (torch.save: a zip) in the ViT's place is named as a PyTorch file,
    // a text file as text, and a .params name that is neither kind is said plainly.
    let torch = err(b"PK\x03\x04 rest of a zip");
    assert!(torch.contains("is a PyTorch file"), "{torch}");
    let text = checkpoint::from_bytes(&dev, b"just some notes", "notes.params")
        .err()
        .unwrap()
        .to_string();
    assert!(
        text.contains("notes.params is text, not a model file"),
        "{text}"
    );
    let binary = checkpoint::from_bytes(&dev, &[0xff; 40], "noise.params")
        .err()
        .unwrap()
        .to_string();
    assert!(
        binary.contains("noise.params is neither a PyTorch .params file"),
        "{binary}"
    );
    // A non-finite weight is refused with its name.
    let w = model.param("head.weight").unwrap().value();
    let mut v = w.read().unwrap();
    v[3] = f32::NAN;
    w.write_f32(&v).unwrap();
    let bad = pollster::block_on(checkpoint::to_bytes(&model, &[])).unwrap();
    assert!(err(&bad).contains("head.weight"), "{}", err(&bad));
}
