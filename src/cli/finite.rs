//! The check made on every checkpoint and training state before it is written: all of its f32
//! values (weights, and the AdamW moments in a state) finite, so a run that diverged never
//! replaces a good file with one that cannot be loaded.

use safetensors::{Dtype, SafeTensors};

/// The first non-finite f32 value in safetensors `bytes`: its tensor's name and element index.
pub fn first_non_finite(bytes: &[u8]) -> Result<Option<(String, usize)>, String> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| format!("internal: the bytes to save are not safetensors ({e})"))?;
    let mut names = st.names();
    names.sort();
    for name in names {
        let view = st
            .tensor(name)
            .map_err(|e| format!("internal: {name}: {e}"))?;
        if view.dtype() != Dtype::F32 {
            continue;
        }
        let bad = view
            .data()
            .chunks_exact(4)
            .position(|c| !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite());
        if let Some(i) = bad {
            return Ok(Some((name.to_string(), i)));
        }
    }
    Ok(None)
}

/// `Err` naming the step, the tensor and the files not written (`unwritten`, the paths) when
/// `bytes` hold a non-finite value.
pub fn check(bytes: &[u8], unwritten: &[&std::path::Path], step: u64) -> Result<(), String> {
    match first_non_finite(bytes)? {
        None => Ok(()),
        Some((name, i)) => {
            let files: Vec<String> = unwritten.iter().map(|p| p.display().to_string()).collect();
            Err(format!(
                "the training diverged: after step {step}, {name}[{i}] is not finite; {} not \
                 written (existing files are kept); lower --learning_rate",
                match files.as_slice() {
                    [one] => format!("{one} was"),
                    many => format!("{} were", many.join(" and ")),
                }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(values: &[f32]) -> Vec<u8> {
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = safetensors::tensor::TensorView::new(Dtype::F32, vec![values.len()], &data)
            .expect("view");
        safetensors::serialize([("w", view)], None).expect("serialize")
    }

    #[test]
    fn finds_the_first_non_finite_value() {
        assert_eq!(first_non_finite(&blob(&[1.0, -2.0])).expect("ok"), None);
        assert_eq!(
            first_non_finite(&blob(&[1.0, f32::NAN, f32::INFINITY])).expect("ok"),
            Some(("w".into(), 1))
        );
        let e = check(
            &blob(&[f32::NEG_INFINITY]),
            &[std::path::Path::new("m.st")],
            3,
        )
        .expect_err("refused");
        assert!(
            e.contains("step 3") && e.contains("w[0]") && e.contains("m.st"),
            "{e}"
        );
        assert!(first_non_finite(b"junk").is_err());
    }
}
