//! ViT checkpoints as safetensors: every parameter by name, the sizes in the header metadata
//! (`format = attnlab-vit-1`), plus any extra metadata (the CLI stores the steps and accuracy).
//! Loading checks the format, the sizes, every name, shape and value (finite f32).

use super::config::{layout, VitConfig};
use super::model::Vit;
use crate::autograd::Var;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::model::checkpoint::{metadata_of, Extras};
use crate::model::params::Param;
use crate::tensor::Tensor;
use safetensors::tensor::{Dtype, TensorView};
use std::collections::HashMap;
use std::rc::Rc;

use crate::model::file_kind::{self, VIT_FORMAT as FORMAT};

/// Serialise the model (read back from its device) with `extra` metadata entries.
pub async fn to_bytes(model: &Vit, extra: &[(String, String)]) -> Result<Vec<u8>> {
    let mut blobs = vec![];
    for p in &model.params {
        let v = p.var.value().to_vec_f32().await?;
        blobs.push((
            p.name.clone(),
            p.var.shape().to_vec(),
            bytemuck::cast_slice::<f32, u8>(&v).to_vec(),
        ));
    }
    let views = blobs
        .iter()
        .map(|(n, s, b)| TensorView::new(Dtype::F32, s.clone(), b).map(|v| (n.clone(), v)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Msg(format!("could not build the ViT checkpoint: {e}")))?;
    let c = &model.cfg;
    let mut meta: HashMap<String, String> = HashMap::new();
    meta.insert("format".into(), FORMAT.into());
    for (k, v) in [
        ("image", c.image),
        ("patch", c.patch),
        ("n_layer", c.n_layer),
        ("n_head", c.n_head),
        ("n_embd", c.n_embd),
        ("classes", c.classes),
    ] {
        meta.insert(k.into(), v.to_string());
    }
    meta.extend(extra.iter().cloned());
    safetensors::tensor::serialize(views, Some(meta.into_iter().collect()))
        .map_err(|e| Error::Msg(format!("could not write the ViT checkpoint: {e}")))
}

/// The sizes stored in a ViT checkpoint's header; `what` names the file in messages.
pub fn config_of(bytes: &[u8], what: &str) -> Result<(VitConfig, HashMap<String, String>)> {
    let meta = metadata_of(bytes, what)?;
    match meta.get("format").map(String::as_str) {
        Some(FORMAT) => {}
        Some(f) => return Err(Error::Msg(file_kind::other_format(what, f, FORMAT))),
        None => {
            return Err(Error::Msg(format!(
                "{what} has no 'format' in its metadata; it was not written by “attnlab vit train”"
            )))
        }
    }
    let num = |k: &str| -> Result<usize> {
        meta.get(k)
            .and_then(|v| v.parse::<usize>().ok())
            .ok_or_else(|| Error::Msg(format!("{what}: metadata '{k}' is missing or not a number")))
    };
    let cfg = VitConfig {
        image: num("image")?,
        patch: num("patch")?,
        n_layer: num("n_layer")?,
        n_head: num("n_head")?,
        n_embd: num("n_embd")?,
        classes: num("classes")?,
    };
    cfg.validate()
        .map_err(|e| Error::Msg(format!("{what}: {e}")))?;
    Ok((cfg, meta))
}

/// Load a ViT checkpoint onto `dev`, with its metadata.
pub fn from_bytes(
    dev: &Rc<Device>,
    bytes: &[u8],
    what: &str,
) -> Result<(Vit, HashMap<String, String>)> {
    let (cfg, meta) = config_of(bytes, what)?;
    let extras = Extras::open(bytes, what)?;
    let mut params = vec![];
    for (name, shape, _) in layout(&cfg) {
        let vals = extras.get(&name, shape.iter().product())?;
        params.push(Param {
            decay: super::config::decays(&name),
            var: Var::leaf(Tensor::from_f32(dev, &shape, &vals)?, true),
            name,
        });
    }
    Ok((Vit::from_params(dev, cfg, params), meta))
}
