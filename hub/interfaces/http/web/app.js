// Bolt Hub's page: ask (typed or spoken), watch the reply stream in with its tool calls and a
// timeline, and see the hub's status and entities. Plain ES2020, no build step, no CDN.
// Every URL is relative so the page works at / and behind Home Assistant's ingress prefix.
"use strict";

const TOKEN_KEY = "boltHubToken";
const $ = (id) => document.getElementById(id);
let conversationId = null;
let persona = null; // the persona picked in the page (null: the hub's default)
let busy = false;

// --- API access ---------------------------------------------------------------------------

// The link the hub logs when it is ready carries ?token=: it is kept and taken out of the
// address, so a bookmark or a shared screenshot does not carry it.
function takeTokenFromLink() {
  const url = new URL(window.location.href);
  const token = url.searchParams.get("token");
  if (!token) return;
  localStorage.setItem(TOKEN_KEY, token.trim());
  url.searchParams.delete("token");
  history.replaceState(null, "", url.pathname + url.search + url.hash);
}

function authHeaders() {
  const token = localStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers || {}) } });
  if (response.status === 401) {
    await askForToken(Boolean(localStorage.getItem(TOKEN_KEY)));
    return api(path, options);
  }
  return response;
}

async function apiJson(path, options) {
  const response = await api(path, options);
  const body = await response.json();
  if (!response.ok) throw new Error(body.message || `HTTP ${response.status}`);
  return body;
}

// One dialog at a time, however many requests were refused meanwhile.
let tokenPrompt = null;

function askForToken(wasRejected) {
  if (!tokenPrompt) {
    tokenPrompt = new Promise((resolve) => {
      const dialog = $("token-dialog");
      $("token-error").hidden = !wasRejected;
      $("token-input").value = "";
      $("token-form").onsubmit = () => {
        localStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
        tokenPrompt = null;
        resolve();
      };
      dialog.showModal();
    });
  }
  return tokenPrompt;
}

// Server-sent events over fetch (EventSource cannot send the token header).
async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { name, data: JSON.parse(data.join("\n")) };
    }
  }
}

// --- rendering ----------------------------------------------------------------------------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

function newTurn(text) {
  const reply = el("div", { class: "bubble reply pending", "data-role": "reply" });
  const tools = el("ul", { class: "tools", "data-role": "tools" });
  const timeline = el("div", { class: "timeline", "data-role": "timeline" });
  const user = el("div", { class: "bubble user", "data-role": "user", text });
  const turn = el("div", { class: "turn" }, user, tools, reply, timeline);
  $("log").append(turn);
  scrollLog();
  return { user, reply, tools, timeline, toolItems: new Map() };
}

function scrollLog() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

function showToolStarted(view, call) {
  const item = el("li", { class: "tool", "data-tool": call.name, "data-ok": "pending" },
    el("code", { text: `${call.name}(${JSON.stringify(call.arguments)})` }), " …");
  view.tools.append(item);
  view.toolItems.set(call.id || `${call.name}:${view.toolItems.size}`, item);
  scrollLog();
}

function showToolFinished(view, call) {
  let item = view.toolItems.get(call.id);
  if (!item) {
    showToolStarted(view, call);
    item = view.tools.lastElementChild;
  }
  item.dataset.ok = String(call.ok);
  item.replaceChildren(
    el("code", { text: `${call.name}(${JSON.stringify(call.arguments)})` }),
    ` → ${call.ok ? "ok" : "failed"} in ${seconds(call.seconds)}`,
    el("pre", { "data-role": "tool-result", text: JSON.stringify(call.result) }));
}

const STAGE_NAMES = { stt: "speech-to-text", prefill: "prefill", thinking: "thinking", decode: "decode",
  reply: "reply until first audio", tools: "tools", tts: "speech", other: "other" };

// What the colours of a turn's bar mean (only the stages the bar shows), and the tick.
function legend(stages, withTick) {
  const keys = stages.map((name) => el("span", { style: `--c: var(--${name === "reply" ? "decode" : name})`, text: STAGE_NAMES[name] }));
  if (withTick) keys.push(el("span", { class: "mark-key", text: "first token" }));
  return el("div", { class: "legend", "data-role": "legend" }, ...keys);
}

function seconds(value) {
  return value >= 1 ? `${value.toFixed(2)} s` : `${Math.round(value * 1000)} ms`;
}

// One bar per turn: prefill, thinking, decode, tools, (speech) and the rest, scaled to the
// turn's total; a tick marks the first reply token.
function showTimeline(view, result, extraStages = {}) {
  const t = result.timings;
  const stages = [["prefill", t.prefill_s], ["thinking", t.thinking_s], ["decode", t.decode_s],
    ["tools", t.tools_s], ...Object.entries(extraStages)];
  const known = stages.reduce((sum, [, value]) => sum + (value || 0), 0);
  const total = Math.max(t.total_s, known, 1e-6);
  stages.push(["other", Math.max(0, total - known)]);
  const bar = el("div", { class: "bar", title: "turn timeline" });
  const shown = stages.filter(([, value]) => value > 0);
  for (const [name, value] of shown) {
    bar.append(el("span", { class: name, style: `width:${(100 * value) / total}%`, title: `${STAGE_NAMES[name] || name} ${seconds(value)}` }));
  }
  if (t.first_token_s > 0) bar.append(el("span", { class: "mark", style: `left:${Math.min(99.5, (100 * t.first_token_s) / total)}%`, title: "first token" }));
  const rate = t.decode_s > 0 ? ` (${(t.completion_tokens / t.decode_s).toFixed(1)} tok/s)` : "";
  const parts = [`${result.path === "fast_path" ? "fast path" : "model"}`,
    `prefill ${seconds(t.prefill_s)} (${t.evaluated_prompt_tokens}/${t.prompt_tokens} tok evaluated)`,
    `first token ${seconds(t.first_token_s)}`,
    `decode ${seconds(t.decode_s)}, ${t.completion_tokens} tok${rate}`,
    `tools ${seconds(t.tools_s)}`];
  for (const [name, value] of Object.entries(extraStages)) parts.push(`${name} ${seconds(value)}`);
  parts.push(`total ${seconds(total)}`);
  view.timeline.replaceChildren(bar, legend(shown.map(([name]) => name), t.first_token_s > 0),
    el("div", { "data-role": "timings", text: parts.join(" · ") }));
}

function finishTurn(view, result) {
  view.reply.classList.remove("pending");
  view.reply.textContent = result.reply;
  view.reply.classList.toggle("failed", !result.ok);
  for (const call of result.tool_calls) showToolFinished(view, call);
  showTimeline(view, result);
  conversationId = result.conversation_id || conversationId;
  $("conversation-id").textContent = conversationId ? `conversation ${conversationId}` : "";
  scrollLog();
}

// --- asking -------------------------------------------------------------------------------

// A request the hub refused before the turn began: its message in place of the reply.
async function showRefusal(view, response) {
  const problem = await response.json().catch(() => ({ message: `HTTP ${response.status}` }));
  view.reply.classList.remove("pending");
  view.reply.classList.add("failed");
  view.reply.textContent = problem.message;
}

async function ask(text) {
  const view = newTurn(text);
  const body = { text };
  if (conversationId) body.conversation_id = conversationId;
  if (persona) body.persona = persona;
  const response = await api("api/ask", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    await showRefusal(view, response);
    return;
  }
  for await (const event of readEvents(response)) {
    if (event.name === "chunk") {
      view.reply.textContent += event.data.text;
      scrollLog();
    } else if (event.name === "tool_started") {
      showToolStarted(view, event.data);
    } else if (event.name === "tool_finished") {
      showToolFinished(view, event.data);
    } else if (event.name === "done") {
      finishTurn(view, event.data);
    }
  }
}

async function onSubmit(event) {
  event.preventDefault();
  const input = $("ask-text");
  const text = input.value.trim();
  if (!text || busy) return;
  busy = true;
  $("send").disabled = true;
  input.value = "";
  try {
    await ask(text);
  } catch (error) {
    setState("error", String(error.message || error));
  } finally {
    busy = false;
    $("send").disabled = false;
    input.focus();
    refreshEntities();
  }
}

// --- speaking (when the hub has its voice routes and the browser a microphone) ------------

let recording = null;
let player = null;

async function startRecording() {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
  const context = new AudioContext();
  const source = context.createMediaStreamSource(stream);
  const processor = context.createScriptProcessor(4096, 1, 1);
  const blocks = [];
  processor.onaudioprocess = (event) => blocks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
  source.connect(processor);
  processor.connect(context.destination);
  recording = { stream, context, source, processor, blocks };
}

async function stopRecording() {
  const { stream, context, source, processor, blocks } = recording;
  recording = null;
  processor.disconnect();
  source.disconnect();
  stream.getTracks().forEach((track) => track.stop());
  await context.close();
  return wavFile(blocks, context.sampleRate);
}

// 16-bit mono PCM in a WAV container, at the microphone's own rate (the hub converts).
function wavFile(blocks, rate) {
  const samples = blocks.reduce((sum, block) => sum + block.length, 0);
  const view = new DataView(new ArrayBuffer(44 + samples * 2));
  const text = (offset, value) => [...value].forEach((c, i) => view.setUint8(offset + i, c.charCodeAt(0)));
  text(0, "RIFF"); view.setUint32(4, 36 + samples * 2, true); text(8, "WAVE");
  text(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
  view.setUint32(24, rate, true); view.setUint32(28, rate * 2, true); view.setUint16(32, 2, true);
  view.setUint16(34, 16, true); text(36, "data"); view.setUint32(40, samples * 2, true);
  let offset = 44;
  for (const block of blocks) {
    for (const sample of block) {
      view.setInt16(offset, Math.max(-1, Math.min(1, sample)) * 0x7fff, true);
      offset += 2;
    }
  }
  return new Blob([view.buffer], { type: "audio/wav" });
}

// Plays the reply's PCM chunks back to back as they arrive.
function playChunk(base64) {
  if (!player || player.width !== 2) return;
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const pcm = new Int16Array(bytes.buffer, 0, Math.floor(bytes.length / 2));
  const frames = Math.floor(pcm.length / player.channels);
  if (!frames) return;
  const buffer = player.context.createBuffer(player.channels, frames, player.rate);
  for (let channel = 0; channel < player.channels; channel++) {
    const data = buffer.getChannelData(channel);
    for (let i = 0; i < frames; i++) data[i] = pcm[i * player.channels + channel] / 0x8000;
  }
  const node = player.context.createBufferSource();
  node.buffer = buffer;
  node.connect(player.context.destination);
  player.at = Math.max(player.at, player.context.currentTime);
  node.start(player.at);
  player.at += buffer.duration;
}

async function* readLines(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (line) yield JSON.parse(line);
    }
  }
}

// Voice timings count from the end of the spoken request.
function showVoiceTimeline(view, done) {
  const t = done.timings;
  const total = Math.max(t.total_s || 0, 1e-6);
  const stt = t.stt_s || 0;
  const toAudio = t.first_audio_s ? t.first_audio_s - stt : 0;
  const bar = el("div", { class: "bar", title: "voice turn timeline" });
  const spans = [["stt", stt, `speech-to-text ${seconds(stt)}`], ["reply", toAudio, "reply until first audio"],
    ["tts", Math.max(0, total - stt - toAudio), "speaking"]].filter(([, value]) => value > 0);
  for (const [name, value, title] of spans) {
    bar.append(el("span", { class: name === "reply" ? "decode" : name, style: `width:${(100 * value) / total}%`, title }));
  }
  const parts = [`voice (${seconds(t.input_audio_s)} of audio)`];
  for (const [name, value] of [["speech-to-text", t.stt_s], ["first token", t.first_token_s],
    ["first sentence", t.first_sentence_s], ["first audio", t.first_audio_s], ["total", t.total_s]]) {
    if (value !== null && value !== undefined) parts.push(`${name} ${seconds(value)}`);
  }
  view.timeline.replaceChildren(bar, legend(spans.map(([name]) => name), false),
    el("div", { "data-role": "timings", text: parts.join(" · ") }));
}

async function speak(wav) {
  const view = newTurn("(speaking…)");
  const userBubble = view.user;
  const query = new URLSearchParams(conversationId ? { conversation_id: conversationId } : {});
  if (persona) query.set("persona", persona);
  const response = await api(`api/voice?${query}`, { method: "POST", headers: { "Content-Type": "audio/wav" }, body: wav });
  if (!response.ok) {
    await showRefusal(view, response);
    return;
  }
  for await (const event of readLines(response)) {
    if (event.type === "transcript") {
      userBubble.textContent = `(spoken) ${event.text}`;
    } else if (event.type === "reply") {
      view.reply.textContent += event.text;
    } else if (event.type === "audio_start") {
      player = { context: player?.context || new AudioContext(), rate: event.rate, width: event.width, channels: event.channels, at: 0 };
    } else if (event.type === "audio") {
      playChunk(event.data);
    } else if (event.type === "error") {
      view.tools.append(el("li", { class: "tool", "data-ok": "false", "data-role": "voice-error", text: `${event.stage}: ${event.message} (${event.detail})` }));
    } else if (event.type === "done") {
      view.reply.classList.remove("pending");
      view.reply.textContent = event.reply || view.reply.textContent;
      view.reply.classList.toggle("failed", !event.ok);
      if (!event.transcript) userBubble.textContent = "(spoken, not understood)";
      conversationId = event.conversation_id || conversationId;
      $("conversation-id").textContent = conversationId ? `conversation ${conversationId}` : "";
      showVoiceTimeline(view, event);
    }
    scrollLog();
  }
}

async function onMic() {
  const mic = $("mic");
  if (busy && !recording) return;
  try {
    if (!recording) {
      busy = true;
      await startRecording();
      mic.classList.add("recording");
      mic.title = "Click to send";
      return;
    }
    mic.classList.remove("recording");
    mic.title = "Click to speak";
    mic.disabled = true;
    await speak(await stopRecording());
  } catch (error) {
    setState("error", String(error.message || error));
  } finally {
    if (!recording) {
      busy = false;
      mic.disabled = false;
      refreshEntities();
    }
  }
}

function offerMicrophone(status) {
  const hasRoute = status.speech.routes.some((r) => r.method === "POST" && r.path === "/api/voice");
  $("mic").hidden = !(hasRoute && navigator.mediaDevices && window.AudioContext);
}

// --- status and entities ------------------------------------------------------------------

function setState(state, text) {
  const pill = $("hub-state");
  pill.dataset.state = state;
  pill.textContent = text;
}

// While the model loads and primes, /health says "warming", with the stage and its progress.
// One watch at a time: the periodic refresh joins the one running.
let warming = null;
function waitUntilWarm() {
  warming ||= watchWarmUp().finally(() => { warming = null; });
  return warming;
}

async function watchWarmUp() {
  for (;;) {
    const health = await fetch("health", { cache: "no-store" }).then((r) => r.json()).catch(() => null);
    if (health && health.status === "ok") {
      $("warmup").hidden = true;
      return;
    }
    if (health) {
      const { progress, label, elapsed_s: elapsed } = health.startup;
      setState("warming", `warming up ${Math.round(progress * 100)}%`);
      $("warmup").hidden = false;
      $("warmup-progress").value = progress;
      $("warmup-label").textContent = `${label}… (${Math.round(elapsed)} s)`;
    } else {
      setState("error", "unreachable");
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// The configured model downloading while the stand-in serves (/health's startup.download):
// bytes, rate and time left; what went wrong and what to do; then the switch to it.
async function watchDownload() {
  for (;;) {
    // with the token, /health names the repository and says what went wrong
    const health = await fetch("health", { cache: "no-store", headers: authHeaders() })
      .then((r) => r.json()).catch(() => null);
    const download = health && health.startup.download;
    if (!download) {
      $("download").hidden = true;
      return;
    }
    showDownload(download);
    if (download.state === "done") refreshStatus();
    if (download.state === "done" || (download.state === "failed" && !download.retrying)) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function showDownload(d) {
  const box = $("download");
  box.hidden = false;
  box.dataset.state = d.state;
  const bar = $("download-progress");
  bar.hidden = d.state === "failed" || d.state === "done";
  bar.value = d.total_bytes ? d.bytes / d.total_bytes : 0;
  const name = d.repo ? `${d.repo}/${d.file}` : "the model";
  let text;
  if (d.state === "failed") {
    text = `Model download failed: ${d.message || d.reason} The stand-in keeps serving.`;
  } else if (d.state === "done") {
    text = `Switched to the downloaded model ${name}.`;
  } else if (d.state === "downloading" || d.state === "verifying") {
    const left = d.eta_s == null ? "" : `, about ${duration(d.eta_s)} left`;
    const verb = d.state === "verifying" ? "Checking" : "Downloading";
    text = `${verb} ${name}: ${megabytes(d.bytes)} of ${megabytes(d.total_bytes)}, ${megabytes(d.rate_bps)}/s${left}` +
      " — the stand-in answers meanwhile.";
  } else {
    text = `${d.state === "pending" || d.state === "checking" ? "Preparing" : "Loading"} ${name}…`;
  }
  $("download-label").textContent = text;
  $("download-label").className = d.state === "failed" ? "error" : "";
}

function duration(total) {
  const m = Math.floor(total / 60);
  return m ? `${m} min ${Math.round(total % 60)} s` : `${Math.round(total)} s`;
}

function megabytes(bytes) {
  return bytes == null ? "?" : `${(bytes / 1e6).toFixed(1)} MB`;
}

async function refreshStatus() {
  await waitUntilWarm();  // "ready" only once /health says so (a hub warming up, or switching models)
  try {
    const status = await apiJson("api/status");
    setState("ok", "ready");
    offerMicrophone(status);
    $("model-name").textContent = `${status.model.name}${status.model.stand_in ? " (stand-in)" : ""}`;
    const rows = [
      ["Version", status.version],
      ["Model", `${status.model.name} · ${status.model.architecture} · ctx ${status.model.n_ctx}`],
      ["Home", status.home_sources.join(", ") || "no entities yet"],
      ["Entities", status.entities],
      ["Uptime", seconds(status.uptime_s)],
      ["Conversational", status.settings.conversational_mode ? "on" : "off"],
      ["Reasoning", `${status.settings.reasoning} (budget ${status.settings.reasoning_budget})`],
      ["Languages", status.languages.join(" ")],
      // devices that answer to the same name (a command naming them asks which one): rename one
      ...status.namesakes.map((n) => ["Same name", `${n.name}: ${n.entity_ids.join(", ")}`]),
      // state files found damaged at start: what was wrong, what the hub did, where the content is
      ...status.set_aside.map((f) => ["Set aside", `${f.file}: ${f.problem}; ${f.outcome}` +
        (f.copy ? ` (its content: ${f.copy})` : "")]),
    ];
    $("status").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v) })]));
  } catch (error) {
    setState("error", "unreachable");
  }
}

async function refreshEntities() {
  try {
    const entities = await apiJson("api/entities");
    $("entity-count").textContent = `(${entities.length})`;
    $("entities").tBodies[0].replaceChildren(...entities.map((e) => el("tr", { "data-entity": e.entity_id },
      el("td", { title: e.entity_id, text: e.name }), el("td", { text: e.area || "" }),
      el("td", { class: `state-${e.state}`, text: e.state }))));
  } catch (error) {
    $("entity-count").textContent = "(unavailable)";
  }
}

// --- personas -----------------------------------------------------------------------------

async function loadPersonas() {
  const select = $("persona");
  try {
    const personas = await apiJson("api/personas");
    select.replaceChildren(...personas.map((p) => el("option", { value: p.key, text: p.name })));
    const fallback = personas.find((p) => p.default);
    if (fallback) select.value = fallback.key;
    persona = select.value || null;
    select.hidden = personas.length < 2; // only the home assistant: nothing to pick
  } catch (error) {
    select.hidden = true;
  }
}

function newConversation() {
  conversationId = null;
  $("conversation-id").textContent = "";
  $("log").replaceChildren();
}

// A new conversation with the picked persona, opened by its greeting (if it has one).
async function switchPersona() {
  persona = $("persona").value;
  newConversation();
  try {
    const greeting = await apiJson(`api/personas/${encodeURIComponent(persona)}/greet`, { method: "POST" });
    conversationId = greeting.conversation_id;
    $("conversation-id").textContent = `conversation ${conversationId}`;
    if (greeting.reply) {
      $("log").append(el("div", { class: "turn" },
        el("div", { class: "bubble reply", "data-role": "greeting", text: greeting.reply })));
    }
  } catch (error) {
    $("log").append(el("div", { class: "bubble reply failed", text: error.message }));
  }
}

function start() {
  $("ask-form").addEventListener("submit", onSubmit);
  $("mic").addEventListener("click", onMic);
  $("new-conversation").addEventListener("click", newConversation);
  $("persona").addEventListener("change", switchPersona);
  takeTokenFromLink();
  waitUntilWarm().then(refreshStatus).then(refreshEntities).then(loadPersonas).then(watchDownload);
  setInterval(refreshStatus, 30000);
}

document.addEventListener("DOMContentLoaded", start);
