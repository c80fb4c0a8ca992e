// strata console: polls /api/v1/ once a second and redraws only what is on screen (pages of 50 topics and
// partitions, the selected partition's segments), so it stays fast with thousands of partitions.
"use strict";

const PAGE = 50;
const MAX_SEGMENTS = 400;
const state = {
  topic: null, partition: null, topicOffset: 0, partOffset: 0, filter: "",
  prev: null, seenRlmm: new Set(), seenEvents: new Set(), firstEvents: true, tailFrom: null, seenTail: new Set(),
};

const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== null && v !== undefined) e.setAttribute(k, v);
  }
  for (const c of kids) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
async function api(path, opts) {
  const r = await fetch("/api/v1/" + path, opts);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}
const enc = encodeURIComponent;
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}
function num(n) { return n === null || n === undefined ? "–" : Number(n).toLocaleString("en"); }
function age(ms) {
  if (!ms || ms < 0) return "–";
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return s.toFixed(0) + " s";
  if (s < 3600) return (s / 60).toFixed(0) + " min";
  if (s < 86400) return (s / 3600).toFixed(1) + " h";
  return (s / 86400).toFixed(1) + " d";
}
function time(ms) { return ms ? new Date(ms).toLocaleTimeString() : "–"; }
function replace(node, ...kids) { node.replaceChildren(...kids); }
function pager(node, offset, total, onPage) {
  const last = Math.max(0, Math.ceil(total / PAGE) - 1), page = Math.floor(offset / PAGE);
  replace(node,
    el("button", { text: "‹", onclick: () => onPage(Math.max(0, page - 1) * PAGE), disabled: page === 0 ? "" : null }),
    el("span", { text: total ? `${offset + 1}–${Math.min(total, offset + PAGE)} of ${num(total)}` : "none" }),
    el("button", { text: "›", onclick: () => onPage(Math.min(last, page + 1) * PAGE), disabled: page >= last ? "" : null }));
}

// ---- overview tiles: rates from the difference of two running totals
function rate(cur, prev, get) {
  if (!prev) return null;
  const dt = (cur.now_ms - prev.now_ms) / 1000;
  const a = get(cur), b = get(prev);
  return dt > 0 && a !== undefined && b !== undefined ? Math.max(0, (a - b) / dt) : null;
}
function tile(k, v, bad) { return el("div", { class: "tile" + (bad ? " bad" : "") }, el("div", { class: "v", text: v }), el("div", { class: "k", text: k })); }
async function overview() {
  const o = await api("overview");
  const p = state.prev;
  const t = o.tiering;
  $("broker").textContent = `broker ${o.broker_id} · ${o.topics} topics · ${num(o.partitions)} partitions` +
    (t ? ` · tiering to ${t.backend} ${t.location}` : " · tiering off");
  const r = (g) => rate(o, p, g);
  const fmtRate = (v, f) => (v === null ? "…" : f(v) + "/s");
  const tiles = [
    tile("messages in", fmtRate(r((x) => x.messages_in), (v) => num(Math.round(v)))),
    tile("bytes in", fmtRate(r((x) => x.bytes_in), bytes)),
    tile("bytes out", fmtRate(r((x) => x.bytes_out), bytes)),
    tile("consumer lag", num(o.consumer_lag), o.consumer_lag > 0),
  ];
  if (t) {
    const store = Object.values(t.object_store);
    const sum = (x, f) => Object.values((x.tiering || {}).object_store || {}).reduce((a, s) => a + f(s), 0);
    const dReq = p && p.tiering ? sum(o, (s) => s.requests) - sum(p, (s) => s.requests) : 0;
    const dSec = p && p.tiering ? sum(o, (s) => s.seconds) - sum(p, (s) => s.seconds) : 0;
    const errors = store.reduce((a, s) => a + s.errors, 0);
    tiles.push(
      tile("copy lag", `${bytes(t.copy_lag_bytes)} · ${t.copy_lag_segments} seg`, t.copy_lag_segments > 0),
      tile("copied", fmtRate(r((x) => x.tiering && x.tiering.copy_bytes), bytes)),
      tile("remote fetch", fmtRate(r((x) => x.tiering && x.tiering.fetch_bytes), bytes)),
      tile("remote size", bytes(t.remote_size_bytes)),
      tile("object store latency", dReq > 0 ? (1000 * dSec / dReq).toFixed(1) + " ms" : "idle"),
      tile("object store errors", num(errors), errors > 0),
    );
  }
  replace($("tiles"), ...tiles);
  state.prev = o;
}

// ---- topics
async function topics() {
  const q = state.filter ? "&q=" + enc(state.filter) : "";
  const r = await api(`topics?offset=${state.topicOffset}&limit=${PAGE}${q}`);
  replace($("topics"), ...r.topics.map((t) => el("li", {
    class: t.name === state.topic ? "sel" : "", "data-topic": t.name,
    onclick: () => { state.topic = t.name; state.partition = null; state.partOffset = 0; state.tailFrom = null; state.seenTail.clear(); state.seenRlmm.clear(); refresh(); },
  }, el("span", { text: t.name }), el("span", {},
    t.remote_storage_enable ? el("span", { class: "badge tiered", text: "tiered" }) : null, " ",
    el("span", { class: "badge", text: t.partitions + "p" }), " ",
    el("span", { class: "muted", text: bytes(t.local_size_bytes + t.remote_size_bytes) })))));
  pager($("topics-pager"), state.topicOffset, r.total, (o) => { state.topicOffset = o; refresh(); });
}

// ---- partitions of the selected topic
async function partitions() {
  if (!state.topic) return;
  const r = await api(`topics/${enc(state.topic)}/partitions?offset=${state.partOffset}&limit=${PAGE}`);
  $("topic-title").textContent = state.topic;
  $("topic-meta").textContent = `${r.total} partitions`;
  replace($("partitions").tBodies[0], ...r.partitions.map((p) => el("tr", {
    class: p.partition === state.partition ? "sel" : "", "data-partition": p.partition,
    onclick: () => { state.partition = p.partition; state.tailFrom = null; state.seenTail.clear(); state.seenRlmm.clear(); refresh(); },
  }, el("td", { text: p.partition }), el("td", { text: num(p.log_start_offset) }), el("td", { text: num(p.local_log_start_offset) }),
    el("td", { text: num(p.high_watermark) }), el("td", { text: p.highest_remote_offset < 0 ? "–" : num(p.highest_remote_offset) }),
    el("td", { text: `${bytes(p.local_size_bytes)} · ${p.local_segments}` }),
    el("td", { text: `${bytes(p.remote_size_bytes)} · ${p.remote_segments}` }),
    el("td", { text: p.copy_lag_segments ? `${bytes(p.copy_lag_bytes)} · ${p.copy_lag_segments}` : "0" }))));
  pager($("partitions-pager"), state.partOffset, r.total, (o) => { state.partOffset = o; refresh(); });
  if (state.partition === null && r.partitions.length) state.partition = r.partitions[0].partition;
}

// ---- the selected partition: timeline, segments, RLMM records, tail
const CLASS = { "active": "active", "local": "local", "copying": "copying", "local+remote": "local-remote", "remote": "remote", "deleting": "deleting" };
async function partition() {
  const d = $("partition-detail");
  if (!state.topic || state.partition === null) { d.hidden = true; return; }
  const t = state.topic, p = state.partition;
  const s = await api(`topics/${enc(t)}/partitions/${p}/segments`);
  d.hidden = false;
  $("partition-title").textContent = `${t}-${p}`;
  const o = (k, v) => el("span", {}, k + " ", el("b", { text: v }));
  replace($("offsets"), o("log start", num(s.log_start_offset)), o("local log start", num(s.local_log_start_offset)),
    o("high watermark", num(s.high_watermark)),
    o("highest in remote", s.highest_remote_offset < 0 ? "–" : num(s.highest_remote_offset)),
    o("segments", `${s.segments.length}`));
  const segs = s.segments.slice(-MAX_SEGMENTS);
  replace($("timeline"), ...segs.map((g) => el("div", {
    class: "seg " + CLASS[g.state], "data-state": g.state, "data-base": g.base_offset,
    title: `${g.state}: offsets ${g.base_offset}–${g.end_offset}, ${bytes(g.size_bytes)}`,
  })));
  replace($("segments").tBodies[0], ...segs.slice().reverse().slice(0, 200).map((g) => el("tr", { "data-state": g.state },
    el("td", {}, el("span", { class: "state seg " + CLASS[g.state] }), g.state),
    el("td", { text: `${num(g.base_offset)} – ${num(g.end_offset)}` }), el("td", { text: bytes(g.size_bytes) }),
    el("td", { text: age(g.max_timestamp_ms) }),
    el("td", { class: "mono", text: g.remote ? `${g.remote.segment_id.slice(0, 8)}… ${g.remote.state}` : "" }))));
  const r = await api(`rlmm?topic=${enc(t)}&partition=${p}&limit=100`);
  feed($("rlmm"), r.records.slice().reverse(), state.seenRlmm, false, rlmmLine);
  if ($("tail-on").checked) await tail();
}
function rlmmLine(x) {
  const what = x.type === "partition_delete" ? "partition delete" : (x.start_offset !== undefined && x.start_offset !== null ? `[${x.start_offset}–${x.end_offset}]` : "");
  return el("li", { "data-state": x.state || "" }, el("span", { class: "muted", text: time(x.event_timestamp_ms) + " " }),
    el("b", { text: x.state || x.type }), " ", x.topic ? `${x.topic}-${x.partition} ` : "", what,
    el("span", { class: "muted mono", text: x.segment_id ? " " + String(x.segment_id).slice(0, 8) : "" }));
}
function feed(node, rows, seen, quiet, line) {
  const keyOf = (x) => `${x.metadata_partition}@${x.offset}`;
  const kids = rows.map((x) => {
    const li = line(x);
    if (!seen.has(keyOf(x)) && !quiet) li.classList.add("new");
    return li;
  });
  rows.forEach((x) => seen.add(keyOf(x)));
  replace(node, ...kids);
}
async function tail() {
  const t = state.topic, p = state.partition;
  const q = state.tailFrom === null ? "limit=20" : `offset=${state.tailFrom}&limit=100`;
  const r = await api(`topics/${enc(t)}/partitions/${p}/records?${q}`);
  const list = $("tail");
  if (state.tailFrom === null) list.replaceChildren();
  for (const x of r.records) {
    if (state.seenTail.has(x.offset)) continue;
    state.seenTail.add(x.offset);
    list.prepend(el("li", { class: state.tailFrom === null ? "" : "new" }, el("span", { class: "muted", text: `#${x.offset} ` }),
      x.key !== null ? el("b", { text: x.key + " " }) : null, x.value === null ? el("i", { text: "null" }) : x.value));
  }
  while (list.children.length > 100) list.lastChild.remove();
  state.tailFrom = r.next_offset;
}

// ---- groups and the global tiering event feed
async function groups() {
  const r = await api("groups");
  replace($("groups"), ...(r.groups.length ? r.groups.map((g) => el("div", { class: "group", "data-group": g.group },
    el("span", { class: "lag" + (g.total_lag > 0 ? " hot" : ""), text: "lag " + num(g.total_lag) }),
    el("b", { text: g.group }), " ", el("span", { class: "muted", text: `${g.state} · ${g.members.length} members` }),
    g.members.length ? el("div", { class: "muted mono", text: g.members.map((m) => `${m.client_id}@${m.host}`).join(", ") }) : null,
    g.partitions.length ? el("table", {}, el("tbody", {}, ...g.partitions.slice(0, 50).map((x) => el("tr", {},
      el("td", { text: `${x.topic}-${x.partition}` }), el("td", { text: num(x.committed) }), el("td", { text: "lag " + num(x.lag) }))))) : null))
    : [el("div", { class: "muted", text: "no consumer groups yet" })]));
}
async function events() {
  if (!state.prev || !state.prev.tiering) { replace($("events"), el("li", { class: "muted", text: "tiered storage is off" })); return; }
  const r = await api("rlmm?limit=40");
  feed($("events"), r.records.slice().reverse(), state.seenEvents, state.firstEvents, rlmmLine);
  state.firstEvents = false;
}

// ---- produce
$("produce").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  if (!state.topic) return;
  const out = $("produce-result");
  try {
    const r = await api(`topics/${enc(state.topic)}/produce`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ partition: state.partition || 0, key: $("produce-key").value, value: $("produce-value").value }),
    });
    out.textContent = `written at offset ${r.offset}`;
    $("produce-value").value = "";
    refresh();
  } catch (e) { out.textContent = "failed: " + e.message; }
});
let filterTimer;
$("topic-filter").addEventListener("input", (e) => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => { state.filter = e.target.value.trim(); state.topicOffset = 0; refresh(); }, 200);
});

// ---- the loop
let busy = false, tick = 0;
async function refresh() {
  if (busy) return;
  busy = true;
  try {
    await overview();
    await topics();
    if (!state.topic) {
      const first = document.querySelector("#topics li");
      if (first) state.topic = first.dataset.topic;
    }
    await partitions();
    await partition();
    if (tick % 2 === 0) { await groups(); await events(); }
    document.body.dataset.refreshes = String(tick + 1);
    $("live").className = "live";
    $("live").textContent = "● live";
  } catch (e) {
    $("live").className = "live stale";
    $("live").textContent = "● " + e.message;
  } finally {
    busy = false;
    tick++;
  }
}
refresh();
setInterval(refresh, 1000);
