import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { build } from 'esbuild';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { available, CHROMIUM, skip, until, USER_AGENT } from '../browser.js';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';
import { imageAsset } from '../pages/layout-fixtures.js';

// The site script on a customer's site (issue 48 §7), in real headless Chromium: the site is a
// plain HTTP server of this test on another origin, http://shop-x.localhost:PORT (Chromium resolves
// *.localhost to loopback), and its pages load the script from the service's own origin.

const ROOT = path.resolve(import.meta.dirname, '../..');
let t: TestApp;
let browser: Browser;
let api: string;
let shop: http.Server;
let shopPort: number;
let shopOrigin: string;
let site: Json;
/** The React page's client bundle, made once by esbuild. */
let reactBundle = '';
/** A server that takes requests and never answers: the service, unresponsive. */
let hanging: http.Server;
let hangingPort: number;
/** A port nothing listens on: the service, stopped. */
let stoppedPort: number;
/** The script as the service serves it, to be served from elsewhere for the unanswered cases. */
let scriptBody = '';

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function freePort(): Promise<number> {
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  return port;
}

/** What react-dom/server renders of the component below (its first render, before any click). */
const SERVER_RENDERED = '<div><h1 id="title">Original title</h1><button id="count">Clicked 0</button></div>';
// The same component in the browser, hydrated after load, as a slow framework would be.
const CLIENT = `
import { createElement, useState } from 'react';
import { hydrateRoot } from 'react-dom/client';
function App() {
  const [n, setN] = useState(0);
  return createElement('div', null, createElement('h1', { id: 'title' }, 'Original title'),
    createElement('button', { id: 'count', onClick: () => setN(n + 1) }, 'Clicked ' + n));
}
// After the change is in (or 2.5 s), so that React always meets a text it did not render.
const started = Date.now();
const hydrate = () => {
  if (document.getElementById('title').textContent === 'Original title' && Date.now() - started < 2500) return setTimeout(hydrate, 50);
  hydrateRoot(document.getElementById('root'), createElement(App), { onRecoverableError: () => { window.recovered = true; } });
  window.hydrated = true;
};
window.addEventListener('load', () => setTimeout(hydrate, 300));
`;

const scriptTag = (src: string, timeout?: number) =>
  `<script src="${src}"${timeout === undefined ? '' : ` data-timeout="${timeout}"`}></script>`;

function page(head: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>${head}</head><body>${body}</body></html>`;
}

const PLAIN_BODY =
  '<header><nav><ul><li>One</li><li>Two</li><li>Three</li></ul></nav></header><main><h1 class="title">Original title</h1><p id="keep">Unchanged paragraph</p><a class="cta" href="/old">Go</a></main>';

function shopHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://shop');
  const own = `${api}/_pam/site.js?site=${site.siteKey}`;
  const send = (status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  if (url.pathname === '/react.js') send(200, 'text/javascript', reactBundle);
  else if (url.pathname === '/react') {
    send(200, 'text/html', page(scriptTag(own, 3000), `<div id="root">${SERVER_RENDERED}</div><script src="/react.js"></script>`));
  } else if (url.pathname === '/copy.js') send(200, 'text/javascript', scriptBody.replaceAll(api, url.searchParams.get('base') ?? ''));
  else if (url.pathname.startsWith('/down')) {
    const base = url.pathname === '/down/hanging' ? `http://127.0.0.1:${hangingPort}` : `http://127.0.0.1:${stoppedPort}`;
    send(200, 'text/html', page(scriptTag(`/copy.js?base=${encodeURIComponent(base)}`), PLAIN_BODY));
  } else send(200, 'text/html', page(scriptTag(own, Number(url.searchParams.get('data_timeout') ?? 3000)), PLAIN_BODY));
}

before(async () => {
  if (skip) return;
  assert.ok(available, `no browser at ${CHROMIUM}: .ci/run installs Debian's chromium`);
  const apiPort = await freePort();
  api = `http://127.0.0.1:${apiPort}`;
  t = await startApp({ PUBLIC_BASE_URL: api, DECIDE_RATE_PER_MINUTE: '100000' });
  await t.app.listen({ port: apiPort, host: '127.0.0.1' });
  shop = http.createServer(shopHandler);
  shopPort = await listen(shop);
  shopOrigin = `http://shop-x.localhost:${shopPort}`;
  hanging = http.createServer(() => {});
  hangingPort = await listen(hanging);
  stoppedPort = await freePort();
  site = ok(await t.req('POST', '/v0/sites', { name: 'Shop X', origins: [shopOrigin] }), 201);
  const bundled = await build({
    stdin: { contents: CLIENT, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    write: false,
    format: 'iife',
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  reactBundle = bundled.outputFiles[0]?.text ?? '';
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await new Promise((r) => (shop ? shop.close(r) : r(undefined)));
  hanging?.closeAllConnections();
  await new Promise((r) => (hanging ? hanging.close(r) : r(undefined)));
  await t?.close();
});

async function experience(fields: Json): Promise<Json> {
  return ok(
    await t.req('POST', '/v0/experiences', {
      siteId: site.siteId,
      name: 'An experience',
      status: 'live',
      changes: [{ selector: 'h1.title', action: 'text', value: 'Personal title' }],
      ...fields,
    }),
    201,
  );
}

interface Frame {
  t: number;
  visible: boolean;
  original: boolean;
  changed: boolean;
}

/**
 * A fresh browser whose every page records each animation frame from its very start: whether the
 * page is visible, and whether it shows the original text or the changed one.
 */
async function visitorContext(original: string, changed: string, userAgent = USER_AGENT): Promise<BrowserContext> {
  const context = await browser.newContext({ userAgent });
  // As text: the test's TypeScript has no DOM types, and the page runs it as it is.
  await context.addInitScript({
    content: `(() => {
      const watch = ${JSON.stringify([original, changed])};
      const frames = (window.frames_ = []);
      const sample = () => {
        try {
          const text = document.body ? document.body.innerText : '';
          const visible = getComputedStyle(document.documentElement).opacity !== '0';
          frames.push({ t: performance.now(), visible, original: text.includes(watch[0]), changed: text.includes(watch[1]) });
        } catch (e) {}
        requestAnimationFrame(sample);
      };
      requestAnimationFrame(sample);
    })();`,
  });
  return context;
}

const framesOf = (tab: Page) => tab.evaluate('window.frames_') as Promise<Frame[]>;
const text = (tab: Page, selector: string) => tab.locator(selector).first().textContent();

/** Waits until the page is visible again and has painted a few frames. */
async function settled(tab: Page): Promise<Frame[]> {
  return until('the page shown', async () => {
    const frames = await framesOf(tab);
    const shown = frames.filter((f) => f.visible);
    return shown.length >= 5 ? frames : undefined;
  });
}

describe('the site script in Chromium', { skip }, () => {
  before(async () => {
    if (skip) return;
    await experience({
      urlMatch: { type: 'prefix', value: '/pricing' },
      changes: [{ selector: 'h1.title', action: 'text', value: 'Built for {{utm.term | teams}}' }],
    });
    await experience({
      urlMatch: { type: 'exact', value: '/campaign' },
      rules: { match: 'all', conditions: [{ field: 'utm.source', operator: 'equals', value: 'ads' }] },
      changes: [{ selector: 'h1.title', action: 'text', value: 'Ads title' }],
    });
    await experience({
      urlMatch: { type: 'exact', value: '/markup' },
      changes: [{ selector: 'h1.title', action: 'text', value: '<b>Bold</b> {{utm.term | x}}' }],
    });
    await experience({
      urlMatch: { type: 'exact', value: '/react' },
      changes: [{ selector: '#title', action: 'text', value: 'Hydrated personal title' }],
    });
    await experience({
      urlMatch: { type: 'exact', value: '/held' },
      holdoutPercent: 50,
      changes: [{ selector: 'h1.title', action: 'text', value: 'Held title' }],
    });
    await experience({
      urlMatch: { type: 'prefix', value: '/down' },
      changes: [{ selector: 'h1.title', action: 'text', value: 'Never shown' }],
    });
    await experience({
      urlMatch: { type: 'exact', value: '/section' },
      changes: [
        {
          selector: 'main',
          action: 'section',
          placement: 'before',
          value: { heading: 'Inserted for {{utm.term | you}}', body: 'A **bold** claim' },
        },
      ],
    });
    const image = await imageAsset(t, t.key, 120, 80);
    await experience({
      urlMatch: { type: 'exact', value: '/section-image' },
      changes: [
        {
          selector: 'main',
          action: 'section',
          placement: 'after',
          value: {
            layout: 'image_text',
            heading: 'With a picture',
            body: '',
            imageAssetId: image.assetId,
            imageAlt: 'A {{utm.term | chart}}',
          },
        },
      ],
    });
    const res = await fetch(`${api}/_pam/site.js?site=${site.siteKey}`);
    scriptBody = await res.text();
  });

  test('a matching visitor sees the change, and no frame ever shows the original', { timeout: 60_000 }, async () => {
    const context = await visitorContext('Original title', 'Built for robots');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/pricing?utm_term=robots`);
      const frames = await settled(tab);
      assert.equal(await text(tab, 'h1'), 'Built for robots');
      assert.deepEqual(
        frames.filter((f) => f.visible && f.original),
        [],
        'no visible frame with the original text',
      );
      assert.ok(frames.some((f) => f.visible && f.changed));
      assert.equal(await text(tab, '#keep'), 'Unchanged paragraph');
      assert.equal(await tab.evaluate('document.cookie'), '');
      assert.equal(await tab.evaluate('localStorage.length + sessionStorage.length'), 0);
    } finally {
      await context.close();
    }
  });

  test('a visitor the rules do not match sees the site as it is; a path no experience matches is untouched', async () => {
    const context = await visitorContext('Original title', 'Ads title');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/campaign?utm_source=newsletter`);
      await settled(tab);
      assert.equal(await text(tab, 'h1'), 'Original title');

      const asked: string[] = [];
      tab.on('request', (r) => {
        if (r.url().includes('/_pam/decide')) asked.push(r.url());
      });
      await tab.goto(`${shopOrigin}/about`);
      const frames = await settled(tab);
      assert.equal(await text(tab, 'h1'), 'Original title');
      assert.ok(
        frames.every((f) => f.visible),
        'never hidden',
      );
      assert.deepEqual(asked, [], 'nothing asked');
      assert.equal(await tab.evaluate('document.documentElement.getAttribute("style")'), null);
    } finally {
      await context.close();
    }
  });

  test('a hostile UTM term, and markup in a value, stay text', async () => {
    const context = await visitorContext('Original title', 'Bold');
    try {
      const tab = await context.newPage();
      const hostile = '<img src=x onerror="window.pwned=1">';
      await tab.goto(`${shopOrigin}/pricing?utm_term=${encodeURIComponent(hostile)}`);
      await settled(tab);
      assert.equal(await text(tab, 'h1'), 'Built for teams');
      await tab.goto(`${shopOrigin}/markup?utm_term=${encodeURIComponent('<i>x</i>')}`);
      await settled(tab);
      assert.equal(await text(tab, 'h1'), '<b>Bold</b> x');
      assert.equal(await tab.locator('h1 b, h1 i, img').count(), 0);
      assert.equal(await tab.evaluate('window.pwned'), undefined);
    } finally {
      await context.close();
    }
  });

  test('another origin is refused: its page shows as it is', async () => {
    const context = await visitorContext('Original title', 'Built for');
    try {
      const tab = await context.newPage();
      const asked: string[] = [];
      tab.on('request', (r) => {
        if (r.url().includes('/_pam/decide')) asked.push(r.url());
      });
      await tab.goto(`http://other-x.localhost:${shopPort}/pricing?utm_term=robots`);
      await settled(tab);
      assert.equal(await text(tab, 'h1'), 'Original title');
      assert.equal(asked.length, 1, 'it asked, and was refused');
      const direct = await fetch(asked[0] ?? '', { headers: { origin: `http://other-x.localhost:${shopPort}` } });
      assert.equal(direct.status, 403);
      assert.equal(direct.headers.get('access-control-allow-origin'), null);
    } finally {
      await context.close();
    }
  });

  test('a held-out share sees the original, each visitor keeping their arm', { timeout: 120_000 }, async () => {
    const seen = new Map<number, string>();
    for (let i = 0; i < 16; i++) {
      const context = await visitorContext('Original title', 'Held title', `${USER_AGENT} Visitor/${i}`);
      try {
        const tab = await context.newPage();
        for (let visit = 0; visit < 2; visit++) {
          await tab.goto(`${shopOrigin}/held`);
          const frames = await settled(tab);
          const shown = String(await text(tab, 'h1'));
          assert.ok(['Original title', 'Held title'].includes(shown), shown);
          if (visit === 0) seen.set(i, shown);
          else assert.equal(shown, seen.get(i), `visitor ${i} keeps their arm`);
          if (shown === 'Held title')
            assert.deepEqual(
              frames.filter((f) => f.visible && f.original),
              [],
            );
        }
      } finally {
        await context.close();
      }
    }
    const held = [...seen.values()].filter((s) => s === 'Original title').length;
    assert.ok(held > 0 && held < 16, `${held} of 16 held out`);
  });

  test('a React page that hydrates keeps the change', { timeout: 60_000 }, async () => {
    const context = await visitorContext('Original title', 'Hydrated personal title');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/react`);
      await until('hydrated', async () => ((await tab.evaluate('window.hydrated === true')) ? true : undefined));
      await tab.waitForTimeout(500);
      await tab.locator('#count').click();
      await until('React answers the click', async () => ((await text(tab, '#count')) === 'Clicked 1' ? true : undefined));
      assert.equal(await text(tab, '#title'), 'Hydrated personal title');
      // React found the changed text, threw its server markup away and rendered the original again: re-applied.
      assert.equal(await tab.evaluate('window.recovered === true'), true, 'hydration re-rendered the element');
      const frames = await framesOf(tab);
      assert.deepEqual(
        frames.filter((f) => f.visible && f.original),
        [],
      );
    } finally {
      await context.close();
    }
  });

  test('a section is inserted in a shadow root, styled, its text escaped', async () => {
    const context = await visitorContext('Original title', 'Inserted for');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/section?utm_term=Rob`);
      await settled(tab);
      assert.equal(await tab.locator('[data-pam-insert]').count(), 1);
      const inside = (await tab.evaluate(`(() => {
        const host = document.querySelector('[data-pam-insert]');
        const root = host.shadowRoot;
        return {
          next: host.nextElementSibling.tagName,
          heading: root.querySelector('h2').textContent,
          bold: root.querySelector('strong').textContent,
          sheets: root.adoptedStyleSheets.length,
          // The page's own h2 rule (none here) and the section's style: the shadow root keeps its own.
          padding: getComputedStyle(root.querySelector('section')).paddingTop,
        };
      })()`)) as Json;
      assert.deepEqual(inside, { next: 'MAIN', heading: 'Inserted for Rob', bold: 'bold', sheets: 1, padding: '32px' });
    } finally {
      await context.close();
    }
  });

  test("an inserted section's image is the tenant's file, loaded, its size given", async () => {
    const context = await visitorContext('Original title', 'With a picture');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/section-image?utm_term=${encodeURIComponent('<b>x</b>')}`);
      await settled(tab);
      const image = await until('the image loaded', async () => {
        const found = (await tab.evaluate(`(() => {
          const img = document.querySelector('[data-pam-insert]').shadowRoot.querySelector('img');
          if (!img || !img.complete || img.naturalWidth === 0) return undefined;
          return { src: img.currentSrc, width: img.getAttribute('width'), height: img.getAttribute('height'), alt: img.alt };
        })()`)) as Json | undefined;
        return found ?? undefined;
      });
      assert.match(String(image.src), /^http:\/\/[a-z0-9-]+\.pages\.localhost:\d+\/_pam\/files\//);
      // Its box is known before it loads: no layout shift in the customer's page.
      assert.deepEqual([image.width, image.height], ['120', '80']);
      // A hostile term takes the fallback: tokens are text, never markup.
      assert.equal(image.alt, 'A chart');
    } finally {
      await context.close();
    }
  });

  test('with the service stopped or not answering, the page shows unchanged within the timeout', { timeout: 60_000 }, async () => {
    for (const which of ['stopped', 'hanging']) {
      const context = await visitorContext('Original title', 'Never shown');
      try {
        const tab = await context.newPage();
        await tab.goto(`${shopOrigin}/down/${which}`);
        const frames = await settled(tab);
        const hidden = frames.filter((f) => !f.visible);
        assert.equal(await text(tab, 'h1'), 'Original title');
        const firstShown = frames.find((f) => f.visible);
        assert.ok(firstShown, which);
        // Hidden from the first frame to the default timeout (400 ms), with a loaded machine's slack.
        const hiddenFor = hidden.length === 0 ? 0 : firstShown.t - (hidden[0]?.t ?? firstShown.t);
        assert.ok(hiddenFor <= 1200, `${which}: hidden for ${hiddenFor} ms`);
        if (which === 'hanging') assert.ok(hidden.length > 0, 'hidden while waiting');
        assert.deepEqual(
          frames.filter((f) => f.visible && f.changed),
          [],
        );
      } finally {
        await context.close();
      }
    }
  });
});

describe('pick and preview', { skip }, () => {
  test('pick: an overlay, and a click posts the selector to the console with the token', { timeout: 60_000 }, async () => {
    const { token } = ok(await t.req('POST', `/v0/sites/${site.siteId}/pick-tokens`), 201);
    const context = await browser.newContext({ userAgent: USER_AGENT });
    try {
      // The console's window: a page on the service's origin that opens the site.
      await context.route(`${api}/console-stand-in`, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>console</title>' }),
      );
      const consoleTab = await context.newPage();
      await consoleTab.goto(`${api}/console-stand-in`);
      await consoleTab.evaluate(
        'window.messages = []; addEventListener("message", (e) => window.messages.push({ origin: e.origin, data: e.data }))',
      );
      const [siteTab] = await Promise.all([
        context.waitForEvent('page'),
        consoleTab.evaluate(`window.open(${JSON.stringify(`${shopOrigin}/pricing?pam_pick=${token}`)})`),
      ]);
      await siteTab.waitForLoadState('load');
      await until('the overlay', async () =>
        (await siteTab.evaluate('[...document.body.children].some((e) => e.style.outline.includes("2px"))')) ? true : undefined,
      );
      await siteTab.locator('li').nth(1).click();
      await siteTab.locator('#keep').click();
      const messages = (await until('the picks', async () => {
        const got = (await consoleTab.evaluate('window.messages')) as Json[];
        return got.length >= 2 ? got : undefined;
      })) as Json[];
      assert.deepEqual(
        messages.map((m) => m.origin),
        [shopOrigin, shopOrigin],
      );
      assert.deepEqual(
        messages.map((m) => [m.data.type, m.data.token]),
        [
          ['pam:pick', token],
          ['pam:pick', token],
        ],
      );
      assert.equal(messages[1].data.selector, '#keep');
      const second = messages[0].data.selector as string;
      assert.ok(second.length < 60, second);
      assert.equal(await siteTab.evaluate(`document.querySelectorAll(${JSON.stringify(second)}).length`), 1);
      assert.equal(await siteTab.evaluate(`document.querySelector(${JSON.stringify(second)}).textContent`), 'Two');
      assert.equal(await text(siteTab, 'h1'), 'Original title', 'a pick changes nothing');
    } finally {
      await context.close();
    }
  });

  test('pick: a token not good here shows nothing', async () => {
    const context = await browser.newContext({ userAgent: USER_AGENT });
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/about?pam_pick=pick_nosuchtoken`);
      await tab.waitForTimeout(500);
      assert.equal(await tab.evaluate('[...document.body.children].some((e) => e.style.outline.includes("2px"))'), false);
    } finally {
      await context.close();
    }
  });

  test("preview: a draft experience's changes with the chosen UTM and company, for that browser only", { timeout: 60_000 }, async () => {
    const draft = ok(
      await t.req('POST', '/v0/experiences', {
        siteId: site.siteId,
        name: 'Draft',
        status: 'draft',
        urlMatch: { type: 'exact', value: '/somewhere-else' },
        rules: { match: 'all', conditions: [{ field: 'company.industry', operator: 'equals', value: 'Robotics' }] },
        changes: [{ selector: '#keep', action: 'text', value: 'Preview for {{utm.term | x}} at {{company.name | y}}' }],
      }),
      201,
    );
    const { token } = ok(
      await t.req('POST', `/v0/experiences/${draft.experienceId}/preview-tokens`, {
        utm: { term: 'robots' },
        company: { name: 'Acme', industry: 'Robotics' },
      }),
      201,
    );
    const context = await visitorContext('Unchanged paragraph', 'Preview for');
    try {
      const tab = await context.newPage();
      await tab.goto(`${shopOrigin}/about?pam_preview=${token}`);
      const frames = await settled(tab);
      assert.equal(await text(tab, '#keep'), 'Preview for robots at Acme');
      assert.deepEqual(
        frames.filter((f) => f.visible && f.original),
        [],
      );
      await tab.reload();
      await settled(tab);
      assert.equal(await text(tab, '#keep'), 'Preview for robots at Acme', 'the same browser may reload it');
      // A preview's answer is applied even when it comes after the timeout (here at once).
      await tab.goto(`${shopOrigin}/about?data_timeout=0&pam_preview=${token}`);
      await until('the late preview applied', async () => ((await text(tab, '#keep')) === 'Preview for robots at Acme' ? true : undefined));
    } finally {
      await context.close();
    }
    const other = await browser.newContext({ userAgent: `${USER_AGENT} Another` });
    try {
      const tab = await other.newPage();
      await tab.goto(`${shopOrigin}/about?pam_preview=${token}`);
      await tab.waitForTimeout(800);
      assert.equal(await text(tab, '#keep'), 'Unchanged paragraph', 'another browser gets nothing of it');
    } finally {
      await other.close();
    }
  });
});
