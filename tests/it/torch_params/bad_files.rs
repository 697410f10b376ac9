//! Bad `.params` files: each kind refused with what it holds and what was expected; truncated and
//! mangled archives and pickles give errors, never a panic or a hang.

use super::{err, fixture, has};
use attnlab::model::torch_params::{from_bytes, read_state_dict, Expected};
use attnlab::model::Variant;
use attnlab::Device;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::io::{Read, Write};
use std::path::PathBuf;

/// Each kind of bad file: the message names the file, what it holds and what was expected.
#[test]
fn bad_files_are_refused_with_what_they_are() {
    let read = |name: &str| read_state_dict(&fixture(name), name);
    let cpu = Device::cpu();
    let small = Expected {
        variant: Some(Variant::Vanilla),
        n_head: Some(2),
        vocab: Some((20, "wiki.txt")),
    };
    let load = |name: &str, want: &Expected| from_bytes(&cpu, &fixture(name), want, name);

    // Not a zip: a safetensors checkpoint, text, nothing, the pre-1.6 format.
    let st = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parity/vanilla.safetensors"),
    )
    .unwrap();
    for (bytes, part) in [
        (st.as_slice(), "starts with"),
        (b"hello world".as_slice(), "68 65 6c 6c"),
        (b"".as_slice(), "it is empty"),
        (
            b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.".as_slice(),
            "legacy format",
        ),
    ] {
        let m = err(read_state_dict(bytes, "m.params"), part);
        has(&m, &["m.params", part]);
    }
    has(
        &err(read("bad_no_pickle.params"), "no pickle"),
        &[
            "bad_no_pickle.params",
            "no <name>/data.pkl",
            "model/version",
        ],
    );
    has(
        &err(read("bad_wrapped.params"), "wrapped"),
        &[
            "bad_wrapped.params",
            "entry 'epoch' is an int (3)",
            "state_dict",
            "checkpoint['model']",
        ],
    );
    has(
        &err(read("bad_whole_model.params"), "whole model"),
        &[
            "bad_whole_model.params",
            "a parity.GPT object",
            "torch.save(model.state_dict(), path)",
        ],
    );
    has(
        &err(read("bad_half.params"), "half"),
        &[
            "bad_half.params",
            "is float16 (torch.HalfStorage), expected float32",
        ],
    );
    has(
        &err(read("bad_strided.params"), "strided"),
        &[
            "'blocks.0.attn.proj.weight' is not contiguous",
            "stride [1, 8]",
        ],
    );
    has(
        &err(load("bad_shape.params", &small), "shape"),
        &[
            "bad_shape.params",
            "'blocks.0.attn.proj.weight' has shape [8, 4], expected [8, 8]",
        ],
    );
    has(
        &err(load("bad_names.params", &small), "names"),
        &[
            "bad_names.params",
            "lacks ln_f.bias",
            "has blocks.0.attn.rope.freqs that the model does not",
        ],
    );
    has(
        &err(load("bad_nan.params", &small), "nan"),
        &[
            "bad_nan.params",
            "'head.weight' holds a non-finite value (NaN) at element 29",
        ],
    );
    // Another variant, head count or vocabulary than asked for.
    let v = fixture("vanilla.params");
    let s = fixture("synthesizer.params");
    let ask = |variant, n_head, vocab| Expected {
        variant: Some(variant),
        n_head,
        vocab: Some((vocab, "wiki.txt")),
    };
    has(
        &err(
            from_bytes(
                &cpu,
                &v,
                &ask(Variant::Synthesizer, Some(2), 20),
                "v.params",
            ),
            "variant",
        ),
        &[
            "v.params holds a vanilla model",
            "a synthesizer model was asked for",
        ],
    );
    has(
        &err(
            from_bytes(
                &cpu,
                &s,
                &ask(Variant::Synthesizer, Some(8), 20),
                "s.params",
            ),
            "heads",
        ),
        &[
            "s.params holds a synthesizer model with 2 heads",
            "8 heads were asked for",
        ],
    );
    has(
        &err(
            from_bytes(&cpu, &v, &ask(Variant::Vanilla, Some(3), 20), "v.params"),
            "heads",
        ),
        &[
            "v.params holds a vanilla model of width 16, which 3 heads do not divide",
            "a divisor of 16",
        ],
    );
    has(
        &err(
            from_bytes(&cpu, &v, &ask(Variant::Vanilla, Some(2), 23), "v.params"),
            "vocab",
        ),
        &[
            "v.params was trained with a vocabulary of 20",
            "wiki.txt gives 23",
            "pretraining corpus",
        ],
    );
}

/// Every truncation of a real file is an error that says so, never a panic.
#[test]
fn truncated_files_are_refused() {
    let bytes = fixture("views.params");
    for n in (0..bytes.len()).step_by(37).chain([bytes.len() - 1]) {
        let m = err(
            read_state_dict(&bytes[..n], "t.params"),
            &format!("cut at {n}"),
        );
        assert!(m.contains("t.params"), "{m}");
        if n >= 4 {
            assert!(m.contains("truncated"), "cut at {n}: {m}");
        }
    }
    // The same cut under another name is not called a .params file.
    let m = err(
        read_state_dict(&bytes[..bytes.len() / 2], "model.safetensors"),
        "cut .safetensors",
    );
    has(
        &m,
        &[
            "model.safetensors",
            "starts like a zip",
            "not a safetensors checkpoint",
        ],
    );
}

/// The entries of a zip archive, by name.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..z.len())
        .map(|i| {
            let mut f = z.by_index(i).unwrap();
            let mut v = vec![];
            f.read_to_end(&mut v).unwrap();
            (f.name().to_string(), v)
        })
        .collect()
}

/// A stored zip of `files`.
pub fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(vec![]));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, data) in files {
        w.start_file(name.as_str(), opts).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A storage entry missing or of the wrong length, and thousands of mangled pickles (bytes
/// changed, cut, or repeated, in a valid zip so that the CRC does not catch them first): always an
/// error naming the file (or, rarely, a still-valid state_dict), never a panic or a hang.
#[test]
fn mangled_archives_and_pickles_give_errors_not_panics() {
    let files = entries(&fixture("views.params"));
    assert!(read_state_dict(&zip_of(&files), "rezipped").is_ok());
    let without: Vec<_> = files
        .iter()
        .filter(|(n, _)| n != "views/data/3")
        .cloned()
        .collect();
    has(
        &err(read_state_dict(&zip_of(&without), "z.params"), "missing"),
        &["z.params has no views/data/3"],
    );
    let mut short = files.clone();
    short
        .iter_mut()
        .find(|(n, _)| n == "views/data/3")
        .unwrap()
        .1
        .pop();
    has(
        &err(read_state_dict(&zip_of(&short), "z.params"), "short"),
        &["z.params: views/data/3 has 31 bytes but its tensors need 32"],
    );

    let pkl_at = files
        .iter()
        .position(|(n, _)| n.ends_with("data.pkl"))
        .unwrap();
    let pkl = files[pkl_at].1.clone();
    // Instructions with nothing on the stack (above the last MARK): STOP pops, BUILD reads the top.
    for (bytes, what) in [
        (&b"\x80\x02."[..], "takes a value from an empty stack"),
        (&b"\x80\x02(."[..], "takes a value from an empty stack"),
        (&b"\x80\x02Nb."[..], "needs a value on an empty stack"),
    ] {
        let mut f = files.clone();
        f[pkl_at].1 = bytes.to_vec();
        has(
            &err(read_state_dict(&zip_of(&f), "e.params"), what),
            &["e.params", what],
        );
    }
    let mut rng = SmallRng::seed_from_u64(5);
    let (mut errors, mut oks) = (0, 0);
    for i in 0..3000 {
        let mut p = pkl.clone();
        match i % 3 {
            0 => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..p.len());
                    p[at] = rng.gen();
                }
            }
            1 => p.truncate(rng.gen_range(0..p.len())),
            _ => {
                let a = rng.gen_range(0..p.len());
                let b = rng.gen_range(a..p.len().min(a + 64));
                let piece = p[a..b].to_vec();
                p.splice(a..a, piece);
            }
        }
        let mut f = files.clone();
        f[pkl_at].1 = p;
        match read_state_dict(&zip_of(&f), "fuzz.params") {
            Ok(_) => oks += 1,
            Err(e) => {
                assert!(e.to_string().starts_with("fuzz.params"), "{e}");
                errors += 1;
            }
        }
    }
    assert!(errors > 2500, "{errors} errors, {oks} accepted");
}
