//! Tauri's build step: reads tauri.conf.json and embeds the page.
fn main() {
    tauri_build::build();
}
