//! The `.params` reader against mutated real `torch.save` files (the fixtures of
//! `tests/fixtures/torch/`): pickles edited, cut and spliced inside a valid zip (so the CRC does
//! not catch them first), whole files bit-flipped, and hostile pickles whose many tensors view one
//! storage. Whatever the bytes: an `Error` naming the file or a well-formed state_dict, never a
//! panic, and never more memory than the file's size justifies. CI runs 64 cases per property
//! (`PROPTEST_CASES=N cargo test --test it torch_hostile::` runs longer).

use attnlab::model::torch_params::{read_state_dict, MAX_STORAGE_BYTES};
use proptest::prelude::*;
use std::io::{Read, Write};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/torch")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const FIXTURES: [&str; 3] = ["vanilla.params", "synthesizer.params", "views.params"];

/// The entries of a zip archive, by name.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("zip");
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).expect("entry");
            let mut v = vec![];
            f.read_to_end(&mut v).expect("read");
            (f.name().to_string(), v)
        })
        .collect()
}

/// A stored zip of `files`.
fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(vec![]));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in files {
        w.start_file(name.as_str(), opts).expect("start");
        w.write_all(data).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// One mutation of a pickle or of a whole file.
#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, u8),
    Cut(usize),
    Repeat(usize, usize),
}

fn apply(bytes: &mut Vec<u8>, muts: &[Mutation]) {
    for m in muts {
        if bytes.is_empty() {
            return;
        }
        let n = bytes.len();
        match *m {
            Mutation::Set(at, v) => bytes[at % n] = v,
            Mutation::Cut(at) => bytes.truncate(at % n),
            Mutation::Repeat(at, len) => {
                let a = at % n;
                let piece = bytes[a..(a + len).min(n)].to_vec();
                bytes.splice(a..a, piece);
            }
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(a, v)| Mutation::Set(a, v)),
        1 => any::<usize>().prop_map(Mutation::Cut),
        2 => (any::<usize>(), 1usize..80).prop_map(|(a, l)| Mutation::Repeat(a, l)),
    ]
}

/// Ok only with float tensors copied out of the file: never more values than twice the file's
/// bytes hold.
fn well_formed(
    r: attnlab::Result<Vec<(String, attnlab::model::torch_params::TorchTensor)>>,
    file_len: usize,
) {
    match r {
        Ok(sd) => {
            let values: usize = sd.iter().map(|(_, t)| t.values.len()).sum();
            assert!(
                values * 4 <= 2 * file_len,
                "{values} values from {file_len} bytes"
            );
            for (_, t) in &sd {
                assert_eq!(t.shape.iter().product::<usize>(), t.values.len());
            }
        }
        Err(e) => assert!(e.to_string().starts_with("fuzz.params"), "{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn mutated_pickles_in_a_valid_zip_never_panic(
        which in 0usize..FIXTURES.len(),
        muts in prop::collection::vec(mutation(), 1..5),
    ) {
        let mut files = entries(&fixture(FIXTURES[which]));
        let at = files.iter().position(|(n, _)| n.ends_with("/data.pkl")).expect("data.pkl");
        apply(&mut files[at].1, &muts);
        let bytes = zip_of(&files);
        well_formed(read_state_dict(&bytes, "fuzz.params"), bytes.len());
    }

    #[test]
    fn mutated_files_never_panic(
        which in 0usize..FIXTURES.len(),
        muts in prop::collection::vec(mutation(), 1..5),
    ) {
        let mut bytes = fixture(FIXTURES[which]);
        apply(&mut bytes, &muts);
        well_formed(read_state_dict(&bytes, "fuzz.params"), bytes.len());
    }

    #[test]
    fn many_views_of_one_storage_are_refused_before_copying(n in 3usize..400) {
        // n tensors, each the whole of one storage of 256 floats: the pickle grows by ~60 bytes
        // a tensor while the copies would grow by 1 KB each.
        let numel = 256;
        let bytes = zip_of(&[
            ("h/data.pkl".into(), views_pickle(n, numel)),
            ("h/data/0".into(), vec![0u8; numel * 4]),
        ]);
        let r = read_state_dict(&bytes, "fuzz.params");
        let e = r.expect_err("refused").to_string();
        prop_assert!(e.contains("view") && e.contains("fuzz.params"), "{}", e);
    }
}

/// A pickle of a dict of `n` tensors `t0..t{n-1}`, each a whole view of storage "0" of `numel`
/// floats (the storage is memoised after the first, as torch.save does).
fn views_pickle(n: usize, numel: usize) -> Vec<u8> {
    let s = |p: &mut Vec<u8>, text: &str| {
        p.push(b'X');
        p.extend((text.len() as u32).to_le_bytes());
        p.extend(text.as_bytes());
    };
    let int = |p: &mut Vec<u8>, v: usize| {
        p.push(b'J');
        p.extend((v as i32).to_le_bytes());
    };
    let mut p = b"\x80\x02}(".to_vec();
    for i in 0..n {
        s(&mut p, &format!("t{i}"));
        p.extend(b"ctorch._utils\n_rebuild_tensor_v2\n(");
        if i == 0 {
            p.push(b'(');
            s(&mut p, "storage");
            p.extend(b"ctorch\nFloatStorage\n");
            s(&mut p, "0");
            s(&mut p, "cpu");
            int(&mut p, numel);
            p.extend(b"tQq\x01");
        } else {
            p.extend(b"h\x01");
        }
        int(&mut p, 0);
        int(&mut p, numel);
        p.push(0x85);
        int(&mut p, 1);
        p.push(0x85);
        p.push(0x89);
        p.extend(b"ccollections\nOrderedDict\n)R");
        p.extend(b"tR");
    }
    p.extend(b"u.");
    p
}

/// Two views of one storage (a tied weight) are a state_dict like any other; storages that claim
/// more than the file holds, or more than the reader's limit, are refused before anything is read.
#[test]
fn tied_views_load_and_oversized_storages_are_refused() {
    let ok = zip_of(&[
        ("h/data.pkl".into(), views_pickle(2, 8)),
        ("h/data/0".into(), (0..32u8).collect()),
    ]);
    let sd = read_state_dict(&ok, "tied.params").expect("two views");
    assert_eq!(sd.len(), 2);
    assert_eq!(sd[0].1.values, sd[1].1.values);
    for numel in [1usize << 20, MAX_STORAGE_BYTES / 4 + 1, i32::MAX as usize] {
        let bad = zip_of(&[
            ("h/data.pkl".into(), views_pickle(1, numel)),
            ("h/data/0".into(), vec![0u8; 64]),
        ]);
        let e = read_state_dict(&bad, "big.params")
            .expect_err("refused")
            .to_string();
        assert!(
            e.starts_with("big.params") && e.contains("more than"),
            "{e}"
        );
    }
}

/// Names from the file are shown escaped: a name holding a terminal escape cannot rewrite the
/// screen or fake a line of the message.
#[test]
fn names_from_the_file_are_escaped_in_messages() {
    use attnlab::model::torch_params::{config_of, Expected};
    let mut files = entries(&fixture("vanilla.params"));
    let at = files
        .iter()
        .position(|(n, _)| n.ends_with("/data.pkl"))
        .expect("data.pkl");
    let pkl = &mut files[at].1;
    let i = pkl
        .windows(7)
        .position(|w| w == b"pos_emb")
        .expect("pos_emb");
    pkl[i..i + 7].copy_from_slice(b"pos\x1b[2J");
    let bytes = zip_of(&files);
    let sd = read_state_dict(&bytes, "esc.params").expect("still a state_dict");
    let e = config_of(&sd, &Expected::default(), "esc.params")
        .expect_err("pos_emb is missing")
        .to_string();
    assert!(!e.contains('\u{1b}'), "{e:?}");
    assert!(e.contains("pos\\u{1b}[2J"), "{e:?}");
}

/// The page's browser test (web/test/engine.mjs) uploads `hostile_views.params`: 400 tensors
/// viewing one storage of 256 floats (400 KB of copies from a 38 KB file). The reader must refuse it
/// before copying; `cargo test --test it -- --ignored torch_hostile::write_page_fixture` writes it again.
#[test]
fn the_page_tests_hostile_file_is_refused() {
    let e = read_state_dict(&fixture("hostile_views.params"), "hostile.params")
        .expect_err("refused")
        .to_string();
    assert!(e.starts_with("hostile.params") && e.contains("view"), "{e}");
}

#[test]
#[ignore]
fn write_page_fixture() {
    let bytes = zip_of(&[
        ("h/data.pkl".into(), views_pickle(400, 256)),
        ("h/data/0".into(), vec![0u8; 256 * 4]),
    ]);
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch/hostile_views.params");
    std::fs::write(&p, bytes).expect("write the fixture");
}
