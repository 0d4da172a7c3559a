// The health strip, the summary line, the link findings, the nodes without topology and the conflicts.
import { el, flash, plural } from "./dom.js";

const reasons = {
  "": "no switch evidence",
  "no-report": "no report",
  "report-dropped": "agent silent, report dropped",
  "report-unusable": "report not usable",
};

// withoutTopology lists the nodes with a report but no switch evidence, then the cluster's other nodes
// without a place, each with its reason.
export function withoutTopology(data) {
  return data.unplaced.map((n) => ({ node: n, reason: "" })).concat(data.missing);
}

export function renderSummary(data) {
  const without = withoutTopology(data).length;
  document.getElementById("summary").textContent = data.ready
    ? plural(data.nodeCount, "node") + " in " + plural(data.domainCount, "domain") + ", " +
      without + " without topology, " + plural(data.conflicts.length, "conflict") +
      (data.updated ? " · built " + data.updated.replace("T", " ").replace("Z", " UTC") : "")
    : "No tree built yet.";
}

// chip is one item of the health strip; level is ok, warn or bad; target, when set, is scrolled to on click.
function chip(kind, level, label, value, title, target) {
  const li = el("li", "chip " + level);
  li.dataset.kind = kind;
  li.append(el("span", "chip-label", label), el("span", "chip-value", value));
  if (title) li.title = title;
  if (target) {
    li.tabIndex = 0;
    li.classList.add("link");
    const go = () => { const t = document.getElementById(target); t.scrollIntoView({ block: "start" }); flash(t); };
    li.addEventListener("click", go);
    li.addEventListener("keydown", (ev) => { if (ev.key === "Enter") go(); });
  }
  return li;
}

export function renderHealth(data) {
  const h = data.health;
  const items = [];
  if (h.sources.length === 0) {
    items.push(chip("source", "ok", "sources", "reports only", "no fabric-wide source is configured"));
  }
  h.sources.forEach((s) => {
    let level = "ok", value = "ok", title = s.lastSuccess ? "last read " + s.lastSuccess : "";
    if (s.stale) {
      level = s.ready ? "warn" : "bad";
      value = s.ready ? "stale" : "failing";
      title = (s.error || "its last poll failed") + (s.ready ? "; its last good evidence stays in use" : "");
    } else if (!s.ready) {
      level = "warn";
      value = "waiting";
      title = "no evidence from it yet";
    }
    if (s.held > 0) {
      level = "warn";
      value += ", " + s.held + " held";
      title += (title ? "; " : "") + s.held + " nodes it lost at once stay in use until confirmed";
    }
    const c = chip("source", level, s.name, value, title);
    c.dataset.source = s.name;
    items.push(c);
  });
  const conflicts = data.conflicts.length;
  items.push(chip("conflicts", conflicts > 0 ? "bad" : "ok", "conflicts", String(conflicts), "", conflicts > 0 ? "conflicts-title" : null));
  const expired = h.expired.length, dropped = h.dropped.length;
  items.push(chip("expired", expired + dropped > 0 ? "warn" : "ok", "expired reports",
    expired + " in use, " + dropped + " dropped",
    (h.expired.concat(h.dropped).slice(0, 20).join(", ")) || "every agent renews its heartbeat"));
  if (h.expirySuspended) {
    items.push(chip("expiry-suspended", "warn", "expiry", "suspended", "most agents are silent together: no report expires until they renew"));
  }
  const noReport = data.missing.filter((m) => m.reason === "no-report").length;
  items.push(chip("no-report", noReport > 0 ? "warn" : "ok", "without report",
    data.nodesKnown ? String(noReport) : "unknown",
    data.nodesKnown ? "" : "this page does not know the cluster's nodes", noReport > 0 ? "unplaced-title" : null));
  const without = withoutTopology(data).length;
  items.push(chip("without-topology", without > 0 ? "warn" : "ok", "without topology", String(without), "", without > 0 ? "unplaced-title" : null));
  items.push(findingsChip(h.findings));
  document.getElementById("health").replaceChildren(...items);
}

// The severities of fabric health's findings: 3 critical, 2 warning, 1 info (a name is taken as it is).
const severities = { 3: "critical", 2: "warning", 1: "info" };
const severityRank = { critical: 3, warning: 2, info: 1 };

function severityName(s) {
  return severities[s] || String(s);
}

// findingsChip counts the link findings by severity: bad with a critical one, warn with a warning, else ok.
function findingsChip(findings) {
  const count = {};
  findings.forEach((f) => { const s = severityName(f.severity); count[s] = (count[s] || 0) + 1; });
  const level = count.critical ? "bad" : count.warning ? "warn" : "ok";
  const value = findings.length === 0 ? "none"
    : ["critical", "warning", "info"].filter((s) => count[s]).map((s) => count[s] + " " + s).join(", ");
  return chip("link-findings", level, "link findings", value,
    findings.length === 0 ? "every judged link is healthy" : "", findings.length > 0 ? "findings-title" : null);
}

// renderFindings lists the link findings worst first (the order /api/tree gives, kept by severity here too).
export function renderFindings(data) {
  const findings = data.health.findings.slice().sort((a, b) =>
    (severityRank[severityName(b.severity)] || 0) - (severityRank[severityName(a.severity)] || 0));
  const body = document.querySelector("#findings tbody");
  body.replaceChildren(...findings.map((f) => {
    const sev = severityName(f.severity);
    const tr = el("tr", "finding " + sev);
    tr.dataset.kind = f.kind;
    tr.dataset.severity = sev;
    if (f.node) tr.dataset.node = f.node;
    const where = f.port || (f.switches || []).join(" ↔ ");
    tr.append(el("td", "severity", sev), el("td", "kind", f.kind), el("td", "node", f.node || "—"),
      el("td", "domain", f.domain || "—"), el("td", "where", where || "—"), el("td", "reason", f.message));
    return tr;
  }));
  document.getElementById("findings-count").textContent = "(" + findings.length + ")";
  document.getElementById("findings").hidden = findings.length === 0;
  document.getElementById("findings-empty").hidden = findings.length > 0;
}

export function renderUnplaced(data) {
  const nodes = withoutTopology(data);
  document.getElementById("unplaced").replaceChildren(...nodes.map((m) => {
    const li = el("li", "node");
    li.dataset.node = m.node;
    li.append(el("span", "node-name", m.node));
    li.dataset.reason = m.reason || "no-evidence";
    li.append(el("span", "reason", reasons[m.reason] || m.reason));
    return li;
  }));
  document.getElementById("unplaced-count").textContent = "(" + nodes.length + ")";
  document.getElementById("unplaced-empty").hidden = nodes.length > 0;
}

export function renderConflicts(data) {
  const body = document.querySelector("#conflicts tbody");
  body.replaceChildren(...data.conflicts.map((c) => {
    const tr = el("tr");
    tr.append(el("td", "node", c.node || "—"), el("td", "src", c.source || "—"), el("td", "reason", c.reason));
    return tr;
  }));
  document.getElementById("conflicts-count").textContent = "(" + data.conflicts.length + ")";
  document.getElementById("conflicts").hidden = data.conflicts.length === 0;
  document.getElementById("conflicts-empty").hidden = data.conflicts.length > 0;
}

// revealUnplaced marks a node of the list of nodes without topology and scrolls to it.
export function revealUnplaced(node) {
  const li = [...document.querySelectorAll("#unplaced li.node")].find((l) => l.dataset.node === node);
  if (!li) return null;
  flash(li);
  li.scrollIntoView({ block: "nearest" });
  return li;
}
