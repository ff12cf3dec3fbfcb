//! The Tauri commands the window calls, by domain: each is one line of glue over
//! the core (or the app state), its failure an `AppError`.

pub mod app;
pub mod chat;
pub mod config;
pub mod export;
