// The reference page at /docs: one self-contained HTML document (no CDN, no build step) that reads
// /api/openapi.json from the same server and lists every operation by tag — summary, who may call,
// parameters, the request body's and the answer's schemas — with a filter box.
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>revintel API reference</title>
<style>
  :root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de; --get: #0a6e31; --post: #0550ae; --other: #8a4600; }
  @media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --line: #30363d; --get: #3fb950; --post: #58a6ff; --other: #d29922; } }
  body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 70rem; padding: 1rem; }
  header { border-bottom: 1px solid var(--line); margin-bottom: 1rem; }
  label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
  input { font: inherit; width: 100%; max-width: 30rem; padding: .4rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
  :focus-visible { outline: 3px solid var(--post); outline-offset: 2px; }
  details { border: 1px solid var(--line); border-radius: 6px; margin: .4rem 0; }
  summary { cursor: pointer; padding: .5rem .75rem; display: flex; gap: .75rem; align-items: baseline; flex-wrap: wrap; }
  .method { font: 700 .8rem/1 ui-monospace, monospace; min-width: 3.5rem; }
  .GET { color: var(--get); } .POST { color: var(--post); } .PUT, .PATCH, .DELETE { color: var(--other); }
  code, pre { font: .85rem/1.4 ui-monospace, monospace; }
  .body { padding: 0 .75rem .75rem; }
  pre { overflow: auto; padding: .5rem; border: 1px solid var(--line); border-radius: 6px; max-height: 24rem; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  .muted { color: var(--muted); }
</style>
</head>
<body>
<header><h1>revintel API reference</h1><p id="about" class="muted">Loading <a href="/api/openapi.json">/api/openapi.json</a>…</p></header>
<main>
  <label for="filter">Filter operations</label>
  <input id="filter" type="search" placeholder="path, summary or tag" autocomplete="off">
  <div id="operations" aria-live="polite"></div>
</main>
<script>
const el = (tag, attrs = {}, ...children) => { const node = document.createElement(tag); for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v); for (const c of children) node.append(c); return node; };
const resolve = (doc, value) => (value && value.$ref ? value.$ref.split('/').slice(1).reduce((o, k) => o[k], doc) : value);
function render(doc) {
  document.getElementById('about').textContent = doc.info.title + ' ' + doc.info.version + ' — ' + doc.info.description;
  const root = document.getElementById('operations');
  for (const tag of doc.tags) {
    const section = el('section', { 'data-tag': tag.name }, el('h2', {}, tag.name));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (!op.tags.includes(tag.name)) continue;
        const who = op.security.length === 0 ? 'no credentials' : Object.keys(op.security[0]).map((s) => s === 'bearer' ? 'API key (Bearer)' : s + ' signature').join(', ');
        const body = el('div', { class: 'body' }, el('p', {}, op.summary || ''), el('p', { class: 'muted' }, 'Authentication: ' + who));
        if (op.parameters) {
          const rows = op.parameters.map((p) => el('tr', {}, el('td', {}, el('code', {}, p.name)), el('td', {}, p.in), el('td', {}, p.required ? 'required' : 'optional'), el('td', {}, p.description || ''), el('td', {}, el('code', {}, JSON.stringify(p.schema)))));
          body.append(el('h3', {}, 'Parameters'), el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'Name'), el('th', {}, 'In'), el('th', {}, ''), el('th', {}, 'Description'), el('th', {}, 'Schema'))), el('tbody', {}, ...rows)));
        }
        if (op.requestBody) body.append(el('h3', {}, 'Request body'), el('pre', {}, JSON.stringify(Object.values(op.requestBody.content)[0].schema, null, 2)));
        for (const [status, answer] of Object.entries(op.responses)) {
          const response = resolve(doc, answer);
          const schema = response.content && Object.values(response.content)[0].schema;
          body.append(el('h3', {}, status + ' — ' + response.description), ...(schema && !schema.$ref ? [el('pre', {}, JSON.stringify(schema, null, 2))] : []));
        }
        const summary = el('summary', {}, el('span', { class: 'method ' + method.toUpperCase() }, method.toUpperCase()), el('code', {}, path), el('span', { class: 'muted' }, op.summary || ''));
        section.append(el('details', { 'data-search': (method + ' ' + path + ' ' + (op.summary || '') + ' ' + tag.name).toLowerCase() }, summary, body));
      }
    }
    root.append(section);
  }
  document.getElementById('filter').addEventListener('input', (event) => {
    const words = event.target.value.toLowerCase().split(/\\s+/).filter(Boolean);
    for (const d of document.querySelectorAll('details')) d.hidden = !words.every((w) => d.dataset.search.includes(w));
    for (const s of document.querySelectorAll('section')) s.hidden = [...s.querySelectorAll('details')].every((d) => d.hidden);
  });
}
fetch('/api/openapi.json').then((r) => { if (!r.ok) throw new Error('the document answered ' + r.status); return r.json(); }).then(render)
  .catch((e) => { document.getElementById('about').textContent = 'Could not load the API document: ' + e.message; });
</script>
</body>
</html>
`;
