//! Links never take the window away from the app: a navigation to anything but
//! the app's own pages is cancelled, and a web or mail link (from a model's reply,
//! say) is opened in the system browser instead, with tauri-plugin-opener, or with
//! the command `$SWITCHBOARD_OPEN_LINKS_WITH` names (which receives the URL as its
//! one argument).

use tauri::plugin::{Builder, TauriPlugin};
use tauri::{Manager, Runtime, Url};
use tauri_plugin_opener::OpenerExt;

/// Names a command to open links with instead of the system's default browser.
pub const OPEN_LINKS_WITH_ENV: &str = "SWITCHBOARD_OPEN_LINKS_WITH";

/// The plugin that guards every navigation of the app's webviews.
pub fn navigation_guard<R: Runtime>() -> TauriPlugin<R> {
    Builder::new("navigation-guard")
        .on_navigation(|webview, url| {
            if is_app_page(url, webview.app_handle().config().build.dev_url.as_ref()) {
                return true;
            }
            if matches!(url.scheme(), "http" | "https" | "mailto") {
                open_outside(webview.app_handle(), url);
            } else {
                tracing::warn!(%url, "a navigation to a non-web link was refused");
            }
            false
        })
        .build()
}

/// The app's own pages: the bundled UI, or the dev server in a dev build.
fn is_app_page(url: &Url, dev_url: Option<&Url>) -> bool {
    let bundled = url.scheme() == "tauri" || url.host_str() == Some("tauri.localhost");
    let dev_server = tauri::is_dev() && dev_url.is_some_and(|dev| dev.origin() == url.origin());
    bundled || dev_server
}

fn open_outside<R: Runtime>(app: &tauri::AppHandle<R>, url: &Url) {
    let result = match std::env::var_os(OPEN_LINKS_WITH_ENV).filter(|command| !command.is_empty()) {
        Some(command) => {
            let mut opener = std::process::Command::new(command);
            crate::desktop::without_our_switch(&mut opener);
            opener.arg(url.as_str()).spawn().map(drop).map_err(|error| error.to_string())
        }
        None => app.opener().open_url(url.as_str(), None::<&str>).map_err(|error| error.to_string()),
    };
    if let Err(error) = result {
        tracing::warn!(%url, %error, "the link could not be opened in the browser");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_apps_own_pages_may_load_in_the_window() {
        let dev = Url::parse("http://localhost:5173").unwrap();
        let cases = [
            ("tauri://localhost/index.html", true),
            ("http://tauri.localhost/", true),
            ("https://example.com/", false),
            ("http://localhost:5174/", false),
            ("file:///etc/passwd", false),
        ];
        for (url, allowed) in cases {
            assert_eq!(is_app_page(&Url::parse(url).unwrap(), Some(&dev)), allowed, "{url}");
        }
    }
}
