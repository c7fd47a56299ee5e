/*
 * kerf serve's dashboard (docs/dashboard.md): the tenant tree, the GPU
 * map and the queue, read from kerf serve's read-only API every few
 * seconds.  It only ever GETs /api/v1/; every string from the API goes
 * into the page as text (textContent, never innerHTML), and nothing here
 * is inline in the page, so the Content-Security-Policy can forbid
 * inline script and style.
 */
'use strict';

(function () {
	const API = '/api/v1/';
	const params = new URLSearchParams(window.location.search);
	const intervalS = Math.min(3600, Math.max(1, parseInt(params.get('refresh'), 10) || 5));
	const last = {};           /* path -> the answer's text last rendered */
	const openExplain = new Map(); /* "ns/pod" -> the layers' row, while open */
	let busy = false;

	/* --- helpers ------------------------------------------------------- */

	/* An element with attributes (never style or on*) and text or nodes. */
	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);

		for (const [k, v] of Object.entries(attrs || {}))
			if (v !== null && v !== undefined && v !== false)
				e.setAttribute(k, v === true ? '' : String(v));
		for (const k of kids)
			if (k !== null && k !== undefined)
				e.append(typeof k === 'string' || typeof k === 'number' ? String(k) : k);
		return e;
	}

	function clear(node) {
		while (node.firstChild)
			node.removeChild(node.firstChild);
	}

	/* GPU-milli as GPUs: 2500 -> "2.5"; null (no limit) -> "no limit". */
	function gpus(milli) {
		return milli === null || milli === undefined ? 'no limit' : String(milli / 1000);
	}

	/* Seconds as kubectl's AGE: 42s, 3m12s, 5h4m, 2d3h. */
	function age(s) {
		s = Math.max(0, Math.floor(s || 0));
		if (s < 60)
			return s + 's';
		if (s < 3600)
			return Math.floor(s / 60) + 'm' + (s % 60 ? (s % 60) + 's' : '');
		if (s < 86400)
			return Math.floor(s / 3600) + 'h' + (s % 3600 >= 60 ? Math.floor(s % 3600 / 60) + 'm' : '');
		return Math.floor(s / 86400) + 'd' + (s % 86400 >= 3600 ? Math.floor(s % 86400 / 3600) + 'h' : '');
	}

	/* Light enough for dark text on each (ColorBrewer Set3, grey left out). */
	const PALETTE = ['#8dd3c7', '#ffffb3', '#bebada', '#fb8072', '#80b1d3', '#fdb462',
			 '#b3de69', '#fccde5', '#bc80bd', '#ccebc5', '#ffed6f', '#e5c494'];

	/* A stable colour per tenant name: FNV-1a of the name, mixed, into the palette. */
	function colour(name) {
		let h = 0x811c9dc5;

		if (!name)
			return '#d9d9d9';
		if (name === 'kerf-external')
			return '#bdbdbd';
		for (let i = 0; i < name.length; i++) {
			h ^= name.charCodeAt(i);
			h = Math.imul(h, 0x01000193) >>> 0;
		}
		h ^= h >>> 16;
		h = Math.imul(h, 0x85ebca6b) >>> 0;
		h ^= h >>> 13;
		return PALETTE[(h >>> 0) % PALETTE.length];
	}

	function swatch(name) {
		const s = el('span', { class: 'swatch', 'aria-hidden': 'true' });

		s.style.backgroundColor = colour(name);
		return s;
	}

	async function get(path) {
		const r = await fetch(API + path, { headers: { Accept: 'application/json' }, cache: 'no-store' });
		const text = await r.text();
		let body;

		try {
			body = JSON.parse(text);
		} catch (e) {
			throw new Error(path + ': not JSON (' + r.status + ')');
		}
		if (!r.ok)
			throw new Error(path + ': ' + (body && body.message ? body.message : r.status));
		return { text, body };
	}

	/* Keep the focused control focused across a redraw. */
	function keepFocus(draw) {
		const a = document.activeElement;
		const id = a && a.dataset ? a.dataset.focusId : undefined;

		draw();
		if (id) {
			const again = Array.from(document.querySelectorAll('[data-focus-id]'))
				.find((e) => e.dataset.focusId === id);
			if (again)
				again.focus();
		}
	}

	/* --- summary ------------------------------------------------------- */

	function summary(gpuList, queue) {
		const items = gpuList.items || [];
		const down = items.filter((g) => g.health === 'down').length;
		const used = items.filter((g) => g.health !== 'down' && g.pods.length > 0).length;

		document.getElementById('count-gpus').textContent = String(items.length);
		document.getElementById('count-used').textContent = String(used);
		document.getElementById('count-free').textContent = String(items.length - used - down);
		document.getElementById('count-down').textContent = String(down);
		document.getElementById('count-pending').textContent = String((queue.items || []).length);
		document.getElementById('count-waiting').textContent = String((queue.waiting || []).length);
	}

	/* --- tenants ------------------------------------------------------- */

	function budgetText(b) {
		if (!b)
			return '–';
		return b.usedPercent + '% of ' + b.limitGPUHours + ' GPU-h (' + b.action + ')';
	}

	function useCell(f) {
		const td = el('td', { class: 'use' });

		if (f.nominalGPUMilli === null) {
			td.append('no limit');
		} else if (f.nominalGPUMilli === 0) {
			td.append(f.usageGPUMilli > 0 ? 'borrowed only' : '–');
		} else {
			const pct = Math.round(100 * f.usageGPUMilli / f.nominalGPUMilli);

			td.append(el('meter', { min: 0, max: f.nominalGPUMilli, value: Math.min(f.usageGPUMilli, f.nominalGPUMilli),
						 'aria-label': 'usage of nominal' }),
				  el('span', { class: 'pct' }, pct + '%'));
		}
		return td;
	}

	function tenants(list) {
		const rows = document.getElementById('tenant-rows');
		const byName = new Map((list.items || []).map((t) => [t.name, t]));
		const depth = (t) => {
			let d = 0;

			for (let p = t.parent; p !== null && byName.has(p) && d < 32; p = byName.get(p).parent)
				d++;
			return d;
		};

		clear(rows);
		for (const t of list.items || []) {
			const flavors = t.flavors && t.flavors.length ? t.flavors : [null];
			const d = depth(t);

			flavors.forEach((f, i) => {
				const tr = el('tr', { 'data-tenant': t.name, 'data-flavor': f ? f.flavor : '',
						      'data-depth': d, class: i ? 'more' : 'first' });

				if (i === 0) {
					const name = el('th', { scope: 'row', rowspan: flavors.length,
							       class: 'tenant depth-' + Math.min(d, 6) });

					if (t.leaf)
						name.append(swatch(t.name));
					name.append(el('span', { class: 'tree', 'aria-hidden': 'true' },
								       d ? '└ ' : ''),
						    el('span', { class: 'name' }, t.name));
					if (t.parent !== null)
						name.append(el('span', { class: 'parent' }, 'in ' + t.parent));
					if (!t.leaf)
						name.append(el('span', { class: 'kind' }, 'parent'));
					tr.append(name);
				}
				if (f) {
					tr.append(el('td', { class: 'flavor' }, f.flavor),
						  el('td', { class: 'num nominal' }, gpus(f.nominalGPUMilli)),
						  el('td', { class: 'num usage' }, gpus(f.usageGPUMilli)),
						  el('td', { class: 'num borrowed' }, gpus(f.borrowedGPUMilli)),
						  useCell(f));
				} else {
					tr.append(el('td', { class: 'flavor', colspan: 5 }, 'no GPU flavor yet'));
				}
				if (i === 0)
					tr.append(el('td', { class: 'num pending', rowspan: flavors.length }, String(t.pending)),
						  el('td', { class: 'budget', rowspan: flavors.length }, budgetText(t.budget)));
				rows.append(tr);
			});
		}
	}

	/* --- GPU map ------------------------------------------------------- */

	/* Memory slices (of 8) of a MIG profile such as "3g.40gb" on a GPU of mem MiB. */
	function migSlices(profile, memMiB) {
		const m = /^(\d+)g\.(\d+)gb/.exec(profile || '');

		if (!m)
			return 1;
		if (memMiB)
			return Math.min(8, Math.max(1, Math.round(parseInt(m[2], 10) * 1024 * 8 / memMiB)));
		return Math.min(8, Math.max(1, Math.round(parseInt(m[1], 10) * 8 / 7)));
	}

	function seg(cls, widthPct, tenant, label, title) {
		const s = el('span', { class: 'seg ' + cls, 'data-tenant': tenant, title: title },
			     el('span', { class: 'seg-label' }, label));

		s.style.width = widthPct + '%';
		if (tenant)
			s.style.backgroundColor = colour(tenant);
		return s;
	}

	function podTitle(p) {
		return p.namespace + '/' + p.name + ' (' + p.tenant + ', ' + gpus(p.gpuMilli) + ' GPU, ' + p.share + ')';
	}

	function gpuBar(g) {
		const bar = el('div', { class: 'bar' });

		if (g.mode === 'mig') {
			bar.classList.add('mig');
			for (const m of g.mig || []) {
				const n = migSlices(m.profile, g.memoryMiB);
				const label = m.profile + (m.tenant ? ' ' + m.tenant : ' free') + (m.health === 'down' ? ' down' : '');
				const s = seg(m.pod ? 'inst used' : 'inst free', n * 12.5, m.tenant, label,
					      m.profile + '@' + m.start + (m.pod ? ': ' + m.pod + ' (' + m.tenant + ')' : ': free') +
					      (m.health === 'down' ? ', out of service' : ''));

				s.style.left = (m.start * 12.5) + '%';
				s.setAttribute('data-pod', m.pod || '');
				if (m.health === 'down')
					s.classList.add('down');
				bar.append(s);
			}
			return bar;
		}
		for (const p of g.pods) {
			const s = seg('pod', p.gpuMilli / 10, p.tenant, p.tenant, podTitle(p));

			s.setAttribute('data-pod', p.namespace + '/' + p.name);
			bar.append(s);
		}
		if (g.pods.length === 0 || g.freeMilli > 0)
			bar.append(seg('free', g.freeMilli / 10, null, 'free',
				       gpus(g.freeMilli) + ' GPU free'));
		return bar;
	}

	function gpuTile(g) {
		const who = g.mode === 'free' ? 'no pod' : g.mode + ', ' + (g.tenant ? g.tenant : 'several tenants');
		const label = 'GPU ' + g.index + ' of ' + g.node + ': ' + who +
			      (g.health === 'down' ? ', out of service' : '');
		const li = el('li', { class: 'gpu mode-' + g.mode + ' health-' + g.health, tabindex: 0,
				      'data-gpu': g.node + '/' + g.index, 'data-focus-id': 'gpu:' + g.node + '/' + g.index,
				      'data-mode': g.mode, 'data-health': g.health, 'data-free-milli': g.freeMilli,
				      'aria-label': label },
			       el('div', { class: 'gpu-head' },
				  el('span', { class: 'idx' }, 'GPU ' + g.index),
				  el('span', { class: 'mode' }, g.mode),
				  g.health === 'down' ? el('span', { class: 'badge-down' }, 'DOWN') : null),
			       gpuBar(g),
			       el('div', { class: 'gpu-foot' },
				  g.mode === 'mig' ? (g.mig || []).length + ' MIG instance' + ((g.mig || []).length === 1 ? '' : 's')
						   : gpus(g.freeMilli) + ' free'));

		li.title = label;
		return li;
	}

	function gpuMap(list) {
		const map = document.getElementById('gpu-map');
		const nodes = [];
		const tenantsSeen = new Set();

		for (const g of list.items || []) {
			if (!nodes.length || nodes[nodes.length - 1].name !== g.node)
				nodes.push({ name: g.node, model: g.model, gpus: [] });
			nodes[nodes.length - 1].gpus.push(g);
			for (const p of g.pods)
				tenantsSeen.add(p.tenant);
		}
		clear(map);
		for (const n of nodes) {
			const free = n.gpus.filter((g) => g.health !== 'down' && g.pods.length === 0).length;
			const down = n.gpus.filter((g) => g.health === 'down').length;
			const art = el('article', { class: 'node', 'data-node': n.name, 'aria-labelledby': 'node-' + nodes.indexOf(n) },
				       el('h3', { id: 'node-' + nodes.indexOf(n) }, n.name,
					  el('span', { class: 'meta' }, ' ' + (n.model || 'unknown model') + ' · ' + n.gpus.length +
					     ' GPUs · ' + free + ' free' + (down ? ' · ' + down + ' down' : ''))),
				       el('ul', { class: 'gpu-list' }, ...n.gpus.map(gpuTile)));

			map.append(art);
		}
		if (!nodes.length)
			map.append(el('p', { class: 'empty' }, 'No GPUs: no node with GPUs is known to kerf serve.'));
		legend([...tenantsSeen].sort());
	}

	function legend(names) {
		const lg = document.getElementById('legend');
		const ul = el('ul', {});
		const item = (cls, text, tenant) => {
			const s = el('span', { class: 'swatch ' + cls, 'aria-hidden': 'true' });

			if (tenant)
				s.style.backgroundColor = colour(tenant);
			return el('li', { 'data-legend': text }, s, text);
		};

		clear(lg);
		for (const n of names)
			ul.append(item('', n, n));
		ul.append(item('free', 'free'), item('down', 'down (out of service, hatched)'),
			  item('inst-free', 'MIG instance, free'));
		lg.append(el('h3', { class: 'visually-hidden' }, 'Legend'), ul);
	}

	/* --- queue --------------------------------------------------------- */

	function explainButton(pod) {
		const id = 'explain-' + pod.replace(/[^A-Za-z0-9_-]/g, '_');
		const b = el('button', { type: 'button', class: 'explain', 'aria-expanded': openExplain.has(pod) ? 'true' : 'false',
					 'aria-controls': id, 'data-pod': pod, 'data-focus-id': 'explain:' + pod }, 'Explain');

		b.addEventListener('click', () => toggleExplain(pod, b));
		return b;
	}

	async function fillExplain(pod, td) {
		const slash = pod.indexOf('/');
		const path = 'explain/' + encodeURIComponent(pod.slice(0, slash)) + '/' +
			     encodeURIComponent(pod.slice(slash + 1));

		try {
			const x = (await get(path)).body;
			const t = el('table', { class: 'layers' },
				     el('caption', {}, 'Why ' + pod + ' waits: ' + x.reason),
				     el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Layer'),
							el('th', { scope: 'col' }, 'Blocking'),
							el('th', { scope: 'col' }, 'What it says'))));
			const body = el('tbody', {});

			for (const l of x.layers || [])
				body.append(el('tr', { 'data-layer': l.layer, class: l.blocking ? 'blocking' : '' },
					       el('th', { scope: 'row' }, l.layer),
					       el('td', {}, l.blocking ? 'yes' : 'no'),
					       el('td', {}, l.message)));
			t.append(body);
			clear(td);
			td.append(t);
		} catch (e) {
			clear(td);
			td.append(el('p', { class: 'error' }, 'Cannot explain ' + pod + ': ' + e.message));
		}
	}

	function explainRow(pod, span) {
		const td = el('td', { colspan: span }, 'Loading…');
		const tr = el('tr', { class: 'explain-row', id: 'explain-' + pod.replace(/[^A-Za-z0-9_-]/g, '_') }, td);

		fillExplain(pod, td);
		return tr;
	}

	function toggleExplain(pod, button) {
		const row = button.closest('tr');

		if (openExplain.has(pod)) {
			openExplain.get(pod).remove();
			openExplain.delete(pod);
			button.setAttribute('aria-expanded', 'false');
			return;
		}
		const ex = explainRow(pod, row.children.length);

		row.after(ex);
		openExplain.set(pod, ex);
		button.setAttribute('aria-expanded', 'true');
	}

	/*
	 * After a redraw: the layers open before shown again under their
	 * button, as they were until read again (no flicker every refresh).
	 */
	function reopen(tbody) {
		for (const [pod, ex] of openExplain) {
			const b = Array.from(tbody.querySelectorAll('button.explain')).find((x) => x.dataset.pod === pod);

			if (b) {
				b.closest('tr').after(ex);
				fillExplain(pod, ex.firstChild);
			}
		}
	}

	function queue(q) {
		const rows = document.getElementById('queue-rows');
		const wrows = document.getElementById('waiting-rows');
		const shown = new Set();

		clear(rows);
		for (const w of q.items || []) {
			/* a single pod's workload is "ns/pod"; a gang's "ns/gang:g" */
			const pod = w.key.indexOf(':') < 0 ? w.key : null;

			if (pod)
				shown.add(pod);
			rows.append(el('tr', { 'data-key': w.key },
				       el('td', { class: 'num position' }, String(w.position)),
				       el('th', { scope: 'row', class: 'key' }, w.key),
				       el('td', { class: 'tenant' }, swatch(w.tenant), w.tenant),
				       el('td', { class: 'class' }, w['class']),
				       el('td', { class: 'num pods' }, String(w.pods)),
				       el('td', { class: 'num gpus' }, gpus(w.gpuMilli)),
				       el('td', { class: 'num wait' }, age(w.waitSeconds)),
				       el('td', { class: 'reason' }, w.reason),
				       el('td', { class: 'message' }, w.message || ''),
				       el('td', {}, pod ? explainButton(pod) : el('span', { class: 'note' }, 'a gang: explain a pod'))));
		}
		if (!(q.items || []).length)
			rows.append(el('tr', {}, el('td', { colspan: 10, class: 'empty' }, 'Nothing pending.')));
		clear(wrows);
		for (const w of q.waiting || []) {
			shown.add(w.pod);
			wrows.append(el('tr', { 'data-pod': w.pod },
					el('th', { scope: 'row', class: 'pod' }, w.pod),
					el('td', { class: 'workload' }, w.workload || '–'),
					el('td', { class: 'num wait' }, age(w.waitSeconds)),
					el('td', { class: 'reason' }, w.reason),
					el('td', { class: 'message' }, w.message || ''),
					el('td', {}, explainButton(w.pod))));
		}
		if (!(q.waiting || []).length)
			wrows.append(el('tr', {}, el('td', { colspan: 6, class: 'empty' }, 'None.')));
		for (const pod of [...openExplain.keys()])
			if (!shown.has(pod))
				openExplain.delete(pod);
		reopen(rows);
		reopen(wrows);
	}

	/* --- the loop ------------------------------------------------------ */

	function status(text, bad) {
		const s = document.getElementById('status');

		s.textContent = text;
		s.classList.toggle('error', !!bad);
	}

	async function refresh() {
		if (busy)
			return;
		busy = true;
		try {
			const [t, q, g] = await Promise.all([get('tenants'), get('queue'), get('gpus')]);
			const now = new Date();
			const upd = document.getElementById('updated');

			keepFocus(() => {
				if (last.tenants !== t.text)
					tenants(t.body);
				if (last.gpus !== g.text)
					gpuMap(g.body);
				if (last.queue !== q.text)
					queue(q.body);
			});
			summary(g.body, q.body);
			last.tenants = t.text;
			last.gpus = g.text;
			last.queue = q.text;
			upd.textContent = now.toLocaleTimeString();
			upd.setAttribute('datetime', now.toISOString());
			status('Up to date.', false);
		} catch (e) {
			status('Cannot read kerf serve\u2019s API: ' + e.message +
			       (last.gpus ? ' (showing what was last read)' : ''), true);
		} finally {
			busy = false;
		}
	}

	document.getElementById('interval').textContent = String(intervalS);
	refresh();
	window.setInterval(refresh, intervalS * 1000);
})();
