//! The probe of what pretraining stored (`attnlab::train::probe`): a tiny model trained until it
//! fills the masked birthplaces of a few documents recalls all of them, an untrained one none;
//! rows without a document or whose place pretraining never shows are counted apart; the table of
//! stored × answered counts each probed row once.

use attnlab::data::{parse_tsv_str, CharCorruptionDataset, TsvMode, Vocab, BLOCK_SIZE, PAD_ID};
use attnlab::model::{Gpt, GptConfig, Variant};
use attnlab::train::probe::{name_of, probe, probe_items, Unprobed};
use attnlab::train::{TrainConfig, Trainer};
use attnlab::{Device, DeviceChoice};

const WIKI: &str = "Ann Vole. Ann Vole was born in Paris and wrote songs .\n\
Bert Quill. Bert Quill, a painter, was born in Oslo .\n\
Cora Fenn. Cora Fenn is a singer from Lima who moved away .\n\
Dan Ruse. Dan Ruse is a writer who lived a long and quiet life in a small town and who was born \
much later in the story in Rome .\n";

const DEV: &str = "Where was Ann Vole born?\tParis\n\
Where was Bert Quill born?\tOslo\n\
Where was Cora Fenn born?\tLima\n\
Where was Dan Ruse born?\tRome\n\
Where was Eve Nobody born?\tCairo\n";

#[test]
fn names_come_from_the_question() {
    assert_eq!(name_of("Where was Ann Vole born?"), Some("Ann Vole"));
    assert_eq!(name_of("Who is Ann?"), None);
}

#[test]
fn the_probe_recalls_what_a_model_memorised_and_nothing_untrained() {
    let dev = Device::open_blocking(DeviceChoice::Cpu).expect("cpu");
    let vocab = Vocab::from_text(WIKI, "wiki.txt").expect("vocab");
    let rows = parse_tsv_str(DEV, "dev.tsv", TsvMode::RequireAnswers).expect("tsv");
    let docs = CharCorruptionDataset::new(WIKI, "wiki.txt", &vocab, 0).expect("docs");
    let items = probe_items(docs.docs(), &vocab, &rows);
    // Dan Ruse's place is past the first 112 characters; Eve Nobody has no document.
    assert_eq!(items[3].as_ref().unwrap_err(), &Unprobed::NotShown);
    assert_eq!(items[4].as_ref().unwrap_err(), &Unprobed::NoDocument);
    let probed: Vec<_> = items.iter().filter_map(|i| i.as_ref().ok()).collect();
    assert_eq!(probed.len(), 3);

    let cfg = GptConfig {
        embd_pdrop: 0.0,
        resid_pdrop: 0.0,
        attn_pdrop: 0.0,
        ..GptConfig::tiny(Variant::Vanilla, vocab.len())
    };
    let untrained = Gpt::new(&dev, cfg.clone(), 3).expect("model");
    let none = pollster::block_on(probe(&untrained, docs.docs(), &vocab, &rows)).expect("probe");
    assert_eq!((none.asked, none.recalled), (3, 0), "{}", none.line());
    assert_eq!((none.no_document, none.not_shown), (1, 1));

    // Train on exactly the probe's spans (prompt ⁇ place), as span corruption would show them.
    let t = BLOCK_SIZE - 1;
    let (mut x, mut y) = (vec![], vec![]);
    for it in &probed {
        let mut s = it.prompt.clone();
        s.extend_from_slice(&it.place);
        s.resize(BLOCK_SIZE, PAD_ID);
        x.extend_from_slice(&s[..t]);
        y.extend_from_slice(&s[1..]);
    }
    let tc = TrainConfig {
        learning_rate: 3e-3,
        ..TrainConfig::finetune_scratch()
    };
    let mut tr = Trainer::new(Gpt::new(&dev, cfg, 3).expect("model"), tc, 0).expect("trainer");
    let mut loss = f32::NAN;
    for _ in 0..400 {
        loss = tr
            .step_packed(&x, &y, probed.len(), t, probed.len() * t)
            .expect("step")
            .read()
            .expect("loss")[0];
    }
    assert!(loss < 0.2, "not memorised: loss {loss}");
    let all = pollster::block_on(probe(&tr.model, docs.docs(), &vocab, &rows)).expect("probe");
    assert_eq!((all.asked, all.recalled), (3, 3), "{}", all.line());
    assert!(
        all.line().starts_with("recall 100.0% (3 of 3"),
        "{}",
        all.line()
    );

    // Stored × answered: Ann right, Bert wrong, Cora right; the two unprobed rows are not counted.
    let pred: Vec<String> = ["Paris", "Rome", "Lima", "Rome", "Cairo"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(all.table(&rows, &pred), [[2, 1], [0, 0]]);
    assert_eq!(none.table(&rows, &pred), [[0, 0], [2, 1]]);
}
