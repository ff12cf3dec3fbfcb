/** Mounts the app into the page. */
import { mount } from "svelte";
import "./app.css";
import "./lib/shared/form.css";
import App from "./App.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
export default mount(App, { target });
