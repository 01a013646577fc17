// bs ui: the browser side. Plain DOM, no framework; every string from a
// transcript goes in as text, never as HTML.
"use strict";

const PAGE = 50;
const FOLD_LINES = 8;
let config = { read_only: true, filters: [] };
let sessionsCache = null;

// --- helpers -------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function svg(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  return el;
}

async function api(path, body) {
  const opt = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, opt);
  let data;
  try { data = await res.json(); } catch (e) { data = { error: res.statusText }; }
  if (!res.ok) {
    const err = new Error(data.error || res.statusText);
    err.status = res.status;
    throw err;
  }
  return data;
}

function toast(msg, isErr) {
  const t = document.getElementById("toast");
  t.textContent = msg;
  t.className = "toast" + (isErr ? " err" : "");
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, isErr ? 9000 : 4000);
}

function bytes(n) {
  if (n == null) return "";
  const u = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(n < 10 ? 1 : 0) : n) + " " + u[i];
}

function kilo(n) {
  if (n == null) return "";
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1000).toFixed(n < 10000 ? 1 : 0) + "k";
  return (n / 1e6).toFixed(1) + "M";
}

function ago(iso) {
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (!isFinite(s)) return "";
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  if (s < 86400 * 30) return Math.floor(s / 86400) + " d ago";
  return new Date(iso).toISOString().slice(0, 10);
}

function gaugeEl(g) {
  if (!g) return h("div", { class: "gauge muted" }, "—");
  const pct = Math.round(100 * g.ratio);
  const fill = h("div", { class: "fill" + (g.ratio >= 0.9 ? " high" : g.ratio >= 0.7 ? " mid" : "") });
  fill.style.width = Math.min(100, pct) + "%";
  return h("div", { class: "gauge", title: g.text + (g.source === "estimate" ? " (estimated)" : "") },
    h("div", { class: "bar" }, fill),
    h("div", { class: "lbl" }, `${pct}% · ${kilo(g.tokens)} / ${kilo(g.window)}` + (g.source === "estimate" ? " est." : "")));
}

function sparkline(values, w, hgt) {
  const el = svg("svg", { class: "spark", width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`, "aria-hidden": "true" });
  if (!values || values.length === 0) return el;
  const max = Math.max(...values, 1);
  const pts = values.map((v, i) => [values.length === 1 ? w / 2 : (i * (w - 2)) / (values.length - 1) + 1,
    hgt - 1 - (v / max) * (hgt - 3)]);
  const line = pts.map((p, i) => (i ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1)).join(" ");
  el.append(svg("path", { class: "area", d: line + ` L${pts[pts.length - 1][0].toFixed(1)} ${hgt} L${pts[0][0].toFixed(1)} ${hgt} Z` }));
  el.append(svg("path", { class: "line", d: line }));
  return el;
}

function slug(s) { return s.toLowerCase().replace(/[^a-z0-9]+/g, "-"); }

function shortPath(p) {
  const parts = p.split("/").filter(Boolean);
  return parts.length > 2 ? "…/" + parts.slice(-2).join("/") : p;
}

function route() {
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  return { parts: path.split("/").filter(Boolean), q: new URLSearchParams(query || "") };
}

function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function setNav(which) {
  for (const id of ["nav-sessions", "nav-search"]) {
    document.getElementById(id).classList.toggle("active", id === "nav-" + which);
  }
}

// --- sessions ------------------------------------------------------------

const sessionState = { sort: "modified", asc: false, runtime: "", text: "" };

async function renderSessions(main) {
  setNav("sessions");
  main.replaceChildren(h("h1", {}, "Sessions"), h("div", { class: "sub" }, "Loading…"));
  const data = await api("/api/sessions");
  sessionsCache = data.sessions;
  const runtimes = [...new Set(data.sessions.map((s) => s.runtime))].sort();
  const body = h("tbody");
  const table = h("table", { class: "sessions", id: "sessions" });
  const cols = [
    ["name", "Session"], ["runtime", "Runtime"], ["project", "Project"], ["modified", "Last activity"],
    ["bytes", "Size"], ["ratio", "Context now"], ["moved", "In the store"], ["spark", "Over the turns"],
  ];
  const head = h("tr", {}, cols.map(([k, label]) => {
    const th = h("th", { "data-k": k }, label);
    if (k !== "spark") th.addEventListener("click", () => {
      if (sessionState.sort === k) sessionState.asc = !sessionState.asc;
      else { sessionState.sort = k; sessionState.asc = k === "name" || k === "runtime" || k === "project"; }
      fill();
    });
    return th;
  }));
  table.append(h("thead", {}, head), body);
  const text = h("input", { type: "search", placeholder: "Filter by name, project, title…", id: "filter-text", value: sessionState.text });
  const rt = h("select", { id: "filter-runtime" }, h("option", { value: "" }, "All runtimes"),
    runtimes.map((r) => h("option", { value: r }, r)));
  rt.value = sessionState.runtime;
  text.addEventListener("input", () => { sessionState.text = text.value; fill(); });
  rt.addEventListener("change", () => { sessionState.runtime = rt.value; fill(); });
  const count = h("span", { class: "sub" });
  main.replaceChildren(
    h("div", { class: "row" }, h("h1", { class: "grow" }, "Sessions"), count),
    h("div", { class: "row filters" }, text, rt),
    table);

  const key = {
    name: (s) => s.name.toLowerCase(), runtime: (s) => s.runtime, project: (s) => s.project.toLowerCase(),
    modified: (s) => s.modified, bytes: (s) => s.bytes, ratio: (s) => (s.gauge ? s.gauge.ratio : -1),
    moved: (s) => s.moved_bytes,
  };
  function fill() {
    for (const th of head.children) {
      th.classList.toggle("sorted", th.dataset.k === sessionState.sort);
      th.classList.toggle("asc", sessionState.asc);
    }
    const needle = sessionState.text.toLowerCase();
    let rows = data.sessions.filter((s) => (!sessionState.runtime || s.runtime === sessionState.runtime) &&
      (!needle || (s.name + " " + s.project + " " + (s.title || "") + " " + s.path).toLowerCase().includes(needle)));
    const k = key[sessionState.sort];
    rows.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0) * (sessionState.asc ? 1 : -1));
    count.textContent = `${rows.length} of ${data.sessions.length}`;
    body.replaceChildren(...rows.map((s) => {
      const tr = h("tr", { "data-id": s.id, title: s.path },
        h("td", {}, h("div", { class: "sname" }, s.name), s.title ? h("div", { class: "stitle" }, s.title) : null,
          s.error ? h("div", { class: "stitle" }, "⚠ " + s.error) : null),
        h("td", {}, h("span", { class: "chip rt-" + slug(s.runtime) }, s.runtime)),
        h("td", { class: "muted proj", title: s.project }, shortPath(s.project)),
        h("td", { class: "muted", title: s.modified }, ago(s.modified)),
        h("td", { class: "num" }, bytes(s.bytes)),
        h("td", {}, gaugeEl(s.gauge)),
        h("td", { class: "num" }, s.moved_bytes ? bytes(s.moved_bytes) : "—",
          s.moved_values ? h("div", { class: "sub" }, `${s.moved_values} values`) : null),
        h("td", {}, sparkline(s.spark, 120, 30)));
      tr.addEventListener("click", () => go("#/s/" + s.id));
      return tr;
    }));
    if (rows.length === 0) body.append(h("tr", {}, h("td", { colspan: 8, class: "empty" }, "No session matches.")));
  }
  fill();
}

// --- one session ---------------------------------------------------------

async function renderSession(main, id, tab, q) {
  setNav("");
  main.replaceChildren(h("div", { class: "sub" }, "Loading…"));
  const meta = await api("/api/session?s=" + id);
  const tabs = [["entries", "Entries"], ["tokens", "Where the tokens go"], ["timeline", "Context timeline"],
    ["checkpoint", "Checkpoint"]];
  if (!config.read_only) tabs.push(["actions", "Actions"]);
  const content = h("div", { id: "tab" });
  main.replaceChildren(
    h("div", { class: "shead" },
      h("div", { class: "grow" },
        h("div", { class: "sub" }, h("a", { href: "#/" }, "Sessions"), " / ", meta.project),
        h("h1", { id: "session-name" }, meta.name),
        h("div", { class: "sub mono" }, meta.path),
        h("div", { class: "row sub" }, h("span", { class: "chip rt-" + slug(meta.runtime) }, meta.runtime),
          `${meta.lines} lines · ${bytes(meta.bytes)}`, meta.gauge && meta.gauge.model ? "· " + meta.gauge.model : "")),
      gaugeEl(meta.gauge)),
    h("div", { class: "tabs" }, tabs.map(([k, label]) =>
      h("a", { href: `#/s/${id}/${k}`, class: k === tab ? "active" : "", id: "tab-" + k }, label))),
    content);
  if (tab === "entries") return renderEntries(content, id, meta, q);
  if (tab === "tokens") return renderTokens(content, id);
  if (tab === "timeline") return renderTimeline(content, id);
  if (tab === "checkpoint") return renderCheckpoint(content, id);
  if (tab === "actions") return renderActions(content, id);
}

async function renderEntries(el, id, meta, q) {
  const total = meta.lines;
  const pages = Math.max(1, Math.ceil(total / PAGE));
  let line = parseInt(q.get("line") || "0", 10);
  const eid = q.get("id");
  if (eid && !line) {
    const loc = await api(`/api/locate?s=${id}&id=${encodeURIComponent(eid)}`);
    const hit = loc.found.find((f) => f.match === "entry") || loc.found[0];
    if (!hit) { toast(`entry ${eid} is not in this session (a roll may have moved it to the store)`, true); }
    else line = hit.line;
  }
  let page = parseInt(q.get("page") || "0", 10) || (line ? Math.ceil(line / PAGE) : 1);
  page = Math.min(Math.max(page, 1), pages);
  const from = (page - 1) * PAGE + 1;
  const list = h("div", { id: "entries" }, h("div", { class: "sub" }, "Loading entries…"));
  el.replaceChildren(pager(id, page, pages, total), list, pager(id, page, pages, total));
  const data = await api(`/api/entries?s=${id}&from=${from}&count=${PAGE}`);
  list.replaceChildren(...data.entries.map((e) => entryEl(id, e)));
  if (line) {
    const target = document.getElementById("line-" + line);
    if (target) { target.classList.add("hl"); target.scrollIntoView({ block: "center" }); }
  }
}

function pager(id, page, pages, total) {
  const goto = h("input", { type: "text", placeholder: "line or entry id", "aria-label": "Go to line or entry id", class: "goto" });
  const form = h("form", { class: "row" }, goto, h("button", { type: "submit" }, "Go"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = goto.value.trim();
    if (!v) return;
    if (/^\d+$/.test(v)) go(`#/s/${id}/entries?line=${v}`);
    else go(`#/s/${id}/entries?id=${encodeURIComponent(v)}`);
  });
  const link = (p, label) => p >= 1 && p <= pages && p !== page
    ? h("a", { href: `#/s/${id}/entries?page=${p}` }, label) : h("span", { class: "muted" }, label);
  return h("div", { class: "pager" }, link(1, "« first"), link(page - 1, "‹ prev"),
    h("span", { class: "sub" }, `page ${page} of ${pages} · lines ${(page - 1) * PAGE + 1}–${Math.min(page * PAGE, total)} of ${total}`),
    link(page + 1, "next ›"), link(pages, "last »"), h("span", { class: "grow" }), form);
}

function roleOf(e) {
  if (e.bad) return "bad";
  // A Claude Code tool result is a user line; show it as what it is.
  if (e.role === "user" && e.answers) return "toolResult";
  if (e.role) return e.role;
  return "";
}

function entryEl(sid, e) {
  const role = roleOf(e);
  const el = h("article", { class: "entry role-" + role + (e.bad ? " bad" : ""), id: "line-" + e.line, "data-line": e.line, "data-id": e.id || "" });
  const head = h("div", { class: "ehead" },
    h("span", { class: "ln" }, "#" + e.line),
    role && role !== "bad" ? h("span", { class: "role " + role }, role) : null,
    e.type && e.type !== "message" ? h("span", { class: "chip" }, e.type) : null,
    (e.tools || []).map((t) => h("span", { class: "tool" }, t)),
    e.tool_name ? h("span", { class: "tool" }, e.tool_name) : null,
    e.bad ? h("span", { class: "badge bad" }, "not JSON: " + e.bad) : null,
    e.restored ? h("span", { class: "badge restored", title: "_restored" }, "restored " + e.restored) : null,
    e.extractable ? h("span", { class: "badge extractable", title: "_extractable" }, "_extractable: " + e.extractable) : null,
    e.redacted ? h("span", { class: "badge redacted", title: "_redacted" }, "redacted") : null,
    e.time ? h("span", { class: "muted" }, e.time) : null,
    e.id ? h("span", { class: "eid", title: "entry id" }, e.id) : null);
  const acts = h("span", { class: "eacts" });
  (e.call_ids || []).forEach((c) => { if (c) acts.append(linkTo(sid, c, "result", "→ result")); });
  if (e.answers) acts.append(linkTo(sid, e.answers, "call", "← call"));
  const stored = e.blocks.some((b) => b.extracted);
  if (!config.read_only && e.id) {
    if (stored) {
      acts.append(h("button", { class: "restore", title: "bs restore --id " + e.id + " -i", onclick: () => restore(sid, e) }, "Restore"));
    }
    if (e.message) {
      const sel = h("select", { class: "set-extractable", title: "set _extractable" },
        h("option", { value: "" }, "_extractable…"), h("option", { value: "false" }, "never extract"),
        h("option", { value: "true" }, "always extract"), h("option", { value: "10" }, "keep 10 messages"));
      sel.addEventListener("change", () => { if (sel.value) setExtractable(sid, e, sel.value); });
      acts.append(sel);
    }
  }
  head.append(acts);
  el.append(head);
  for (const b of e.blocks) el.append(blockEl(sid, e, b));
  if (e.raw) el.append(h("pre", { class: "text folded" }, e.raw));
  return el;
}

function linkTo(sid, callID, want, label) {
  return h("a", { href: "#", class: "link", onclick: async (ev) => {
    ev.preventDefault();
    const loc = await api(`/api/locate?s=${sid}&id=${encodeURIComponent(callID)}`);
    const hit = loc.found.find((f) => f.match === want);
    if (!hit) { toast(`no ${want} found for ${callID}`, true); return; }
    go(`#/s/${sid}/entries?line=${hit.line}`);
  } }, label);
}

function blockEl(sid, e, b) {
  const wrap = h("div", { class: "block", "data-pointer": b.pointer });
  wrap.append(h("div", { class: "bhead" }, h("span", { class: "bkind " + b.kind }, b.kind.replace("_", " ")),
    h("span", { class: "mono" }, b.pointer), b.chars > 200 && !b.extracted ? h("span", {}, `${b.chars.toLocaleString()} chars`) : null));
  if (b.extracted) {
    const out = h("div");
    const btn = h("button", { class: "expand" }, "Show stored value");
    btn.addEventListener("click", async () => {
      btn.disabled = true;
      try {
        const v = await api(`/api/value?s=${sid}&line=${e.line}&id=${encodeURIComponent(e.id || "")}&ptr=${encodeURIComponent(b.pointer)}`);
        const pre = h("pre", { class: "text stored", "data-source": v.source }, v.text);
        out.replaceChildren(pre, h("div", { class: "note" }, `from the store, verified against ${v.blob} · ${bytes(v.bytes)}`));
        if (isLong(v.text)) out.append(folder(pre, null));
        btn.remove();
      } catch (err) { toast(err.message, true); btn.disabled = false; }
    });
    wrap.append(h("div", { class: "ph", title: b.extracted.blob },
      h("span", {}, "⇢ moved to the store:"), h("span", { class: "size" }, bytes(b.extracted.bytes)),
      h("span", { class: "mono muted" }, b.extracted.blob.slice(0, 19) + "…"), btn), out);
    return wrap;
  }
  const pre = h("pre", { class: "text " + b.kind }, b.text);
  wrap.append(pre);
  if (b.cut || isLong(b.text) || b.kind === "thinking") {
    // The rest of a cut value comes from the line when it is unfolded.
    wrap.append(folder(pre, b.cut ? async () => {
      const v = await api(`/api/value?s=${sid}&line=${e.line}&id=${encodeURIComponent(e.id || "")}&ptr=${encodeURIComponent(b.pointer)}`);
      b.cut = false;
      return v.text;
    } : null, b.cut ? `Show all ${b.chars.toLocaleString()} chars` : "Unfold"));
  }
  return wrap;
}

function isLong(text) { return text.split("\n").length > FOLD_LINES || text.length > 700; }

// folder folds pre and returns the link that unfolds it (loading the
// whole text first with more, when given) and folds it again.
function folder(pre, more, label) {
  pre.classList.add("folded");
  const t = h("a", { href: "#", class: "fold" }, label || "Unfold");
  t.addEventListener("click", async (ev) => {
    ev.preventDefault();
    if (pre.classList.contains("folded")) {
      if (more) {
        try { pre.textContent = await more(); more = null; } catch (err) { toast(err.message, true); return; }
      }
      pre.classList.remove("folded");
      t.textContent = "Fold";
    } else {
      pre.classList.add("folded");
      t.textContent = "Unfold";
    }
  });
  return t;
}

async function restore(sid, e) {
  try {
    const r = await api("/api/restore", { s: sid, id: e.id });
    await render();
    toast(`restored ${(r.result.keys_restored || []).length} value(s) of ${e.id}` + (r.result.suggestion ? "\n" + r.result.suggestion : ""));
  } catch (err) { toast(err.message, true); }
}

async function setExtractable(sid, e, value) {
  try {
    await api("/api/extractable", { s: sid, id: e.id, value });
    await render();
    toast(`_extractable of ${e.id} set to ${value}`);
  } catch (err) { toast(err.message, true); }
}

// --- where the tokens go -------------------------------------------------

const KIND_LABEL = { user: "user", assistant: "assistant", thinking: "thinking", tool_call: "tool calls",
  tool_result: "tool results", image: "images", other: "other" };

async function renderTokens(el, id) {
  el.replaceChildren(h("div", { class: "sub" }, "Counting (bs stats)…"));
  const st = await api("/api/stats?s=" + id);
  const kinds = Object.entries(st.kinds);
  const moved = st.extracted || { tokens: 0, bytes: 0, values: 0 };
  const kpis = h("div", { class: "kpis" },
    kpi(kilo(st.tokens), "tokens in the transcript (estimated)"),
    kpi(kilo(moved.tokens), `tokens moved to the store (${moved.values} values)`),
    kpi(st.would_free ? kilo(st.would_free.tokens) : "—", "bs extract would free"),
    kpi(st.lines.toLocaleString(), "lines" + (st.bad_lines ? ` (${st.bad_lines} not JSON)` : "")));
  const chartBox = h("div", { id: "kinds-chart" });
  const max = Math.max(1, ...kinds.map(([, k]) => k.tokens + k.extracted.tokens));
  const bars = kinds.map(([name, k]) => hbar(KIND_LABEL[name] || name, k.tokens, k.extracted.tokens, max));
  const tools = (st.tools || []).slice(0, 12);
  const tmax = Math.max(1, ...tools.map((t) => t.tokens + t.extracted_tokens));
  el.replaceChildren(kpis,
    h("div", { class: "charts" },
      h("div", { class: "panel" }, h("h2", {}, "By kind"), chartBox,
        h("div", { class: "legend" }, h("span", {}, h("i", { class: "live" }), "in the transcript"), h("span", {}, h("i", { class: "moved" }), "moved to the store"))),
      h("div", { class: "panel" }, h("h2", {}, "By kind, tokens"), ...bars),
      h("div", { class: "panel wide" }, h("h2", {}, "By tool"),
        tools.length ? tools.map((t) => hbar(t.name + ` (${t.calls})`, t.tokens, t.extracted_tokens, tmax)) : h("div", { class: "muted" }, "No tool calls.")),
      h("div", { class: "panel wide" }, h("h2", {}, "Largest entries"), largestTable(id, st.largest || []))));
  kindsChart(chartBox, kinds);
}

function kpi(v, k) { return h("div", { class: "kpi" }, h("div", { class: "v" }, v), h("div", { class: "k" }, k)); }

function hbar(label, live, moved, max) {
  const a = h("div", { class: "live" }); a.style.width = (100 * live / max) + "%";
  const b = h("div", { class: "moved" }); b.style.width = (100 * moved / max) + "%";
  return h("div", { class: "hbar" }, h("span", {}, label), h("div", { class: "track" }, a, b),
    h("span", { class: "num" }, kilo(live) + (moved ? " +" + kilo(moved) : "")));
}

function largestTable(id, rows) {
  if (!rows.length) return h("div", { class: "muted" }, "Nothing.");
  return h("table", { class: "plain" },
    h("thead", {}, h("tr", {}, ["line", "entry", "role", "kind", "tool", "tokens", "bytes"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((r) => h("tr", {},
      h("td", {}, h("a", { href: `#/s/${id}/entries?line=${r.line}` }, "#" + r.line)),
      h("td", { class: "mono" }, r.id || ""), h("td", {}, r.role || ""), h("td", {}, r.kind), h("td", {}, r.tool || ""),
      h("td", { class: "num" }, kilo(r.tokens)), h("td", { class: "num" }, bytes(r.bytes))))));
}

// kindsChart draws the kinds as grouped bars with uPlot.
function kindsChart(box, kinds) {
  const names = kinds.map(([n]) => KIND_LABEL[n] || n);
  const xs = kinds.map((_, i) => i);
  const live = kinds.map(([, k]) => k.tokens);
  const moved = kinds.map(([, k]) => k.extracted.tokens);
  const width = Math.max(320, box.clientWidth || 520);
  const opts = {
    width, height: 260, legend: { show: false }, cursor: { show: false },
    scales: { x: { time: false, range: [-0.6, kinds.length - 0.4] } },
    axes: [
      { values: (u, ticks) => ticks.map((t) => names[t] || ""), splits: () => xs, grid: { show: false }, font: "12px system-ui" },
      { values: (u, ticks) => ticks.map(kilo), size: 50, font: "12px system-ui", grid: { stroke: "#eef0f3" } },
    ],
    series: [{},
      { label: "in the transcript", stroke: "#2f5bd3", fill: "#2f5bd3", points: { show: false }, paths: uPlot.paths.bars({ size: [0.35, 60], align: -1 }) },
      { label: "moved to the store", stroke: "#a6bdf5", fill: "#a6bdf5", points: { show: false }, paths: uPlot.paths.bars({ size: [0.35, 60], align: 1 }) }],
  };
  box.replaceChildren();
  new uPlot(opts, [xs, live, moved], box);
}

// --- the context timeline ------------------------------------------------

async function renderTimeline(el, id) {
  el.replaceChildren(h("div", { class: "sub" }, "Reading the usage records…"));
  const tl = await api("/api/timeline?s=" + id);
  const box = h("div", { id: "timeline-chart" });
  el.replaceChildren(h("div", { class: "panel" },
    h("h2", {}, "Context at each usage record"),
    h("div", { class: "legend" }, h("span", {}, h("i", { class: "live" }), "tokens the provider counted"),
      h("span", {}, h("i", { class: "now" }), "what that context holds now that bs took content out"),
      h("span", {}, h("i", { class: "cmp" }), "compaction"), h("span", {}, h("i", { class: "roll" }), "bs roll"),
      h("span", {}, `window ${kilo(tl.window)}`)),
    box,
    h("div", { class: "note" }, tl.points.length ? `${tl.points.length} usage records over ${tl.lines} lines, in file order. Click a point to open its entry.`
      : "This session records no usage: its gauge is an estimate.")));
  if (!tl.points.length) return;
  const xs = tl.points.map((p) => p.line);
  const ys = tl.points.map((p) => p.tokens);
  const win = tl.points.map(() => tl.window);
  // What each usage's context holds now that bs took content out of it.
  const adjusted = tl.points.some((p) => p.now != null);
  const now = tl.points.map((p) => (p.now != null ? p.now : p.tokens));
  const marks = tl.marks;
  const opts = {
    width: Math.max(400, box.clientWidth || 900), height: 320,
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(max, tl.window) * 1.05] } },
    axes: [{ label: "line", font: "12px system-ui" }, { values: (u, t) => t.map(kilo), size: 56, font: "12px system-ui", grid: { stroke: "#eef0f3" } }],
    series: [{ label: "line" },
      { label: "context", stroke: "#2f5bd3", width: 2, fill: "rgba(47,91,211,0.10)", points: { show: tl.points.length < 80 } },
      { label: "window", stroke: "#d14343", width: 1, dash: [6, 4], points: { show: false } },
      { label: "as bs left it", stroke: "#0f8b8d", width: 2, points: { show: false }, show: adjusted }],
    hooks: {
      draw: [(u) => {
        const ctx = u.ctx;
        ctx.save();
        for (const m of marks) {
          const x = u.valToPos(m.line, "x", true);
          ctx.strokeStyle = m.kind === "roll" ? "#1f9d55" : "#d14343";
          ctx.lineWidth = 2 * devicePixelRatio;
          ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
        }
        ctx.restore();
      }],
    },
  };
  const plot = new uPlot(opts, [xs, ys, win, now], box);
  plot.over.addEventListener("click", () => {
    const i = plot.cursor.idx;
    if (i != null) go(`#/s/${id}/entries?line=${xs[i]}`);
  });
}

// --- checkpoint ----------------------------------------------------------

async function renderCheckpoint(el, id) {
  const cp = await api("/api/checkpoint?s=" + id);
  if (!cp.found) {
    el.replaceChildren(h("div", { class: "panel empty" }, `No checkpoint for session key ${cp.key} yet. `,
      h("span", { class: "mono" }, "bs checkpoint --force FILE"), " writes one."));
    return;
  }
  el.replaceChildren(h("div", { class: "charts" },
    h("div", { class: "panel" }, h("h2", {}, `Rendered (${cp.id}, ${cp.count} kept)`), h("pre", { class: "text", id: "cp-text" }, cp.text)),
    h("div", { class: "panel" }, h("h2", {}, "YAML"), h("pre", { class: "text", id: "cp-yaml" }, cp.yaml))));
}

// --- actions -------------------------------------------------------------

function renderActions(el, id) {
  const out = h("div", { class: "result", id: "action-result" });
  el.replaceChildren(h("div", { class: "panel" },
    h("h2", {}, "Thin this session"),
    h("p", { class: "note" }, "Preview runs the filter on a copy (values go to a scratch store) and changes nothing. " +
      "Apply runs it in place exactly as 'bs FILTER -i' does: with bs's lock and the runtime's, refusing a file the agent " +
      "changed within the quiet period or holds open. Everything it moves can be put back with bs restore."),
    h("div", { class: "row" }, config.filters.map((f) => h("div", { class: "row panel" },
      h("strong", {}, "bs " + f),
      h("button", { id: "preview-" + f, onclick: () => act("preview", f) }, "Preview"),
      h("button", { class: "primary", id: "apply-" + f, onclick: () => act("apply", f) }, "Apply in place")))),
    out));
  async function act(kind, filter) {
    if (kind === "apply" && !confirm(`Run bs ${filter} -i on this session?`)) return;
    out.replaceChildren(h("div", { class: "sub" }, kind === "apply" ? "Rewriting…" : "Previewing…"));
    try {
      const c = await api("/api/" + kind, { s: id, filter });
      out.replaceChildren(changeEl(c));
    } catch (err) {
      out.replaceChildren(h("div", { class: "panel" }, h("strong", {}, "Refused: "), h("span", { class: "mono" }, err.message)));
    }
  }
}

function gaugeShort(g) { return `${Math.round(100 * g.ratio)}% · ${kilo(g.tokens)}`; }

function changeEl(c) {
  const cell = (k, a, b) => h("div", { class: "kpi" }, h("div", { class: "k" }, k), h("div", { class: "v" }, `${a} → ${b}`));
  return h("div", { class: "panel" },
    h("h2", {}, (c.applied ? "Applied: bs " : "Preview: bs ") + c.filter + (c.changed ? "" : " (nothing would change)")),
    h("div", { class: "cmp-grid" },
      cell("context (the gauge)", gaugeShort(c.gauge_before), gaugeShort(c.gauge_after)),
      cell("transcript tokens (estimated)", kilo(c.estimate_before), kilo(c.estimate_after)),
      cell("file size", bytes(c.bytes_before), bytes(c.bytes_after)),
      cell("lines", c.lines_before, c.lines_after)),
    h("p", { class: "note" }, `${c.moved_values} values (${bytes(c.moved_bytes)}) newly moved to the store; ` +
      `${kilo(c.estimate_before - c.estimate_after)} tokens fewer in the transcript. ` +
      (c.tokens_freed === 0 && c.estimate_before !== c.estimate_after
        ? "The gauge starts from the provider's last usage record, which counts what the context held when it was recorded: it moves with the next answer." : "")));
}

// --- search --------------------------------------------------------------

async function renderSearch(main, q) {
  setNav("search");
  const query = q.get("q") || "";
  const input = h("input", { type: "search", id: "search-q", value: query, placeholder: "words, a phrase, an error message…" });
  const form = h("form", { class: "row filters" }, input, h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (ev) => { ev.preventDefault(); go("#/search?q=" + encodeURIComponent(input.value)); });
  const results = h("div", { id: "hits" });
  const viewer = h("div", { id: "blob-view" });
  main.replaceChildren(h("h1", {}, "Search"), h("div", { class: "sub" }, "BM25 over everything bs moved to the store: extracted values, evicted entries, archived turns."),
    form, viewer, results);
  if (!query) return;
  results.replaceChildren(h("div", { class: "sub" }, "Searching…"));
  let data;
  try { data = await api("/api/search?q=" + encodeURIComponent(query)); } catch (err) {
    results.replaceChildren(h("div", { class: "panel empty" }, err.message)); return;
  }
  if (!data.hits.length) { results.replaceChildren(h("div", { class: "panel empty" }, "No match.")); return; }
  results.replaceChildren(...data.hits.map((hit) => {
    const el = h("div", { class: "hit", "data-entry": hit.entry_id },
      h("div", { class: "row" }, h("strong", {}, hit.session.split("/").pop()), h("span", { class: "chip" }, hit.kind),
        hit.tool ? h("span", { class: "tool" }, hit.tool) : null, h("span", { class: "eid" }, hit.entry_id),
        h("span", { class: "muted" }, hit.time || ""), hit.session_id ? null : h("span", { class: "muted" }, "(session not listed)")),
      snippet(hit.snippet));
    el.addEventListener("click", () => openHit(hit, viewer));
    return el;
  }));
}

function snippet(s) {
  const el = h("div", { class: "snip" });
  const re = /\[([^\[\]]*)\]/g;
  let last = 0, m;
  while ((m = re.exec(s))) {
    el.append(s.slice(last, m.index), h("mark", {}, m[1]));
    last = m.index + m[0].length;
  }
  el.append(s.slice(last));
  return el;
}

async function openHit(hit, viewer) {
  if (hit.session_id) {
    const loc = await api(`/api/locate?s=${hit.session_id}&id=${encodeURIComponent(hit.entry_id)}`);
    const e = loc.found.find((f) => f.match === "entry");
    if (e) { go(`#/s/${hit.session_id}/entries?line=${e.line}`); return; }
  }
  // Not in a listed session any more (a roll evicted it): show its place in the store.
  const b = await api("/api/blob?b=" + encodeURIComponent(hit.blob));
  viewer.replaceChildren(h("div", { class: "panel" }, h("h2", {}, `In the store: ${hit.blob}`),
    h("div", { class: "note" }, "The entry is no longer in the session (evicted by a roll, or the session is not listed). " +
      "bs restore --all on the transcript brings it back."),
    h("pre", { class: "text", id: "blob-text" }, b.text)));
  viewer.scrollIntoView();
}

// --- routing -------------------------------------------------------------

async function render() {
  const main = document.getElementById("main");
  document.getElementById("toast").hidden = true;
  const { parts, q } = route();
  try {
    if (parts[0] === "s" && parts[1]) await renderSession(main, parts[1], parts[2] || "entries", q);
    else if (parts[0] === "search") await renderSearch(main, q);
    else await renderSessions(main);
  } catch (err) {
    main.replaceChildren(h("div", { class: "panel empty" }, "Error: " + err.message));
  }
  document.body.dataset.ready = String(Date.now());
}

document.getElementById("topsearch").addEventListener("submit", (ev) => {
  ev.preventDefault();
  go("#/search?q=" + encodeURIComponent(document.getElementById("topsearch-q").value));
});
window.addEventListener("hashchange", render);
(async () => {
  try { config = await api("/api/config"); } catch (err) { /* rendered below */ }
  document.getElementById("mode").textContent = config.read_only ? "read-only" : "";
  render();
})();
