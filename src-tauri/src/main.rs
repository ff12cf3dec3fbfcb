//! The desktop app's entry point; everything lives in the library so tests can
//! build the same app on Tauri's mock runtime.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    switchboard_app::run();
}
