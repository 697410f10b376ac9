//! The JS ↔ Rust conversions of the engine's methods (wasm32 only), in one place: results go out as
//! plain JS objects (serde-wasm-bindgen), arguments that are objects come in the same way, and
//! every crate error becomes a JS exception carrying the crate's own message.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// A result as a plain JS object (a struct becomes an object, a `Vec` an array).
pub(crate) fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsError> {
    serde_wasm_bindgen::to_value(v)
        .map_err(|e| JsError::new(&format!("could not pass the result to JS: {e}")))
}

/// An object argument read into `T`; `what` names it in the message when it does not fit.
pub(crate) fn from_js<T: DeserializeOwned>(v: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(v).map_err(|e| JsError::new(&format!("{what}: {e}")))
}

/// Any error (a crate `Error`, a message) as the JS exception the page shows.
pub(crate) fn err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}
