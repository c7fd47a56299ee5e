// kerf serve's dashboard in headless Chromium, end to end: kerf-testapi
// (the test Kubernetes API server) with a small cluster (a tenant tree
// with quotas and a budget; a 4-GPU node with GPU 3 marked unhealthy, a
// node with a GPU in MIG mode, a node whose GPU two tenants share by
// MPS; running and pending pods), `kerf serve` against it, then the page
// in Chromium: every view shows what /api/v1/tenants, /queue and /gpus
// answer (read here separately), the layers of a pod open, keyboard focus
// moves, the page refreshes itself, and nothing fails (no console error,
// no failed request, no CSP violation); each kind kerf serve answered is
// valid against its docs/schema/KIND.json.  Screenshots go to the working
// directory.  Prints TAP.
//
// usage: NODE_EXTRA_CA_CERTS=CERTS/ca.crt node dashboard.mjs KERF KERF_TESTAPI CHROMIUM CERTS
// (CERTS: what tests/unit/kube_certs.sh makes: kerf-testapi serves TLS
// with them, as kerf serve only talks to an https:// API server)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [kerf, testapi, chromiumPath, certs] = process.argv.slice(2);
const outDir = process.cwd();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kerf-ui-'));
const children = [];
const TOKEN = 'kerf-ui-token';
const FLAVOR_LABEL = 'A100-SXM4-80GB';
let n = 0;
let failed = 0;

function ok(cond, what, detail) {
	n++;
	if (cond) {
		console.log(`ok ${n} - ${what}`);
	} else {
		failed++;
		console.log(`not ok ${n} - ${what}`);
		if (detail !== undefined)
			for (const line of String(typeof detail === 'string' ? detail : JSON.stringify(detail)).split('\n'))
				console.log('# ' + line);
	}
	return cond;
}

function same(got, want, what) {
	const g = JSON.stringify(got), w = JSON.stringify(want);

	return ok(g === w, what, g === w ? undefined : `got  ${g}\nwant ${w}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(fn, ms, step = 100) {
	const end = Date.now() + ms;

	for (;;) {
		let v;

		try {
			v = await fn();
		} catch (e) {
			v = undefined;
		}
		if (v || Date.now() > end)
			return v;
		await sleep(step);
	}
}

function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();

		s.once('error', reject);
		s.listen(0, '127.0.0.1', () => {
			const p = s.address().port;

			s.close(() => resolve(p));
		});
	});
}

function start(cmd, args, log) {
	const out = fs.openSync(path.join(tmp, log), 'w');
	const c = spawn(cmd, args, { stdio: ['ignore', out, out] });

	children.push(c);
	return c;
}

function cleanup() {
	for (const c of children)
		if (c.exitCode === null)
			c.kill('SIGTERM');
}

process.on('exit', () => {
	cleanup();
	if (process.env.KERF_UI_KEEP)
		console.log('# logs kept in ' + tmp);
	else
		fs.rmSync(tmp, { recursive: true, force: true });
});

// --- the Kubernetes API (kerf-testapi) --------------------------------------

let apiURL;

async function k8s(method, p, body, type = 'application/json') {
	const r = await fetch(apiURL + p, {
		method,
		headers: { Authorization: 'Bearer ' + TOKEN, 'Content-Type': type, Accept: 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await r.text();

	if (r.status >= 300 && !(method === 'POST' && r.status === 409))
		throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 300)}`);
	return text ? JSON.parse(text) : null;
}

function crd(plural, singular, kind) {
	return {
		apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
		metadata: { name: plural + '.kerf.io' },
		spec: {
			group: 'kerf.io', scope: 'Cluster',
			names: { plural, singular, kind, listKind: kind + 'List' },
			versions: [{
				name: 'v1alpha1', served: true, storage: true, subresources: { status: {} },
				schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
			}],
		},
	};
}

async function node(name, gpus, labels, annotations) {
	const res = { cpu: '64', memory: '512Gi', pods: '110', 'nvidia.com/gpu': String(gpus) };

	await k8s('POST', '/api/v1/nodes', {
		apiVersion: 'v1', kind: 'Node',
		metadata: {
			name,
			labels: { 'nvidia.com/gpu.product': FLAVOR_LABEL, 'nvidia.com/gpu.memory': '81920', ...labels },
			annotations: annotations || {},
		},
		status: { capacity: res, allocatable: res },
	});
	// an API server taints new nodes not-ready; no kubelet clears it here
	await k8s('PATCH', `/api/v1/nodes/${name}`, { spec: { taints: null } }, 'application/merge-patch+json');
	await k8s('PATCH', `/api/v1/nodes/${name}/status`, { status: { capacity: res, allocatable: res } },
		  'application/merge-patch+json');
}

async function tenant(name, spec) {
	await k8s('POST', '/apis/kerf.io/v1alpha1/tenants',
		  { apiVersion: 'kerf.io/v1alpha1', kind: 'Tenant', metadata: { name }, spec });
}

async function namespace(name, tenantName) {
	await k8s('POST', '/api/v1/namespaces', {
		apiVersion: 'v1', kind: 'Namespace',
		metadata: { name, labels: { 'kerf.io/tenant': tenantName } },
	});
}

// A pod of kerf's on the nodes labelled kerf.io/pool=pool: limits, annotations, labels.
async function pod(ns, name, pool, limits, annotations = {}, labels = {}) {
	await k8s('POST', `/api/v1/namespaces/${ns}/pods`, {
		apiVersion: 'v1', kind: 'Pod',
		metadata: { name, labels, annotations },
		spec: {
			schedulerName: 'kerf', terminationGracePeriodSeconds: 0,
			nodeSelector: { 'kerf.io/pool': pool },
			containers: [{ name: 'c', image: 'busybox:1.36', resources: { limits } }],
		},
	});
}

async function crds() {
	for (const c of [crd('tenants', 'tenant', 'Tenant'), crd('gpupools', 'gpupool', 'GPUPool')])
		await k8s('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', c);
	await until(() => k8s('GET', '/apis/kerf.io/v1alpha1/tenants'), 10000);
}

// Made while kerf serve runs: nodes, then tenants, the children before
// their parent (kerf serve sets a child once its parent joins; the tree
// checked below shows it did), and their namespaces.
async function cluster() {
	const flavor = FLAVOR_LABEL.toLowerCase();
	const q = (nominal, borrow) => [{ flavor, nominal, ...(borrow === undefined ? {} : { borrowingLimit: borrow }) }];

	await node('gpu-a-0', 4, { 'kerf.io/pool': 'a' }, { 'kerf.io/unhealthy-gpus': '3' });
	await node('gpu-m-0', 2, { 'kerf.io/pool': 'm', 'kerf.io/mig-gpus': '1' });
	await node('gpu-s-0', 2, { 'kerf.io/pool': 's' });
	await tenant('vision', { parent: 'research', weight: 1, quotas: q('3', '2'),
				 gpuHourBudget: { gpuHours: 500, window: '168h' } });
	await tenant('nlp', { parent: 'research', weight: 1, quotas: q('2', '1') });
	await tenant('research', { weight: 2, quotas: q('6') });
	await tenant('prod', { weight: 3, quotas: q('2', '0') });
	await namespace('vision', 'vision');
	await namespace('nlp', 'nlp');
	await namespace('prod', 'prod');
}

// --- kerf serve --------------------------------------------------------------

let serveURL;

// The last answer of each kind, checked against docs/schema at the end.
const answers = {};

async function serve(p) {
	const r = await fetch(serveURL + p, { headers: { Accept: 'application/json' } });

	if (r.status !== 200)
		throw new Error(`GET ${p}: ${r.status}`);
	const doc = await r.json();

	if (doc && typeof doc.kind === 'string')
		answers[doc.kind] = doc;
	return doc;
}

// Every kind kerf serve answered, valid against docs/schema/KIND.json
// (python3-jsonschema; the check is left out without it).
function checkSchemas() {
	const src = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
	const check = 'import json, sys\n' +
		'try:\n    import jsonschema\nexcept ImportError:\n    sys.exit(77)\n' +
		's = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))\n' +
		'try:\n    jsonschema.validate(d, s, cls=jsonschema.Draft202012Validator)\n' +
		'except jsonschema.ValidationError as e:\n' +
		'    print(e.message[:300], "at", "/".join(str(x) for x in e.absolute_path)); sys.exit(1)\n';

	for (const kind of ['TenantList', 'Queue', 'NodeList', 'GPUList', 'Explanation']) {
		const file = path.join(tmp, kind + '.json');
		let out = '', status = 0;

		if (!answers[kind]) {
			ok(false, `kerf serve answered a ${kind}`);
			continue;
		}
		fs.writeFileSync(file, JSON.stringify(answers[kind]));
		try {
			execFileSync('python3', ['-c', check, path.join(src, 'docs', 'schema', kind + '.json'), file],
				     { encoding: 'utf8' });
		} catch (e) {
			status = e.status;
			out = String(e.stdout || '') + String(e.stderr || '');
		}
		if (status === 77)
			console.log(`ok ${++n} - ${kind} of kerf serve valid against docs/schema/${kind}.json # SKIP python3-jsonschema missing`);
		else
			ok(status === 0, `${kind} of kerf serve valid against docs/schema/${kind}.json`, out);
	}
}

function podsOn(gpuList) {
	const s = new Set();

	for (const g of gpuList.items)
		for (const p of g.pods)
			s.add(p.namespace + '/' + p.name);
	return s;
}

// --- the page ---------------------------------------------------------------

function gpusText(milli) {
	return milli === null || milli === undefined ? 'no limit' : String(milli / 1000);
}

async function checkTenants(page) {
	const api = await serve('/api/v1/tenants');
	const byName = new Map(api.items.map((t) => [t.name, t]));
	const depth = (t) => (t.parent === null ? 0 : 1 + depth(byName.get(t.parent)));
	const shown = await page.$$eval('#tenant-rows tr', (rows) => rows.map((r) => ({
		tenant: r.dataset.tenant, flavor: r.dataset.flavor, depth: Number(r.dataset.depth),
		nominal: r.querySelector('.nominal')?.textContent, usage: r.querySelector('.usage')?.textContent,
		borrowed: r.querySelector('.borrowed')?.textContent,
		pending: r.querySelector('.pending')?.textContent ?? null,
	})));
	const want = [];

	for (const t of api.items)
		(t.flavors.length ? t.flavors : [null]).forEach((f, i) => want.push({
			tenant: t.name, flavor: f ? f.flavor : '', depth: depth(t),
			nominal: f ? gpusText(f.nominalGPUMilli) : undefined, usage: f ? gpusText(f.usageGPUMilli) : undefined,
			borrowed: f ? gpusText(f.borrowedGPUMilli) : undefined,
			pending: i === 0 ? String(t.pending) : null,
		}));
	same(shown, want, 'tenant tree: every tenant and flavor in the API\'s order, depth, nominal, usage, borrowed and pending as /api/v1/tenants says');
	const research = shown.find((r) => r.tenant === 'research');
	ok(byName.get('vision').parent === 'research' && research &&
	   shown.some((r) => r.tenant === 'vision' && r.depth === research.depth + 1) &&
	   shown.findIndex((r) => r.tenant === 'vision') > shown.indexOf(research),
	   'the tree: vision shown under research, one level deeper', shown);
	const budget = await page.$eval('#tenant-rows tr[data-tenant="vision"] .budget', (e) => e.textContent);
	const vb = byName.get('vision').budget;
	ok(vb && budget === `${vb.usedPercent}% of ${vb.limitGPUHours} GPU-h (${vb.action})`,
	   'the budget of vision as the API says', budget);
	return api;
}

async function checkGPUs(page) {
	const api = await serve('/api/v1/gpus');
	const shown = await page.$$eval('#gpu-map li.gpu', (lis) => lis.map((li) => ({
		gpu: li.dataset.gpu, mode: li.dataset.mode, health: li.dataset.health,
		freeMilli: Number(li.dataset.freeMilli),
		pods: Array.from(li.querySelectorAll('.seg.pod')).map((s) => [s.dataset.pod, s.textContent]),
		mig: Array.from(li.querySelectorAll('.seg.inst')).map((s) => s.dataset.pod || null),
		down: li.querySelector('.badge-down')?.textContent ?? null,
		label: li.getAttribute('aria-label'),
	})));
	const want = api.items.map((g) => ({
		gpu: g.node + '/' + g.index, mode: g.mode, health: g.health, freeMilli: g.freeMilli,
		pods: g.mode === 'mig' ? [] : g.pods.map((p) => [p.namespace + '/' + p.name, p.tenant]),
		mig: g.mode === 'mig' ? g.mig.map((m) => m.pod) : [],
		down: g.health === 'down' ? 'DOWN' : null,
	}));

	same(shown.map(({ label, ...rest }) => rest), want,
	     'GPU map: every GPU of /api/v1/gpus in order, its mode, health, free milli, pods (by tenant name) and MIG instances');
	ok(shown.filter((g) => g.health === 'down').every((g) => /out of service/.test(g.label)) &&
	   shown.some((g) => g.health === 'down'),
	   'a GPU down says so in text (DOWN and its label), not by colour alone');
	// the same tenant, the same colour, in the map and the legend
	const colours = await page.$$eval('#gpu-map .seg[data-tenant], #legend li', (es) => es.map((e) => {
		const s = e.matches('li') ? e.querySelector('.swatch') : e;

		return [e.dataset.tenant || e.dataset.legend, getComputedStyle(s).backgroundColor];
	}));
	const byTenant = new Map();
	let stable = true;
	for (const [t, c] of colours)
		if (byTenant.has(t) && byTenant.get(t) !== c)
			stable = false;
		else
			byTenant.set(t, c);
	const tenantsOnGPUs = [...new Set(api.items.flatMap((g) => g.pods.map((p) => p.tenant)))].sort();
	const legend = await page.$$eval('#legend li', (es) => es.map((e) => e.dataset.legend));
	ok(stable && tenantsOnGPUs.every((t) => legend.includes(t)) && legend.includes('free') &&
	   legend.some((l) => l.startsWith('down')),
	   'legend: every tenant on a GPU with its colour (one colour per tenant everywhere), free and down', { legend, colours });
	return api;
}

async function checkQueue(page) {
	const api = await serve('/api/v1/queue');
	const rows = await page.$$eval('#queue-rows tr[data-key]', (trs) => trs.map((r) => [
		r.querySelector('.position').textContent, r.dataset.key, r.querySelector('.tenant').textContent,
		r.querySelector('.reason').textContent, r.querySelector('.message').textContent]));
	const waiting = await page.$$eval('#waiting-rows tr[data-pod]', (trs) => trs.map((r) => [
		r.dataset.pod, r.querySelector('.reason').textContent, r.querySelector('.message').textContent]));

	same(rows, api.items.map((w) => [String(w.position), w.key, w.tenant, w.reason, w.message]),
	     'queue: the workloads of /api/v1/queue in its order with tenant, reason and message');
	same(waiting, api.waiting.map((w) => [w.pod, w.reason, w.message]),
	     'queue: the pods held back, with reason and message');
	return api;
}

async function checkSummary(page, gpus, queue) {
	const shown = await page.$$eval('.counts dd', (dds) => dds.map((d) => [d.id, d.textContent]));
	const down = gpus.items.filter((g) => g.health === 'down').length;
	const used = gpus.items.filter((g) => g.health !== 'down' && g.pods.length).length;

	same(Object.fromEntries(shown), {
		'count-gpus': String(gpus.items.length), 'count-used': String(used),
		'count-free': String(gpus.items.length - used - down), 'count-down': String(down),
		'count-pending': String(queue.items.length), 'count-waiting': String(queue.waiting.length),
	}, 'counts: GPUs, used, free, down, pending workloads and pods held back as the API says');
}

async function main() {
	const problems = [];
	let browser;

	// 1. the cluster
	fs.writeFileSync(path.join(tmp, 'token'), TOKEN + '\n');
	const kc = path.join(tmp, 'kubeconfig');
	start(testapi, ['--port', '0', '--token-file', path.join(tmp, 'token'), '--kubeconfig-out', kc,
			'--tls-cert', path.join(certs, 'server.crt'), '--tls-key', path.join(certs, 'server.key'),
			'--tls-ca', path.join(certs, 'ca.crt')], 'testapi.log');
	const server = await until(() => {
		const m = /server:\s*(\S+)/.exec(fs.readFileSync(kc, 'utf8'));
		return m && m[1];
	}, 10000);
	if (!ok(!!server, 'kerf-testapi started', fs.existsSync(path.join(tmp, 'testapi.log')) &&
		fs.readFileSync(path.join(tmp, 'testapi.log'), 'utf8')))
		return;
	apiURL = server.replace(/\/$/, '');
	await crds();
	const port = await freePort();
	serveURL = `http://127.0.0.1:${port}`;
	const srv = start(kerf, ['serve', '--kubeconfig', kc, '--metrics-addr', `127.0.0.1:${port}`,
				 '--resync', '200ms'], 'serve.log');
	const ready = await until(async () => (await fetch(serveURL + '/readyz')).status === 200, 20000);
	if (!ok(ready, 'kerf serve started and synced', fs.readFileSync(path.join(tmp, 'serve.log'), 'utf8').slice(-2000)))
		return;
	await cluster();
	await pod('vision', 'train', 'a', { 'nvidia.com/gpu': '2' });
	await pod('nlp', 'tune', 'a', { 'nvidia.com/gpu': '1' });
	await pod('prod', 'infer', 'm', { 'nvidia.com/mig-3g.40gb': '1' });
	await pod('prod', 'serve', 'm', { 'nvidia.com/gpu': '1' });
	await pod('vision', 'notebook', 's', {}, { 'kerf.io/gpu-fraction': '250m', 'kerf.io/gpu-sharing': 'mps' });
	await pod('nlp', 'notebook', 's', {}, { 'kerf.io/gpu-fraction': '500m', 'kerf.io/gpu-sharing': 'mps' });
	const running = await until(async () => podsOn(await serve('/api/v1/gpus')).size === 6, 20000);
	if (!ok(running, 'six pods of three tenants run: whole GPUs, a MIG instance, two MPS fractions on one GPU',
		running ? undefined : JSON.stringify(await serve('/api/v1/queue').catch((e) => e.message)) + '\n' +
		(await (await fetch(serveURL + '/metrics')).text()).split('\n').filter((l) => /error/.test(l)).join('\n')))
		return;
	await pod('vision', 'big', 'a', { 'nvidia.com/gpu': '4' });
	await pod('nlp', 'fill', 'a', { 'nvidia.com/gpu': '1' });
	await pod('prod', 'more', 's', { 'nvidia.com/gpu': '1' });
	await pod('nlp', 'pair-0', 'a', { 'nvidia.com/gpu': '1' }, { 'kerf.io/gang-size': '2' }, { 'kerf.io/gang': 'pair' });
	const pending = await until(async () => {
		const q = await serve('/api/v1/queue');
		return q.items.length >= 3 && q.waiting.length >= 1 && q.items.every((w) => w.reason !== 'New') && q;
	}, 20000);
	ok(!!pending, 'pending workloads with reasons and a pod held back',
	   pending ? undefined : JSON.stringify(await serve('/api/v1/queue').catch((e) => e.message)));
	if (pending)
		for (const w of pending.items)
			console.log(`# queue ${w.position}. ${w.key}: ${w.reason}`);

	// 2. what the listener answers for the page
	const index = await fetch(serveURL + '/');
	const csp = index.headers.get('content-security-policy') || '';
	const html = await index.text();
	ok(index.status === 200 && /^text\/html/.test(index.headers.get('content-type')),
	   'GET /: 200 text/html', index.headers.get('content-type'));
	ok(/script-src 'self'/.test(csp) && /default-src 'none'/.test(csp) && !/unsafe-inline|unsafe-eval/.test(csp),
	   'a strict Content-Security-Policy (own script only, nothing inline)', csp);
	ok(index.headers.get('x-content-type-options') === 'nosniff' &&
	   index.headers.get('cache-control') === 'no-cache' && !!index.headers.get('etag'),
	   'nosniff, Cache-Control no-cache and an ETag');
	ok(!/<script(?![^>]*\bsrc=)[^>]*>/i.test(html) && !/\sstyle=|\son[a-z]+=/i.test(html),
	   'no inline script, style or event handler in the page');
	const again = await fetch(serveURL + '/ui/app.js', { headers: { 'If-None-Match': index.headers.get('etag') } });
	const js = await fetch(serveURL + '/ui/app.js');
	const js304 = await fetch(serveURL + '/ui/app.js', { headers: { 'If-None-Match': js.headers.get('etag') } });
	ok(js.status === 200 && /^text\/javascript/.test(js.headers.get('content-type')) && again.status === 200 &&
	   js304.status === 304, '/ui/app.js: text/javascript; 304 for its own ETag only',
	   [js.status, js.headers.get('content-type'), again.status, js304.status]);
	const nope = await fetch(serveURL + '/ui/nope.js');
	const post = await fetch(serveURL + '/', { method: 'POST' });
	ok(nope.status === 404 && post.status === 405, 'an unknown file: 404; a POST: 405', [nope.status, post.status]);

	// 3. the page in Chromium
	try {
		browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
	} catch (e) {
		ok(false, 'Chromium starts', e.message);
		return;
	}
	const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warning')
			problems.push(`console ${m.type()}: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	let reloading = false;    /* requests in flight at a reload are aborted, rightly */
	page.on('requestfailed', (r) => {
		if (!(reloading && r.failure()?.errorText === 'net::ERR_ABORTED'))
			problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
	});
	page.on('response', (r) => {
		if (r.status() >= 400)
			problems.push(`HTTP ${r.status()}: ${r.url()}`);
	});
	const foreign = [];
	page.on('request', (r) => {
		if (!r.url().startsWith(serveURL + '/') || r.method() !== 'GET')
			foreign.push(`${r.method()} ${r.url()}`);
	});
	await page.addInitScript(() => {
		window.kerfCSP = [];
		document.addEventListener('securitypolicyviolation',
					  (e) => window.kerfCSP.push(e.violatedDirective + ' ' + e.blockedURI));
	});
	await page.goto(serveURL + '/?refresh=1');
	const loaded = await page.waitForFunction(() => document.getElementById('status').textContent === 'Up to date.',
						  null, { timeout: 15000 }).then(() => true, () => false);
	ok(loaded, 'the page loads and reads the API', await page.textContent('#status'));
	for (const id of ['summary', 'tenants', 'gpus', 'queue'])
		ok(await page.isVisible(`#${id} h2`), `view '${id}' is shown with its heading`);
	// the cluster holds still now: the page and the API read it at different times
	await checkTenants(page);
	const gpus = await checkGPUs(page);
	const queue = await checkQueue(page);
	await checkSummary(page, gpus, queue);
	const mig = gpus.items.find((g) => g.mode === 'mig');
	ok(mig && mig.mig.some((m) => m.pod === 'prod/infer') &&
	   await page.isVisible('li.gpu[data-mode="mig"] .seg.inst[data-pod="prod/infer"]'),
	   'the MIG GPU shows prod/infer\'s instance inside it');
	const shared = gpus.items.find((g) => g.mode === 'shared');
	ok(shared && shared.pods.length === 2 && shared.tenant === null &&
	   (await page.$$(`li.gpu[data-gpu="${shared.node}/${shared.index}"] .seg.pod`)).length === 2,
	   'the shared GPU shows two tenants\' fractions as parts of it');

	// 4. the layers of a pending pod
	const first = queue.items.find((w) => !w.key.includes(':'));
	const button = page.locator(`#queue-rows button.explain[data-pod="${first.key}"]`);
	await button.click();
	await page.waitForSelector('#queue-rows tr.explain-row table.layers', { timeout: 5000 }).catch(() => null);
	const [ns, name] = first.key.split('/');
	const explain = await serve(`/api/v1/explain/${ns}/${name}`);
	const layers = await page.$$eval('#queue-rows tr.explain-row table.layers tbody tr',
					 (trs) => trs.map((r) => [r.dataset.layer, r.children[1].textContent]));
	same(layers, explain.layers.map((l) => [l.layer, l.blocking ? 'yes' : 'no']),
	     `Explain ${first.key}: its layers and which block, as /api/v1/explain says`);
	ok(await button.getAttribute('aria-expanded') === 'true', 'the Explain button says it is expanded');

	// 5. the keyboard, from a fresh load
	reloading = true;
	await page.reload();
	await page.waitForFunction(() => document.getElementById('status').textContent === 'Up to date.',
				   null, { timeout: 15000 });
	reloading = false;
	const focus = [];
	for (let i = 0; i < 60; i++) {
		await page.keyboard.press('Tab');
		focus.push(await page.evaluate(() => {
			const a = document.activeElement;
			const st = getComputedStyle(a);
			return { tag: a.tagName, cls: a.className, id: a.dataset.gpu || a.dataset.pod || a.getAttribute('href'),
				 outline: st.outlineStyle !== 'none' && parseFloat(st.outlineWidth) > 0 };
		}));
	}
	ok(focus[0].tag === 'A' && focus[0].id === '#main', 'Tab: the first stop is "Skip to content"', focus[0]);
	/* the first round: Tab goes round the page again after the last control */
	const tiles = [...new Set(focus.filter((f) => f.tag === 'LI' && /gpu/.test(f.cls)).map((f) => f.id))];
	same(tiles, gpus.items.map((g) => g.node + '/' + g.index), 'Tab reaches every GPU tile, in the map\'s order');
	ok(focus.some((f) => f.tag === 'BUTTON'), 'Tab reaches the Explain buttons');
	ok(focus.filter((f) => f.tag !== 'BODY').every((f) => f.outline), 'every focused control shows a focus outline',
	   focus.filter((f) => !f.outline));
	const layersShown = () => page.waitForFunction((pod) => {
		const b = Array.from(document.querySelectorAll('#queue-rows button.explain')).find((x) => x.dataset.pod === pod);
		const next = b && b.closest('tr').nextElementSibling;
		return next && next.matches('tr.explain-row') && next.querySelector('table.layers');
	}, first.key, { timeout: 5000 }).then(() => true, () => false);
	await button.focus();
	await page.keyboard.press('Enter');
	ok(await button.getAttribute('aria-expanded') === 'true' && await layersShown(),
	   'Enter on Explain opens the layers under its row');
	await page.keyboard.press('Space');
	ok(await button.getAttribute('aria-expanded') === 'false' &&
	   (await page.$$('#queue-rows tr.explain-row')).length === 0, 'Space closes them again');
	await page.keyboard.press('Enter');
	await layersShown();

	// 6. screenshots
	await page.evaluate(() => window.scrollTo(0, 0));
	const shots = [['dashboard-full.png', null], ['dashboard-tenants.png', '#tenants'],
		       ['dashboard-gpus.png', '#gpus'], ['dashboard-queue.png', '#queue']];
	for (const [file, sel] of shots) {
		const p = path.join(outDir, file);
		if (sel)
			await page.locator(sel).screenshot({ path: p });
		else
			await page.screenshot({ path: p, fullPage: true });
		ok(fs.statSync(p).size > 1000, 'screenshot ' + p);
	}

	// 7. live: new work shows without a reload, the time moves on
	const before = await page.getAttribute('#updated', 'datetime');
	await pod('prod', 'late', 'a', { 'nvidia.com/gpu': '1' });
	const seen = await page.waitForSelector('#queue-rows tr[data-key="prod/late"]', { timeout: 15000 }).then(() => true, () => false);
	ok(seen, 'a pod created after the page loaded shows in the queue without a reload');
	ok(before !== await page.getAttribute('#updated', 'datetime'), '"Last updated" moves on');
	ok(await button.getAttribute('aria-expanded') === 'true' && await layersShown() &&
	   (await page.$$('#queue-rows tr.explain-row')).length === 1,
	   'layers opened stay open across refreshes');
	await checkQueue(page).catch(() => null);

	// 8. nothing failed on the way
	const csp2 = await page.evaluate(() => window.kerfCSP);
	same(csp2, [], 'no Content-Security-Policy violation');
	same(problems, [], 'no console error or warning, no failed request, no HTTP error');
	same(foreign, [], 'the page only GETs its own origin');
	await serve('/api/v1/nodes');
	checkSchemas();
	await browser.close();
	if (srv.exitCode !== null)
		ok(false, 'kerf serve still runs', fs.readFileSync(path.join(tmp, 'serve.log'), 'utf8').slice(-2000));
}

try {
	await main();
} catch (e) {
	ok(false, 'the test ran to its end', e.stack);
}
console.log(`1..${n}`);
console.log(`# ${n - failed} passed, ${failed} failed`);
cleanup();
process.exit(failed ? 1 : 0);
