// Bolt Hub's Test and Names pages (after app.js, whose helpers $, el, api and apiJson they use).
// Test: what the hub would understand and do with a sentence, done without acting (POST
// api/plan), and "Run it" (POST api/plan/<id>/run). Names: every entity, area and floor with
// the names the hub accepts, where each came from; add, remove, untarget (api/names).
"use strict";

// --- the three views ------------------------------------------------------------------------

function showView() {
  const wanted = (location.hash || "#chat").slice(1);
  const view = ["chat", "test", "names"].includes(wanted) ? wanted : "chat";
  for (const main of document.querySelectorAll("main[data-view]")) main.hidden = main.dataset.view !== view;
  for (const link of document.querySelectorAll("#views a")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (view === "test") fillPlanChoices();
  if (view === "names") loadNames();
}

// --- Test ---------------------------------------------------------------------------------

let planChoicesFilled = false;
let currentPlan = null;
let expiryTimer = null;

const VERDICTS = {
  would_run: "would run", would_ask: "would ask for a yes", not_allowed: "not allowed",
  rate_limited: "refused: changed too often", unchecked: "would run (not checked in a test)",
  reads: "reads the state", unknown_entity: "no such device", unsupported: "the device can't do that",
  invalid_arguments: "invalid arguments", tool_not_allowed: "not a tool of this persona",
  unknown_tool: "no such tool", malformed_call: "unreadable call",
};

async function fillPlanChoices() {
  if (planChoicesFilled) return;
  planChoicesFilled = true;
  try {
    const [status, entities, personas] = await Promise.all(
      [apiJson("api/status"), apiJson("api/entities"), apiJson("api/personas")]);
    $("plan-language").append(...status.languages.map((code) => el("option", { value: code, text: code })));
    const areas = [...new Set(entities.map((e) => e.area).filter(Boolean))].sort();
    $("plan-area").append(...areas.map((area) => el("option", { value: area, text: area })));
    $("plan-persona").replaceChildren(...personas.map((p) => el("option", { value: p.key, text: p.name })));
    const fallback = personas.find((p) => p.default);
    if (fallback) $("plan-persona").value = fallback.key;
  } catch (error) {
    planChoicesFilled = false;
  }
}

function percent(share) {
  return `${Math.round(share * 100)}%`;
}

function languageWhy(language) {
  const shares = Object.entries(language.confidences).map(([code, share]) => `${code} ${percent(share)}`);
  const why = language.given ? `named by the request (${language.given})`
    : shares.length ? `told from the text: ${shares.join(", ")}` : "the home's language (identification not loaded yet)";
  const tried = language.candidates.length > 1 ? `; tried ${language.candidates.join(", ")}` : "";
  return `${language.used} — ${why}${tried}`;
}

function pathText(plan) {
  if (plan.path === "fast_path") {
    const slots = plan.slots.map((s) => Object.entries(s).map(([k, v]) => `${k}: ${v}`).join(", ")).filter(Boolean);
    return `fast path · ${plan.intent || "?"}${slots.length ? ` · ${slots.join(" | ")}` : ""}`;
  }
  if (plan.path === "model") return "the model";
  return plan.path === "resolution" ? "resolution (which one? / not found)" : plan.path;
}

function showPlan(plan) {
  currentPlan = plan;
  $("plan").hidden = false;
  const facts = [["Language", languageWhy(plan.language)], ["Path", pathText(plan)], ["Persona", plan.persona]];
  if (plan.area || plan.device_id) facts.push(["Spoken", [plan.area, plan.device_id].filter(Boolean).join(" · ")]);
  if (plan.reply) facts.push(["It would say", plan.reply]);
  if (plan.withheld.length) facts.push(["Not spoken", plan.withheld.join(", ")]);
  $("plan-facts").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { "data-fact": k, text: v })]));
  $("plan-calls").replaceChildren(...(plan.calls.length ? plan.calls.map(callItem)
    : [el("li", { class: "muted", text: "none: it acts on nothing" })]));
  $("plan-tier").textContent = plan.tier ? `(best by ${plan.tier.replace("_", " and ")})` : "";
  $("plan-weighed").replaceChildren(...(plan.weighed.length ? plan.weighed.map((e) => el("li",
    { class: e.best ? "best" : "", "data-entity": e.entity_id, title: e.entity_id, text: `${e.name}${e.area ? ` (${e.area})` : ""}` }))
    : [el("li", { class: "muted", text: "none" })]));
  $("plan-outcome").hidden = true;
  $("plan-run").disabled = !plan.runnable;
  startExpiry(plan.expires_in_s);
}

function callItem(call) {
  const already = call.changes === false ? " (already so)" : "";
  const verdict = el("span", { class: "verdict", "data-verdict": call.verdict, text: (VERDICTS[call.verdict] || call.verdict) + already });
  const item = el("li", { class: "call", "data-verdict": call.verdict },
    el("code", { text: `${call.name}(${JSON.stringify(call.arguments)})` }), " ", verdict);
  if (call.service) item.append(el("div", { class: "muted", text: `service ${call.service}${call.entity_id ? ` on ${call.entity_id}` : ""}` }));
  if (call.message) item.append(el("div", { "data-role": "call-message", text: call.message }));
  return item;
}

function startExpiry(seconds) {
  clearInterval(expiryTimer);
  const until = Date.now() + seconds * 1000;
  const tick = () => {
    const left = Math.max(0, Math.round((until - Date.now()) / 1000));
    $("plan-expiry").textContent = left ? `runnable for ${duration(left)}` : "expired: test again to run it";
    if (!left) {
      $("plan-run").disabled = true;
      clearInterval(expiryTimer);
    }
  };
  tick();
  expiryTimer = setInterval(tick, 1000);
}

async function onPlan(event) {
  event.preventDefault();
  const text = $("plan-text").value.trim();
  if (!text) return;
  const body = { text };
  for (const [key, id] of [["language", "plan-language"], ["area", "plan-area"], ["device_id", "plan-device"], ["persona", "plan-persona"]]) {
    const value = $(id).value.trim();
    if (value) body[key] = value;
  }
  $("plan-send").disabled = true;
  $("plan-send").textContent = "Testing…";
  try {
    showPlan(await apiJson("api/plan", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }));
  } catch (error) {
    $("plan").hidden = false;
    $("plan-facts").replaceChildren(el("dt", { text: "Error" }), el("dd", { class: "error", text: error.message }));
    $("plan-calls").replaceChildren();
    $("plan-weighed").replaceChildren();
    $("plan-run").disabled = true;
  } finally {
    $("plan-send").disabled = false;
    $("plan-send").textContent = "Test";
  }
}

async function onRun() {
  if (!currentPlan) return;
  $("plan-run").disabled = true;
  const outcome = $("plan-outcome");
  outcome.hidden = false;
  try {
    const run = await apiJson(`api/plan/${encodeURIComponent(currentPlan.plan_id)}/run`, { method: "POST" });
    clearInterval(expiryTimer);
    $("plan-expiry").textContent = "ran: test again to run it again";
    outcome.replaceChildren(el("div", { class: `bubble reply${run.ok ? "" : " failed"}`, "data-role": "run-reply", text: run.reply || "(nothing to say)" }),
      el("ul", { class: "tools" }, ...run.tool_calls.map((c) => el("li", { class: "tool", "data-ok": String(c.ok) },
        el("code", { text: `${c.name}(${JSON.stringify(c.arguments)})` }), ` → ${c.ok ? "done" : c.result.error}`))));
    refreshEntities();
  } catch (error) {
    outcome.replaceChildren(el("p", { class: "error", text: error.message }));
  }
}

// --- Names --------------------------------------------------------------------------------

const ORIGINS = { home: "home", home_alias: "home alias", added: "added here", generated: "generated", translation: "translation" };
const SHOWN_CARDS = 60; // cards drawn at once; the search narrows the rest
let namesListing = null;

async function loadNames() {
  try {
    namesListing = await apiJson("api/names");
    $("names-error").hidden = true;
    drawNames();
  } catch (error) {
    showNamesError(error);
  }
}

function showNamesError(error) {
  $("names-error").hidden = false;
  $("names-error").textContent = error.message;
}

function folded(text) {
  return (text || "").normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
}

function matches(target, query) {
  if (!query) return true;
  const words = [target.target, target.name, target.area, ...target.names.map((n) => n.name)];
  return words.some((w) => folded(w).includes(query));
}

function drawNames() {
  if (!namesListing) return;
  const query = folded($("names-search").value.trim());
  const entities = namesListing.entities.filter((t) => matches(t, query));
  const places = [...namesListing.areas, ...namesListing.floors].filter((t) => matches(t, query));
  $("names-count").textContent = `(${entities.length} of ${namesListing.entities.length})`;
  const cards = entities.slice(0, SHOWN_CARDS).map(nameCard);
  if (entities.length > SHOWN_CARDS) cards.push(el("p", { class: "muted", text: `${entities.length - SHOWN_CARDS} more: search to narrow them down` }));
  $("names-entities").replaceChildren(...(cards.length ? cards : [el("p", { class: "muted", text: "nothing matches" })]));
  $("names-places").replaceChildren(...(places.length ? places.map(nameCard) : [el("p", { class: "muted", text: "nothing matches" })]));
}

function nameCard(target) {
  const card = el("div", { class: "card", "data-kind": target.kind, "data-target": target.target, "data-targeted": String(target.targeted) });
  const where = target.kind === "entity" ? `${target.target}${target.area ? ` · ${target.area}` : ""}`
    : target.kind === "floor" ? `floor${target.areas.length ? ` · ${target.areas.join(", ")}` : ""}` : "area";
  const header = el("header", {}, el("strong", { text: target.name }), el("span", { class: "muted", text: where }));
  if (target.kind === "entity") {
    const box = el("input", { type: "checkbox", "data-role": "targeted", "aria-label": `The hub may act on ${target.name}` });
    box.checked = target.targeted;
    box.addEventListener("change", () => setTargeted(target.target, box.checked));
    header.append(el("label", { class: "switch" }, box, target.targeted ? "the hub acts on it" : "untargeted: the hub leaves it be"));
  }
  const chips = el("div", { class: "chips" }, ...target.names.map((n) => nameChip(target, n)));
  const input = el("input", { maxlength: "100", placeholder: "another name", "aria-label": `Another name for ${target.name}` });
  const add = el("form", { class: "add-name" }, input, el("button", { type: "submit", text: "Add" }));
  add.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) changeName("POST", target, input.value.trim());
  });
  card.append(header, chips, add);
  if (target.removed.length) card.append(el("div", { class: "muted", text: `taken away: ${target.removed.join(", ")}` }));
  return card;
}

function nameChip(target, entry) {
  const label = entry.origin === "generated" ? `from ${entry.source}` : entry.origin === "translation" ? entry.source : ORIGINS[entry.origin];
  const chip = el("span", { class: "chip", "data-origin": entry.origin, "data-name": entry.name, title: ORIGINS[entry.origin] },
    entry.name, el("small", { text: label }));
  if (entry.removable) {
    const remove = el("button", { type: "button", "data-role": "remove-name", "aria-label": `Remove ${entry.name}`, text: "×" });
    remove.addEventListener("click", () => changeName("DELETE", target, entry.name));
    chip.append(remove);
  }
  return chip;
}

async function changeName(method, target, name) {
  try {
    await apiJson("api/names", { method, headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ kind: target.kind, target: target.target, name }) });
    await loadNames();
  } catch (error) {
    showNamesError(error);
  }
}

async function setTargeted(entityId, targeted) {
  const untargeted = new Set(namesListing.untargeted);
  if (targeted) untargeted.delete(entityId);
  else untargeted.add(entityId);
  try {
    await apiJson("api/names/untargeted", { method: "PUT", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ entity_ids: [...untargeted] }) });
    await loadNames();
  } catch (error) {
    showNamesError(error);
    await loadNames();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("names-search").addEventListener("input", drawNames);
  $("plan-form").addEventListener("submit", onPlan);
  $("plan-run").addEventListener("click", onRun);
  window.addEventListener("hashchange", showView);
  showView();
});
