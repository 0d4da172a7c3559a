// fabricmap's read-only topology page: fetches api/tree every 15 s and renders it (the health strip, the list
// of domains, the link findings, the nodes without topology, the conflicts) beside the drawn map (map.js); the search box opens
// a node's or switch's path in both. Built with DOM calls and textContent only, so no name from the cluster is
// ever parsed as HTML.
import { renderConflicts, renderFindings, renderHealth, renderSummary, renderUnplaced, revealUnplaced } from "./health.js";
import { MapView } from "./map.js";
import { Search } from "./search.js";
import { TreeList } from "./tree.js";

const refreshMs = 15000;
let lastBody = null; // the last response rendered: an unchanged tree is not rendered again

function showError(e) {
  const err = document.getElementById("error");
  err.textContent = "Could not load the tree: " + e.message;
  err.hidden = false;
}

// A click on the map opens the same domain or node in the list.
const map = new MapView(document.getElementById("map"), {
  onDomain: (name) => list.reveal(name),
  onNode: (node) => {
    const e = search.entries.find((x) => x.kind === "node" && x.name === node && x.domain);
    if (e) list.reveal(e.domain, node);
  },
  onError: showError,
});
const list = new TreeList(document.getElementById("tree"));
const search = new Search(document.getElementById("search"), document.getElementById("search-results"), pick);

// pick opens what the search found: its path in the list and on the map, or its place among the nodes
// without topology.
async function pick(e) {
  document.body.dataset.picked = "";
  if (!e.domain) {
    revealUnplaced(e.name);
  } else {
    const node = e.kind === "node";
    list.reveal(e.domain, node ? e.name : undefined);
    try {
      if (node) await map.show(e.name, e.path.slice(0, -1), e.domain);
      else await map.show(e.domain, e.path.slice(0, -1));
    } catch (err) {
      showError(err);
    }
  }
  document.body.dataset.picked = e.name;
}

function render(data) {
  list.render(data);
  document.getElementById("tree-empty").hidden = data.ready && data.roots.length > 0;
  renderSummary(data);
  renderHealth(data);
  renderFindings(data);
  renderUnplaced(data);
  renderConflicts(data);
  search.index(data);
}

async function load() {
  const err = document.getElementById("error");
  try {
    const res = await fetch("api/tree", { cache: "no-store" });
    if (!res.ok) throw new Error("GET api/tree: " + res.status + " " + res.statusText);
    const body = await res.text();
    if (body !== lastBody) {
      render(JSON.parse(body));
      await map.refresh();
    }
    lastBody = body;
    err.hidden = true;
  } catch (e) {
    showError(e);
  }
  document.body.dataset.loaded = "true";
}

document.getElementById("expand-all").addEventListener("click", () => list.setAll(false));
document.getElementById("collapse-all").addEventListener("click", () => list.setAll(true));
document.getElementById("zoom-in").addEventListener("click", () => map.zoomBy(1 / 1.5));
document.getElementById("zoom-out").addEventListener("click", () => map.zoomBy(1.5));
document.getElementById("zoom-fit").addEventListener("click", () => map.fit());
load();
setInterval(load, refreshMs);
