//! What kind of model file some bytes are, from their first bytes and metadata alone: a PyTorch
//! `torch.save` file (the course's `.params`), or one of attnlab's safetensors checkpoints (a GPT's
//! or a ViT's). The readers use it to say which file a student gave and where it belongs.

/// The `format` metadata of a GPT checkpoint written by attnlab.
pub const GPT_FORMAT: &str = "attnlab-gpt-1";
/// The `format` metadata of a ViT checkpoint written by attnlab.
pub const VIT_FORMAT: &str = "attnlab-vit-1";

/// The first bytes of a zip archive (and so of every `torch.save` file since PyTorch 1.6).
pub const ZIP_MAGIC: [u8; 4] = *b"PK\x03\x04";

/// The first bytes of a file written by `torch.save` before PyTorch 1.6 (a pickle of its magic
/// number), which is recognised only to say so.
pub const LEGACY_MAGIC: [u8; 4] = [0x80, 0x02, 0x8a, 0x0a];

/// Whether `bytes` look like a `torch.save` zip rather than a safetensors checkpoint.
pub fn is_torch_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(&ZIP_MAGIC)
}

/// Whether `bytes` come from `torch.save`: a zip, or the pre-1.6 format (which `read_state_dict`
/// refuses with a message saying how to re-save it). A safetensors file starts with its header's
/// length, which never looks like either.
pub fn is_torch_file(bytes: &[u8]) -> bool {
    is_torch_zip(bytes) || bytes.starts_with(&LEGACY_MAGIC)
}

/// The message for bytes the safetensors reader refused (`e`): a PyTorch file said as such, a
/// `.params` name that is neither kind said plainly, else a cut or corrupted checkpoint.
pub fn unreadable(what: &str, bytes: &[u8], e: impl std::fmt::Display) -> String {
    if is_torch_file(bytes) {
        format!(
            "{what} is a PyTorch file (torch.save, as the course's run.py writes its .params), not \
             a safetensors checkpoint: only a GPT model is read from a .params file (the Models \
             card, or --reading_params_path)"
        )
    } else if bytes.is_empty() {
        format!(
            "{what} is empty (0 bytes): a model file holds the weights; was its writing cut off? \
             train or download it again"
        )
    } else if looks_like_text(bytes) {
        format!(
            "{what} is text, not a model file (a safetensors checkpoint or a PyTorch .params \
             file): was another file given in its place?"
        )
    } else if what.ends_with(".params") {
        format!(
            "{what} is neither a PyTorch .params file (torch.save) nor a safetensors checkpoint \
             ({e}): is it the file run.py or attnlab wrote, and whole?"
        )
    } else {
        format!("{what} is not a readable safetensors checkpoint (truncated or corrupted?): {e}")
    }
}

/// Whether the first bytes read as text (printable UTF-8, tabs and line ends): a safetensors
/// file starts with its header's length as 8 bytes, whose high bytes are zero.
fn looks_like_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    let head = match std::str::from_utf8(head) {
        Ok(s) => s,
        // A multi-byte character cut at the 64th byte is still text.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or("")
        }
        Err(_) => return false,
    };
    !head.is_empty()
        && head
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
}

/// The message for an attnlab checkpoint of another kind than `want` (a format's name).
pub fn other_format(what: &str, found: &str, want: &str) -> String {
    match found {
        VIT_FORMAT => format!(
            "{what} is a ViT checkpoint ({VIT_FORMAT}), not a GPT's: load it in the ViT card \
             (or “attnlab vit evaluate”)"
        ),
        GPT_FORMAT => format!(
            "{what} is a GPT checkpoint ({GPT_FORMAT}), not a ViT's: load it in the Models card \
             (or “attnlab evaluate”); ViT checkpoints come from the ViT card or “attnlab vit train”"
        ),
        f => format!("{what} has format '{}', not {want}", f.escape_debug()),
    }
}
