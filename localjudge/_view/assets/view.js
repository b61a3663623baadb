// localjudge view: the page over results files, served by `localjudge view` or inlined by `localjudge report`.
// Plain JavaScript, no framework, no build. Every value from a results file reaches the page as text
// (textContent, never innerHTML), and every link it builds is a "#/..." link of this page.
"use strict";
(function () {
  const LONG = 100000; // characters of one text shown before a "show all" button
  const PAGE = 50;
  const NO_SHARED_ROWS = "no row id in common (runs of different sets?), so there is nothing to compare: a comparison sets the two verdicts on each row side by side";
  const embedded = document.getElementById("localjudge-data");
  const DATA = embedded ? JSON.parse(embedded.textContent) : null;
  const main = document.getElementById("main");
  const statusLine = document.getElementById("status");
  let followTimer = null;
  let shownVersion = null;

  // ---- elements, as text only

  function el(tag, options, children) {
    const node = document.createElement(tag);
    const o = options || {};
    if (o.cls) node.className = o.cls;
    if (o.text !== undefined && o.text !== null) node.textContent = String(o.text);
    if (o.href) node.setAttribute("href", o.href); // always "#/..." built below
    if (o.title) node.title = String(o.title);
    if (o.id) node.id = o.id;
    if (o.on) for (const [name, handler] of Object.entries(o.on)) node.addEventListener(name, handler);
    for (const child of children || []) if (child) node.appendChild(child);
    return node;
  }
  function text(value) { return document.createTextNode(value === null || value === undefined ? "" : String(value)); }
  function number(value, places) { return value === null || value === undefined ? "n/a" : Number(value).toFixed(places === undefined ? 3 : places); }
  function interval(pair) { return pair ? " (95% interval " + number(pair[0]) + " to " + number(pair[1]) + ")" : ""; }
  function probability(p) { return p === null || p === undefined ? "n/a" : p < 0.001 ? Number(p).toExponential(1) : number(p); }
  function asText(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }

  // a long text: the first LONG characters, and a button for the rest
  function block(value) {
    const full = asText(value);
    const pre = el("pre", { cls: "text", text: full.length > LONG ? full.slice(0, LONG) : full });
    if (full.length <= LONG) return pre;
    const more = el("button", { text: "show all " + full.length.toLocaleString() + " characters" });
    more.addEventListener("click", () => { pre.textContent = full; more.remove(); });
    return el("div", {}, [pre, more]);
  }
  function pairs(entries) {
    const list = el("dl", { cls: "pairs" });
    for (const [name, value] of entries) {
      if (value === undefined) continue;
      list.appendChild(el("dt", { text: name }));
      list.appendChild(el("dd", { cls: "data", text: value === null ? "not recorded" : value }));
    }
    return list;
  }
  function bars(counts, second) {
    const entries = Object.entries(counts || {});
    const peak = Math.max(1, ...entries.map(([, n]) => Number(n) || 0));
    const grid = el("div", { cls: "bars" });
    for (const [name, n] of entries) {
      const bar = el("div", { cls: "bar" + (second ? " second" : "") });
      bar.style.width = (100 * (Number(n) || 0) / peak).toFixed(1) + "%";
      grid.append(el("span", { cls: "data", text: name }), el("div", { cls: "track" }, [bar]), el("span", { cls: "num", text: typeof n === "number" && n <= 1 && !Number.isInteger(n) ? number(n) : n }));
    }
    return grid;
  }
  function card(title, children) { return el("section", { cls: "card" }, [el("h2", { text: title }), ...children]); }
  function link(hash, label) { return el("a", { href: hash, text: label }); }
  function rowHash(run, id) { return "#/run/" + run + "/row?id=" + encodeURIComponent(id); }

  // ---- where the data comes from: this server's API, or the data inlined in a report

  const api = DATA ? reportApi(DATA) : serverApi();

  function serverApi() {
    async function get(path) {
      const answer = await fetch(path, { credentials: "same-origin", cache: "no-store" });
      const body = await answer.json().catch(() => ({ error: answer.statusText }));
      if (!answer.ok) throw new Error(body.error || answer.statusText);
      return body;
    }
    return {
      follows: true,
      runs: () => get("/api/runs").then((b) => b.runs),
      pairs: () => get("/api/runs").then((b) => b.pairs),
      overview: (n) => get("/api/runs/" + n),
      version: (n) => get("/api/runs/" + n + "/version"),
      rows: (n, q) => get("/api/runs/" + n + "/rows?" + new URLSearchParams({ filter: q.filter, q: q.q, sort: q.sort, desc: q.desc ? "1" : "0", offset: String(q.offset), limit: String(PAGE) })),
      row: (n, id) => get("/api/runs/" + n + "/row?" + new URLSearchParams({ id })),
      compare: (a, b) => get("/api/compare/" + a + "/" + b),
      picture: (n) => "/api/runs/" + n + "/agreement.png",
    };
  }

  function reportApi(data) {
    const tests = {
      all: () => true, failed: (r) => r.failed, wrong: (r) => r.right === false,
      low_confidence: (r) => r.confidence !== null && r.confidence < 0.6,
      disagreeing: (r) => r.consistent === false, contradicting: (r) => r.contradicts,
    };
    return {
      follows: false,
      runs: async () => data.runs.map((run, number) => ({ number, name: run.overview.name, rows: run.rows.length })),
      pairs: async () => Object.entries(data.comparisons).map(([key, c]) => ({ first: Number(key.split("/")[0]), second: Number(key.split("/")[1]), shared: c.shared })).filter((p) => p.first < p.second),
      overview: async (n) => data.runs[n].overview,
      rows: async (n, q) => {
        const run = data.runs[n];
        const words = (q.q || "").toLowerCase();
        let found = run.rows.filter(tests[q.filter] || tests.all);
        if (words) found = found.filter((r) => JSON.stringify(run.details[r.id]).toLowerCase().includes(words));
        const key = q.sort || "position";
        found = found.slice().sort((a, b) => {
          const x = a[key], y = b[key];
          if (x === null && y !== null) return 1;
          if (y === null && x !== null) return -1;
          const order = x < y ? -1 : x > y ? 1 : 0;
          return (q.desc ? -order : order) || a.position - b.position;
        });
        return { total: found.length, rows: found.slice(q.offset, q.offset + PAGE), held: run.rows.length, of: run.overview.rows };
      },
      row: async (n, id) => {
        const found = data.runs[n].details[id];
        if (!found) throw new Error("no row with that id in this run");
        return found;
      },
      compare: async (a, b) => {
        const found = data.comparisons[a + "/" + b];
        if (!found) throw new Error("this report compares only the runs it was written with, in their order");
        return found;
      },
      picture: (n) => data.runs[n].picture || null,
    };
  }

  // ---- routes: #/, #/run/N, #/run/N/row?id=ID, #/compare/A/B

  function route() {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [path, query] = hash.split("?");
    const params = new URLSearchParams(query || "");
    const parts = path.split("/").filter(Boolean);
    if (followTimer) { clearInterval(followTimer); followTimer = null; }
    shownVersion = null;
    let shown;
    if (parts[0] === "run" && parts[2] === "row") shown = showRow(Number(parts[1]), params.get("id") || "");
    else if (parts[0] === "run") shown = showRun(Number(parts[1]), params);
    else if (parts[0] === "compare") shown = showCompare(Number(parts[1]), Number(parts[2]));
    else shown = showHome();
    shown.catch((error) => replace([el("p", { cls: "card error", text: "Could not show this: " + error.message })]));
  }
  function replace(children) { main.replaceChildren(...children); }

  async function showHome() {
    const runs = await api.runs();
    if (runs.length === 1) { location.replace("#/run/0"); return; }
    const list = el("ul");
    for (const run of runs) list.appendChild(el("li", {}, [link("#/run/" + run.number, run.name), text(" — " + run.rows.toLocaleString() + (run.rows === 1 ? " row" : " rows"))]));
    const comparisons = el("ul", { id: "comparisons" });
    for (const p of await api.pairs()) {
      const names = runs[p.first].name + " against " + runs[p.second].name;
      comparisons.appendChild(p.shared > 0
        ? el("li", {}, [link("#/compare/" + p.first + "/" + p.second, names), text(" — " + p.shared.toLocaleString() + " rows in both")])
        : el("li", { cls: "muted" }, [text(names + ": " + NO_SHARED_ROWS)]));
    }
    replace([el("h1", { text: "Runs" }), card("Results files", [list]), runs.length > 1 ? card("Two runs side by side", [comparisons]) : null].filter(Boolean));
  }

  async function navigation(current) {
    const runs = await api.runs();
    const nav = document.getElementById("runs");
    nav.replaceChildren(...runs.map((run) => el("a", { href: "#/run/" + run.number, text: run.name, cls: run.number === current ? "current" : "" })));
    if (runs.length > 1) {
      const comparable = (await api.pairs()).find((p) => p.shared > 0);
      if (comparable) nav.appendChild(link("#/compare/" + comparable.first + "/" + comparable.second, "compare"));
    }
    return runs;
  }

  // ---- one run: its overview and its rows

  async function showRun(n, params) {
    const runs = await navigation(n);
    const query = {
      filter: params.get("filter") || "all", q: params.get("q") || "", sort: params.get("sort") || "position",
      desc: params.get("desc") === "1", offset: Math.max(0, Number(params.get("offset") || 0)),
    };
    const page = await api.rows(n, query); // the rows first: a big run's figures take longer
    const run = runs.find((r) => r.number === n);
    const figures = el("div", { cls: "cards", id: "overview" }, [el("p", { cls: "muted", text: "Computing the run's figures…" })]);
    replace([el("h1", { cls: "data", text: run ? run.name : "run " + n }), figures, rowsSection(n, query, page)]);
    if (api.follows) follow(n, page.version);
    const shown = await api.overview(n);
    if (figures.isConnected) figures.replaceWith(overviewCards(n, shown));
  }

  function follow(n, version) {
    shownVersion = version;
    statusLine.textContent = "following the file";
    followTimer = setInterval(async () => {
      try {
        const now = await api.version(n);
        const reading = now.read < now.size ? "reading the file (" + Math.floor(100 * now.read / now.size) + "%): " : "following the file: ";
        statusLine.textContent = reading + now.rows.toLocaleString() + " rows, checked " + new Date().toLocaleTimeString();
        const typing = document.activeElement && document.activeElement.tagName === "INPUT";
        if (now.version !== shownVersion && !typing) route();
      } catch (error) { statusLine.textContent = "the server does not answer"; }
    }, 2000);
  }

  function overviewCards(n, f) {
    const cards = el("div", { cls: "cards", id: "overview" });
    cards.appendChild(card("Rows", [
      el("div", { cls: "figure", text: f.rows.toLocaleString() }),
      pairs([
        ["judged", f.judged], ["failed", f.failed], ["cached", f.cached === null ? null : f.cached],
        ["comments contradicting their verdict", f.contradicting],
        ["time per row", f.seconds_per_row === null ? null : number(f.seconds_per_row, 2) + " s (median of " + f.timed_rows + " rows; " + number(f.seconds_total, 1) + " s in all)"],
        ["lines that are not records", f.invalid_lines || undefined],
        ["rows to browse in this report", f.report_rows === undefined || f.report_rows >= f.rows ? undefined : f.report_rows + " (the first; the figures count every row)"],
        ["file", f.path],
      ]),
      Object.keys(f.errors).length ? el("h3", { text: "Errors" }) : null,
      Object.keys(f.errors).length ? bars(f.errors) : null,
    ]));
    const judge = f.judge;
    const described = Array.isArray(f.judges) && f.judges.length ? f.judges : null;
    cards.appendChild(card("Judge", [pairs([
      ["way of judging", Object.keys(judge.ways).join(", ") || null],
      ["result key", Object.keys(judge.keys).join(", ") || null],
      ["judge fingerprint", Object.keys(judge.fingerprints).join(", ") || null],
      ["calibrated verdicts", judge.calibrated],
      ["model requests", judge.requests || null],
      ["model, file checksum, prompt, schema", described ? undefined : null],
      ["described in", described ? f.judge_file : undefined],
      ["judges described that judged no row here", f.judges_elsewhere || undefined],
    ]),
    f.judge_file_error ? el("p", { cls: "muted", text: "The file that would describe the judge could not be read: " + f.judge_file_error }) : null,
    described ? null : el("p", { cls: "muted", text: "A results file names the judge by its fingerprint (a digest of its model file, prompt, schema and options); runs of this version describe it in a .judge.json file beside the results." })]));
    if (described) for (const j of described) cards.appendChild(judgeCard(j, described.length > 1));
    cards.appendChild(card("Scores", [bars(f.scores)]));
    if (f.pairs) {
      cards.appendChild(card("Pairs", [
        pairs([
          ["position consistency", f.pairs.position_consistency === undefined ? undefined : number(f.pairs.position_consistency)],
          ["asked in both orders", f.pairs.asked_both_orders],
          ["orders disagreed", f.pairs.orders_disagreed], ["ties", f.pairs.ties],
        ]),
        el("h3", { text: "Which side won" }), bars(f.pairs.winners, true),
      ]));
    }
    if (f.agreement) cards.appendChild(agreementCard(n, f.agreement, "Against the labels"));
    else cards.appendChild(card("Against the labels", [el("p", { cls: "muted", text: "No labels: give --labels FILE (the data file with a label column) to see accuracy, kappa, the confusion matrix and the reliability diagram." })]));
    return cards;
  }

  // one judge as the .judge.json beside the results describes it: every value shown as text
  function judgeCard(j, several) {
    const models = j.models || [];
    const join = (values) => values.filter((v) => v !== null && v !== undefined && v !== "").join("; ") || null;
    const checksum = (m) => m.sha256 ? m.sha256 + (m.sha256_from ? " (" + m.sha256_from + ")" : "") : "not known" + (m.sha256_from ? " (" + m.sha256_from + ")" : "");
    const run = j.last_run;
    const ran = run ? [run.started, "to", run.finished || "(not finished)", "—", run.rows, "rows,", run.rows_per_second === null ? "n/a" : number(run.rows_per_second, 2), "rows/s"].join(" ") : null;
    const children = [pairs([
      ["judge fingerprint", several ? j.fingerprint : undefined],
      ["rows it judged here", j.rows === null ? undefined : j.rows],
      ["model", join(models.map((m) => (m.role && m.role !== "judge" ? m.role + ": " : "") + m.spec))],
      ["model file", join(models.map((m) => m.file))],
      ["file checksum (sha256)", models.some((m) => m.kind === "local") ? join(models.filter((m) => m.kind === "local").map(checksum)) : undefined],
      ["servers", join(models.flatMap((m) => m.servers || [])) || undefined],
      ["way of judging", join((j.asked || []).map((a) => (a.way || "") + (a.way_described ? " (" + a.way_described + ")" : "") + (j.asked.length > 1 && a.rows ? ", rows " + a.rows : "")))],
      ["reasoning", j.reasoning === null || j.reasoning === undefined ? undefined : String(j.reasoning)],
      ["localjudge version", j.version],
      ["runs", j.runs], ["last run", ran],
    ])];
    for (const a of j.asked || []) {
      const rows = j.asked.length > 1 && a.rows ? " (rows " + a.rows + ")" : "";
      if (a.system) children.push(el("h3", { text: "System message" + rows }), block(a.system));
      children.push(el("h3", { text: "Prompt, as sent" + rows }), a.prompt !== null ? block(a.prompt) : el("p", { cls: "muted", text: a.prompt_note || "not recorded" }));
      if (a.schema) children.push(el("h3", { text: "The answer's JSON schema" + rows }), block(a.schema));
    }
    const shown = card(several ? "Judge " + j.fingerprint : "The judge, as described", children);
    shown.classList.add("wide");
    return shown;
  }

  function agreementCard(n, a, title) {
    const matrix = el("table", { cls: "matrix" });
    const head = el("tr", {}, [el("th", { text: "label \\ verdict" }), ...a.classes.map((c) => el("th", { cls: "data", text: c }))]);
    matrix.appendChild(head);
    a.confusion.forEach((row, i) => matrix.appendChild(el("tr", {}, [el("th", { cls: "data", text: a.classes[i] }), ...row.map((count) => el("td", { cls: "num", text: count }))])));
    const reliability = el("table", {}, [el("tr", {}, ["confidence", "verdicts", "mean confidence", "share right"].map((h) => el("th", { text: h })))]);
    for (const b of a.reliability) if (b.count) reliability.appendChild(el("tr", {}, [el("td", { text: number(b.low, 1) + "–" + number(b.high, 1) }), el("td", { cls: "num", text: b.count }), el("td", { cls: "num", text: number(b.mean_confidence) }), el("td", { cls: "num", text: number(b.accuracy) })]));
    const children = [
      pairs([
        ["rows compared", a.compared], ["accuracy", number(a.accuracy) + interval(a.accuracy_interval)],
        ["Cohen's kappa", number(a.kappa) + interval(a.kappa_interval)],
        ["calibration error (ECE)", a.ece === null ? undefined : number(a.ece) + " over " + a.with_probabilities + " verdicts"],
        ["verdicts without a label", a.without_label], ["labelled rows without a verdict", a.without_verdict],
      ]),
      el("h3", { text: "Confusion matrix" }), matrix,
    ];
    if (a.with_probabilities) children.push(el("h3", { text: "Reliability" }), reliability);
    const picture = n === null ? null : api.picture(n);
    if (picture) {
      const image = el("img", { cls: "plot" });
      image.alt = "reliability diagram and confusion matrix";
      image.addEventListener("error", () => image.remove());
      image.src = picture;
      children.push(image);
    }
    const shown = card(title, children);
    if (n !== null) shown.classList.add("wide");
    return shown;
  }

  const FILTERS = [["all", "All"], ["failed", "Failed"], ["wrong", "Wrong against the label"], ["low_confidence", "Low confidence"], ["disagreeing", "Orders disagree"], ["contradicting", "Comment contradicts verdict"]];
  const SORTS = [["position", "file order"], ["id", "id"], ["verdict", "verdict"], ["confidence", "confidence"], ["label", "label"]];

  function runHash(n, query, changes) {
    const q = Object.assign({}, query, changes);
    const params = new URLSearchParams();
    if (q.filter !== "all") params.set("filter", q.filter);
    if (q.q) params.set("q", q.q);
    if (q.sort !== "position") params.set("sort", q.sort);
    if (q.desc) params.set("desc", "1");
    if (q.offset) params.set("offset", String(q.offset));
    const tail = params.toString();
    return "#/run/" + n + (tail ? "?" + tail : "");
  }

  function rowsSection(n, query, page) {
    const go = (changes) => { location.hash = runHash(n, query, changes); };
    const filters = FILTERS.map(([name, label]) => el("button", { text: label, cls: query.filter === name ? "on" : "", on: { click: () => go({ filter: name, offset: 0 }) } }));
    const search = el("input");
    search.type = "search"; search.placeholder = "find text in the rows"; search.value = query.q; search.name = "q";
    search.addEventListener("keydown", (event) => { if (event.key === "Enter") go({ q: search.value, offset: 0 }); });
    const sort = el("select", {}, SORTS.map(([value, label]) => { const o = el("option", { text: "sort by " + label }); o.value = value; o.selected = value === query.sort; return o; }));
    sort.addEventListener("change", () => go({ sort: sort.value, offset: 0 }));
    const direction = el("button", { text: query.desc ? "descending" : "ascending", on: { click: () => go({ desc: !query.desc, offset: 0 }) } });
    const first = page.total ? query.offset + 1 : 0;
    const last = Math.min(query.offset + PAGE, page.total);
    const pager = el("div", { cls: "toolbar" }, [
      el("button", { text: "← previous", on: { click: () => go({ offset: Math.max(0, query.offset - PAGE) }) } }),
      el("span", { cls: "pages", text: "rows " + first.toLocaleString() + "–" + last.toLocaleString() + " of " + page.total.toLocaleString() }),
      el("button", { text: "next →", on: { click: () => { if (last < page.total) go({ offset: query.offset + PAGE }); } } }),
    ]);
    pager.firstChild.disabled = query.offset === 0;
    pager.lastChild.disabled = last >= page.total;
    const table = el("table", { id: "rows" }, [el("tr", {}, ["#", "id", "verdict", "confidence", "label", "", "flags", "comment or error"].map((h) => el("th", { text: h })))]);
    for (const r of page.rows) {
      const flags = el("td");
      if (r.failed) flags.appendChild(el("span", { cls: "tag bad", text: r.error_type || "failed" }));
      if (r.consistent === false) flags.appendChild(el("span", { cls: "tag warn", text: "orders disagree" }));
      if (r.contradicts) flags.appendChild(el("span", { cls: "tag warn", text: "contradicts" }));
      if (r.confidence !== null && r.confidence < 0.6) flags.appendChild(el("span", { cls: "tag", text: "low confidence" }));
      table.appendChild(el("tr", {}, [
        el("td", { cls: "num", text: r.position }),
        el("td", { cls: "data" }, [link(rowHash(n, r.id), r.id)]),
        el("td", { cls: "data", text: r.failed ? "—" : r.verdict }),
        el("td", { cls: "num", text: r.confidence === null ? "" : number(r.confidence) }),
        el("td", { cls: "data", text: r.label === null ? "" : r.label }),
        el("td", { cls: r.right === true ? "right" : r.right === false ? "wrong" : "", text: r.right === true ? "✓" : r.right === false ? "✗" : "" }),
        flags,
        el("td", { cls: "data excerpt", text: r.excerpt }),
      ]));
    }
    if (!page.rows.length) table.appendChild(el("tr", {}, [el("td", { text: "No row matches." })]));
    const held = page.held !== undefined && page.held < page.of ? page.held.toLocaleString() : null;
    const capped = held === null ? null : el("p", { cls: "muted", id: "report-cap", text: "This report holds the first " + held + " of the run's " + page.of.toLocaleString() + " rows whole: the table, its filters and its search cover those " + held + "; the figures above count every row. Write the report with --rows for more, or open the results file with localjudge view to page through every row." });
    return el("section", { cls: "card", id: "table" }, [el("h2", { text: "Rows" }), capped, el("div", { cls: "toolbar" }, [...filters]), el("div", { cls: "toolbar" }, [search, sort, direction]), pager, table].filter(Boolean));
  }

  // ---- one row

  async function showRow(n, id) {
    await navigation(n);
    const row = await api.row(n, id);
    const record = row.record || {};
    const result = record.result && typeof record.result === "object" ? record.result : null;
    const meta = result && result.metadata && typeof result.metadata === "object" ? result.metadata : {};
    const values = row.values || {};
    const parts = [el("p", {}, [link("#/run/" + n, "← the run")]), el("h1", { cls: "data", text: "Row " + row.id })];
    const verdict = result ? ("winner" in meta ? meta.winner : result.score) : null;
    parts.push(card("Verdict", [pairs([
      ["verdict", result ? asText(verdict) : "failed"],
      ["label", row.label === null ? undefined : row.label],
      ["against the label", row.right === null ? undefined : row.right ? "right" : "wrong"],
      ["key", result ? result.key : undefined], ["way", meta.way], ["model requests", meta.requests],
      ["calibrated", meta.calibrated === undefined ? undefined : String(meta.calibrated)],
    ])]));
    const asked = [];
    for (const name of ["inputs", "outputs", "reference_outputs", "outputs_a", "outputs_b"]) {
      if (!(name in values)) continue;
      if (name === "outputs" && isTrajectory(values[name])) asked.push(el("h3", { text: "outputs (a trajectory)" }), trajectory(values[name]));
      else asked.push(el("h3", { text: name }), block(values[name]));
    }
    for (const [name, value] of Object.entries(values)) if (!["inputs", "outputs", "reference_outputs", "outputs_a", "outputs_b"].includes(name)) asked.push(el("h3", { cls: "data", text: name }), block(value));
    parts.push(card("What was judged", asked.length ? asked : [el("p", { cls: "muted", text: "A results file holds verdicts, not the rows: give the data file with --labels to see inputs, outputs and reference here." })]));
    parts.push(exchangesCard(Array.isArray(meta.exchanges) ? meta.exchanges : record.error && Array.isArray(record.error.exchanges) ? record.error.exchanges : null));
    if (result) {
      const judged = [];
      if (meta.probabilities) judged.push(el("h3", { text: "Probabilities" }), bars(meta.probabilities));
      if (Array.isArray(meta.order_probabilities)) {
        const orders = el("div", { cls: "side" });
        meta.order_probabilities.forEach((probabilities, i) => orders.appendChild(el("div", {}, [el("h3", { text: i === 0 ? "First order (A then B)" : "Second order (B then A)" }), bars(probabilities, i === 1), el("p", { cls: "data", text: Array.isArray(meta.verdicts) ? "verdict: " + asText(meta.verdicts[i]) : "" })])));
        judged.push(orders);
      }
      if (meta.consistent !== undefined) judged.push(pairs([["orders agree", String(meta.consistent)], ["decided by", meta.decided_by]]));
      if (result.comment !== null && result.comment !== undefined) judged.push(el("h3", { text: "Reasoning / comment" }), block(result.comment));
      if (meta.self_reference !== undefined) judged.push(el("h3", { text: "The judge's own answer" }), block(meta.self_reference));
      if (meta.checklist !== undefined) judged.push(el("h3", { text: "The judge's checks" }), block(meta.checklist));
      if (meta.uncalibrated !== undefined) judged.push(el("h3", { text: "Before calibration" }), block(meta.uncalibrated));
      parts.push(card("The judge's answer", judged.length ? judged : [el("p", { cls: "muted", text: "Nothing more recorded." })]));
    }
    if (record.error) {
      const e = record.error;
      const shown = [pairs([["type", e.type], ["message", e.message], ["hint", e.hint]])];
      if (e.raw_output !== undefined) shown.push(el("h3", { text: "The model's raw output" }), block(e.raw_output));
      parts.push(el("section", { cls: "card error" }, [el("h2", { text: "Error" }), ...shown]));
    }
    parts.push(card("The whole record", [block(record)]));
    replace(parts);
  }

  // each request the judge was sent for the row, and the model's raw answer, where the run kept them
  function exchangesCard(exchanges) {
    if (!exchanges) return card("Messages sent", [el("p", { cls: "muted", text: "Not recorded: run batch with --keep-exchanges to keep each request sent to the judge and the model's raw answer." })]);
    const shown = [];
    exchanges.forEach((exchange, i) => {
      const e = exchange && typeof exchange === "object" ? exchange : {};
      shown.push(el("h3", { text: "Request " + (i + 1) + " of " + exchanges.length }));
      if (Array.isArray(e.messages)) shown.push(trajectory(e.messages));
      shown.push(el("h3", { text: "The model's raw answer" }));
      shown.push(e.output === null || e.output === undefined ? el("p", { cls: "muted", text: "no text: a reply read for its likelihood" }) : block(e.output));
    });
    return card("Messages sent and the raw answers", shown);
  }

  function isTrajectory(value) { return Array.isArray(value) || (value && typeof value === "object" && Array.isArray(value.messages)); }
  function trajectory(value) {
    const messages = Array.isArray(value) ? value : value.messages;
    const list = el("div");
    for (const message of messages) {
      const m = message && typeof message === "object" ? message : { content: message };
      const box = el("div", { cls: "message" }, [el("div", { cls: "role data", text: m.role || "message" })]);
      if (m.content !== undefined && m.content !== null && m.content !== "") box.appendChild(block(m.content));
      if (m.tool_calls) box.append(el("div", { cls: "role", text: "tool calls" }), block(m.tool_calls));
      list.appendChild(box);
    }
    return list;
  }

  // ---- two runs side by side

  async function showCompare(a, b) {
    const runs = await navigation(null);
    const c = await api.compare(a, b);
    const choose = (current, other, which) => {
      const select = el("select", {}, runs.map((run) => { const o = el("option", { text: run.name }); o.value = String(run.number); o.selected = run.number === current; return o; }));
      select.addEventListener("change", () => { location.hash = which === 0 ? "#/compare/" + select.value + "/" + other : "#/compare/" + other + "/" + select.value; });
      return select;
    };
    const parts = [el("h1", { text: "Two runs side by side" }), el("div", { cls: "toolbar" }, [choose(a, b, 0), text(" against "), choose(b, a, 1)])];
    if (c.shared === 0) {
      parts.push(card("Nothing to compare", [el("p", { id: "no-shared-rows", text: c.first.name + " and " + c.second.name + ": " + NO_SHARED_ROWS })]));
      replace(parts);
      return;
    }
    const summary = [pairs([
      ["rows in both", c.shared], ["only in the first", c.only_first], ["only in the second", c.only_second],
      ["verdicts that changed", c.changed_count],
    ])];
    if (c.mcnemar) {
      const m = c.mcnemar;
      summary.push(el("h3", { text: "McNemar's exact test" }), pairs([
        ["labelled rows both judged", m.rows], ["right in the first", m.first_right], ["right in the second", m.second_right],
        ["right only in the first", m.first_only], ["right only in the second", m.second_only],
        ["p", probability(m.p_value) + (m.p_value < 0.05 ? " (a split this lopsided is unlikely to be chance)" : " (the rows do not tell the two runs apart)")],
      ]));
    } else summary.push(el("p", { cls: "muted", text: "No labelled row has a verdict in both runs: McNemar's test needs labels." }));
    parts.push(el("div", { cls: "cards" }, [card("Changes", summary)]));
    const sides = el("div", { cls: "side" });
    for (const side of [c.first, c.second]) sides.appendChild(side.agreement ? agreementCard(null, side.agreement, side.name) : card(side.name, [el("p", { cls: "muted", text: side.rows + " rows; no labelled verdicts" })]));
    parts.push(sides);
    const table = el("table", { id: "changed" }, [el("tr", {}, ["id", "first run", "second run", "label"].map((h) => el("th", { text: h })))]);
    for (const change of c.changed) table.appendChild(el("tr", {}, [
      el("td", { cls: "data", text: change.id }),
      el("td", { cls: "data" }, [link(rowHash(a, change.id), change.first === null ? "failed" : change.first)]),
      el("td", { cls: "data" }, [link(rowHash(b, change.id), change.second === null ? "failed" : change.second)]),
      el("td", { cls: "data", text: change.label || "" }),
    ]));
    parts.push(el("section", { cls: "card" }, [el("h2", { text: "Rows whose verdict changed" + (c.changed_count > c.changed.length ? " (the first " + c.changed.length + ")" : "") }), table]));
    replace(parts);
  }

  window.addEventListener("hashchange", route);
  route();
})();
