//! An empty Tauri 2 window showing a plain HTML page: the memory baseline that
//! `make bench-memory` compares the Switchboard app with (see ARCHITECTURE.md).
fn main() {
    tauri::Builder::default().run(tauri::generate_context!()).expect("the minimal app could not start");
}
