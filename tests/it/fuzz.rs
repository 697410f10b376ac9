//! Property-based fuzzing of everything that reads user files: the TSV parser, the vocabulary and
//! span-corruption dataset (the corpus), NameDataset, and the checkpoint reader. Each property
//! says: whatever the bytes, the call returns Ok or a message naming the file, never panics, and an
//! Ok result is well formed. CI runs proptest's default 256 cases per property; a long run is
//! `PROPTEST_CASES=100000 cargo test --release --test it fuzz::` (TESTING.md lists the runs made).

use attnlab::data::{
    parse_tsv, CharCorruptionDataset, NameDataset, TsvMode, Vocab, BLOCK_SIZE, PAD_ID,
};
use attnlab::model::{checkpoint, Gpt, GptConfig, Variant};
use attnlab::Device;
use proptest::prelude::*;
use std::rc::Rc;

/// Text made of the pieces that matter to the parsers, mixed with arbitrary characters.
fn texty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("Where was ".to_string()),
        Just(" born?".to_string()),
        Just("\t".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\u{FEFF}".to_string()),
        Just("\u{2047}".to_string()),
        Just("\u{25A1}".to_string()),
        "[A-Za-z ]{0,12}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

fn bytes_or_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        texty().prop_map(String::into_bytes),
    ]
}

fn checks_message(e: &attnlab::Error, file: &str) {
    let m = e.to_string();
    assert!(m.contains(file), "message does not name {file}: {m}");
}

proptest! {
    #[test]
    fn tsv_parser_never_panics(bytes in bytes_or_text(), optional in any::<bool>()) {
        let mode = if optional { TsvMode::AnswersOptional } else { TsvMode::RequireAnswers };
        match parse_tsv(&bytes, "f.tsv", mode) {
            Ok(rows) => {
                prop_assert!(!rows.is_empty());
                for r in &rows {
                    prop_assert!(!r.question.contains('\t') && !r.question.contains('\n'));
                    if !optional {
                        prop_assert!(r.answer.is_some());
                    }
                }
            }
            Err(e) => checks_message(&e, "f.tsv"),
        }
    }

    #[test]
    fn corpus_and_corruption_never_panic(text in texty(), seed in any::<u64>(), epoch in 0u64..1000) {
        let vocab = match Vocab::from_text(&text, "wiki.txt") {
            Ok(v) => v,
            Err(e) => { checks_message(&e, "wiki.txt"); return Ok(()); }
        };
        let data = match CharCorruptionDataset::new(&text, "wiki.txt", &vocab, seed) {
            Ok(d) => d,
            Err(e) => { checks_message(&e, "wiki.txt"); return Ok(()); }
        };
        for idx in 0..data.len().min(8) {
            let (x, y) = data.get(idx, epoch).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(x.len(), BLOCK_SIZE - 1);
            prop_assert_eq!(y.len(), BLOCK_SIZE - 1);
            prop_assert!(x.iter().chain(&y).all(|&i| (i as usize) < vocab.len()));
            // prefix⁇suffix⁇masked, then PAD: the input starts with the document, never with PAD.
            prop_assert!(x[0] != PAD_ID);
        }
    }

    #[test]
    fn name_dataset_never_panics(bytes in bytes_or_text()) {
        let vocab = Vocab::from_text("Where was Abc Def born?\tParis London", "wiki.txt")
            .expect("fixed vocab");
        match NameDataset::new(&bytes, "train.tsv", &vocab) {
            Ok(d) => {
                for i in 0..d.len() {
                    let (x, y) = d.get(i).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(x.len(), BLOCK_SIZE - 1);
                    prop_assert_eq!(y.len(), BLOCK_SIZE - 1);
                }
            }
            Err(e) => checks_message(&e, "train.tsv"),
        }
    }
}

thread_local! {
    static GOOD: (Rc<Device>, Vec<u8>) = {
        let dev = Device::gpu_blocking().unwrap_or_else(|e| panic!("{e}"));
        let cfg = GptConfig {
            n_layer: 1,
            n_head: 2,
            n_embd: 8,
            block_size: 8,
            ..GptConfig::tiny(Variant::Synthesizer, 6)
        };
        let model = Gpt::new(&dev, cfg, 1).expect("model");
        let bytes = pollster::block_on(checkpoint::to_bytes(&model, "□⁇abcd")).expect("bytes");
        (dev, bytes)
    };
}

/// A checkpoint damaged in one of several ways.
fn damaged() -> impl Strategy<Value = Vec<u8>> {
    let len = GOOD.with(|g| g.1.len());
    prop_oneof![
        (0..len).prop_map(|n| GOOD.with(|g| g.1[..n].to_vec())),
        prop::collection::vec((0..len, any::<u8>()), 1..6).prop_map(|edits| {
            let mut b = GOOD.with(|g| g.1.clone());
            for (i, v) in edits {
                b[i] = v;
            }
            b
        }),
        // Edits confined to the JSON header (the first 8 bytes give its length), where a flipped
        // digit turns into an absurd size or a wrong dtype.
        prop::collection::vec((8usize..400, 32u8..127), 1..4).prop_map(|edits| {
            let mut b = GOOD.with(|g| g.1.clone());
            for (i, v) in edits {
                if i < b.len() {
                    b[i] = v;
                }
            }
            b
        }),
        prop::collection::vec(any::<u8>(), 0..200),
    ]
}

proptest! {
    #[test]
    fn checkpoint_reader_never_panics(bytes in damaged(), expect in any::<bool>()) {
        GOOD.with(|(dev, good)| {
            let cfg = GptConfig {
                n_layer: 1,
                n_head: 2,
                n_embd: 8,
                block_size: 8,
                ..GptConfig::tiny(Variant::Synthesizer, 6)
            };
            match checkpoint::from_bytes(dev, &bytes, expect.then_some(&cfg), "ck.safetensors") {
                Ok((m, h)) => {
                    // Only an intact file (or one whose damage missed every checked byte) loads.
                    assert_eq!(m.cfg.variant, Variant::Synthesizer);
                    assert!(!h.vocab.is_empty() || &bytes != good);
                    // A load only queues its uploads; nothing else here submits, so without this
                    // the queued upload data piled up (23 GB after ~5 million cases).
                    drop(m);
                    pollster::block_on(dev.sync()).expect("sync");
                }
                Err(e) => checks_message(&e, "ck.safetensors"),
            }
        });
    }
}
