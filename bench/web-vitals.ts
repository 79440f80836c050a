/**
 * Core Web Vitals of a branded served page (issue 29), in real headless Chromium: largest
 * contentful paint and cumulative layout shift, read by PerformanceObserver in the page. A page
 * with a logo, a favicon, a footer, a lead form and a long body is seeded on a fresh SQLite
 * database, served by a listening app, and loaded `runs` times in fresh browser contexts (nothing
 * cached). `tsx bench/web-vitals.ts [runs]` prints the figures as JSON; BENCHMARKS.md records them.
 * test/site/brand.browser.test.ts runs the same measurement with a few runs. By default the page
 * is seedLayoutsPage's (issue 38: a hero image, every layout, the brand); `branded` as the second
 * argument measures issue 29's page instead.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { type Browser, chromium } from 'playwright-core';
import { createApiKey, createTenant } from '../src/admin/repository.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

/** What a page reports: LCP (ms from navigation start) and the sum of layout shifts without input. */
export interface Vitals {
  lcpMs: number;
  cls: number;
  /** Every request the page made besides the document, by URL. */
  requests: string[];
}

const OBSERVE = `
window.__vitals = { lcp: 0, cls: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__vitals.lcp = e.renderTime || e.loadTime || e.startTime;
}).observe({ type: 'largest-contentful-paint', buffered: true });
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (!e.hadRecentInput) window.__vitals.cls += e.value;
}).observe({ type: 'layout-shift', buffered: true });
`;

/** An ordinary Chrome's name: the collector drops bots, and this is a visit like any other. */
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** One cold load of `url` in a fresh context: its vitals once the page has loaded and settled. */
export async function measureVitals(browser: Browser, url: string): Promise<Vitals> {
  const context = await browser.newContext({ userAgent: USER_AGENT, viewport: { width: 1280, height: 800 } });
  try {
    const tab = await context.newPage();
    const requests: string[] = [];
    tab.on('request', (r) => {
      if (r.url() !== url) requests.push(r.url());
    });
    await tab.addInitScript(OBSERVE);
    await tab.goto(url, { waitUntil: 'load' });
    // LCP is final at the first input or when the page is hidden; layout shifts after load count too.
    await tab.waitForTimeout(500);
    const vitals = (await tab.evaluate('window.__vitals')) as { lcp: number; cls: number };
    return { lcpMs: vitals.lcp, cls: vitals.cls, requests };
  } finally {
    await context.close();
  }
}

type Call = (method: string, url: string, body?: unknown, headers?: Record<string, string>) => Promise<{ status: number; body: unknown }>;

/** A branded page with a form, for a generic audience at `/launch`: the page a lead lands on. */
export async function seedBrandedPage(call: Call): Promise<string> {
  const logo = await sharp({ create: { width: 480, height: 120, channels: 3, background: '#7a1fa2' } })
    .png()
    .toBuffer();
  const file = (await call('POST', '/v0/files', logo, { 'content-type': 'image/png' })).body as { fileId: string };
  const asset = (await call('POST', '/v0/assets', { assetType: 'image', name: 'Acme', fileId: file.fileId })).body as { assetId: string };
  const settings = await call('PATCH', '/v0/site_settings', {
    logoAssetId: asset.assetId,
    faviconAssetId: asset.assetId,
    brandColor: '#7a1fa2',
    textColor: '#1b1b1f',
    backgroundColor: '#fdfcff',
    font: 'serif',
    footerText: '© Acme Inc. · 1 Main Street, Springfield · [Terms](https://acme.example/terms)',
    privacyUrl: 'https://acme.example/privacy',
  });
  if (settings.status !== 200) throw new Error(`site settings: ${settings.status} ${JSON.stringify(settings.body)}`);
  const long = Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: why **Acme** helps teams like yours ship faster.`).join('\n\n');
  const page = (
    await call('POST', '/v0/pages', {
      name: 'Launch',
      title: 'Acme launch',
      pageContext: 'launch',
      pageType: 'inbound',
      status: 'published',
      content: { headline: 'Ship faster with Acme', subheadline: 'The launch, for your team', sections: [{ heading: 'Why', body: long }] },
      actions: [
        { purpose: 'learn', buttonTitle: 'Read more', actionType: 'link', url: 'https://acme.example/more' },
        { purpose: 'lead', buttonTitle: 'Talk to us', actionType: 'form', url: '' },
      ],
    })
  ).body as { pageId: string };
  const audience = (await call('POST', `/v0/pages/${page.pageId}/audiences`, {})).body as { audienceId: string };
  const link = await call('POST', '/v0/page_links', {
    path: '/launch',
    target: { targetType: 'audience', audienceId: audience.audienceId },
  });
  if (link.status !== 201) throw new Error(`link: ${link.status}`);
  return '/launch';
}

/**
 * A branded page (seedBrandedPage's brand) whose first screen is a hero image, with six more
 * layouts (image and text, features, FAQ, quote, logos, cta on the lead form) and a video, for a
 * generic audience at `/layouts`: the budget of issue 38.
 */
export async function seedLayoutsPage(call: Call): Promise<string> {
  const image = async (name: string, width: number, height: number, background: string) => {
    const bytes = await sharp({ create: { width, height, channels: 3, background } })
      .jpeg()
      .toBuffer();
    const file = (await call('POST', '/v0/files', bytes, { 'content-type': 'image/jpeg' })).body as { fileId: string };
    return ((await call('POST', '/v0/assets', { assetType: 'image', name, fileId: file.fileId })).body as { assetId: string }).assetId;
  };
  const hero = await image('Hero', 1200, 800, '#3949ab');
  const side = await image('Team', 800, 600, '#00897b');
  const logo = await image('Logo', 240, 80, '#6d4c41');
  const person = await image('Ann', 200, 200, '#f4511e');
  const page = (
    await call('POST', '/v0/pages', {
      name: 'Layouts',
      title: 'Acme, in layouts',
      pageContext: 'launch',
      pageType: 'inbound',
      status: 'published',
      actions: [{ purpose: 'lead', buttonTitle: 'Talk to us', actionType: 'form' }],
    })
  ).body as { pageId: string; actions: { actionId: string }[] };
  const actionId = page.actions[0]?.actionId ?? '';
  const sections = [
    {
      layout: 'hero',
      heading: 'Ship faster, {{person.firstName | together}}',
      body: 'Acme plans, builds and ships with your team.',
      imageAssetId: hero,
      imageAlt: 'A team at work',
    },
    {
      layout: 'image_text',
      heading: 'Made for teams',
      body: 'Plans that stay current, **without meetings**.',
      imageAssetId: side,
      imageAlt: 'A planning board',
      imageSide: 'right',
    },
    {
      layout: 'features',
      heading: 'What you get',
      body: '',
      items: ['Plans', 'Reviews', 'Releases', 'Reports'].map((title) => ({ title, body: `${title} in one place, for every team.` })),
    },
    {
      layout: 'faq',
      heading: 'Questions',
      body: '',
      items: [
        { title: 'How long does setup take?', body: 'An afternoon.' },
        { title: 'Can we import our data?', body: 'Yes: from CSV or the API.' },
      ],
    },
    { layout: 'quote', heading: '', body: 'We ship every week now.', author: 'Ann Lee', role: 'CTO, Example Corp', imageAssetId: person },
    {
      layout: 'logos',
      heading: 'Trusted by',
      body: '',
      items: ['One', 'Two', 'Three', 'Four'].map((title) => ({ title, imageAssetId: logo })),
    },
    { layout: 'video', heading: 'See it in two minutes', body: '', videoUrl: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' },
    { layout: 'cta', heading: 'Talk to us', body: 'We answer within a day.', actionId },
  ];
  const patched = await call('PATCH', `/v0/pages/${page.pageId}`, {
    content: { headline: 'Acme for your team', subheadline: 'Plan, build and ship', sections },
  });
  if (patched.status !== 200) throw new Error(`layouts: ${patched.status} ${JSON.stringify(patched.body)}`);
  const audience = (await call('POST', `/v0/pages/${page.pageId}/audiences`, {})).body as { audienceId: string };
  const link = await call('POST', '/v0/page_links', {
    path: '/layouts',
    target: { targetType: 'audience', audienceId: audience.audienceId },
  });
  if (link.status !== 201) throw new Error(`link: ${link.status}`);
  return '/layouts';
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 10);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pam-vitals-'));
  const config = loadConfig({ DATABASE_URL: path.join(dir, 'vitals.sqlite'), LOG_LEVEL: 'silent', FILE_STORE: 'database', AGENT: 'false' });
  const app = await buildApp({ config });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const { tenantId, hostname, key } = await app.db.transaction().execute(async (trx) => {
      const tenant = await createTenant(trx, 'Acme', config.fallbackDomainSuffix);
      const { apiKey } = await createApiKey(trx, tenant.tenantId);
      const domain = await trx
        .selectFrom('tenant_domains')
        .select('hostname')
        .where('tenant_id', '=', tenant.tenantId)
        .executeTakeFirstOrThrow();
      return { tenantId: tenant.tenantId, hostname: domain.hostname, key: apiKey };
    });
    const call: Call = async (method, url, body, headers = {}) => {
      const binary = Buffer.isBuffer(body);
      const res = await app.inject({
        method: method as 'GET',
        url,
        headers: { 'x-api-key': key, ...(body !== undefined && !binary ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { payload: binary ? body : JSON.stringify(body) } : {}),
      });
      return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
    };
    // The layouts page takes the branded page's brand: the branded page is always seeded first.
    const branded = await seedBrandedPage(call);
    const pathname = process.argv[3] === 'branded' ? branded : await seedLayoutsPage(call);
    const { port } = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
    const url = `http://${hostname}:${port}${pathname}`;
    const served = await app.inject({ method: 'GET', url: pathname, headers: { host: hostname, 'user-agent': USER_AGENT } });
    if (served.statusCode !== 200) throw new Error(`the page: ${served.statusCode}`);
    const html = served.body;
    await measureVitals(browser, url); // a warm-up: the first launch of a context pays Chromium's own start-up
    const results: Vitals[] = [];
    for (let i = 0; i < runs; i++) results.push(await measureVitals(browser, url));
    const lcp = results.map((r) => r.lcpMs);
    const cls = results.map((r) => r.cls);
    console.log(
      JSON.stringify(
        {
          tenantId,
          runs,
          page: pathname,
          // The CSS is inline: the document is all of the page's HTML and CSS.
          documentBytes: Buffer.byteLength(html),
          offDomainRequests: results.flatMap((r) => r.requests.filter((u) => new URL(u).host !== new URL(url).host)).length,
          lcpMs: { median: Math.round(median(lcp)), max: Math.round(Math.max(...lcp)) },
          cls: { median: median(cls), max: Math.max(...cls) },
          requests: results[0]?.requests.map((r) => new URL(r).pathname),
          node: process.version,
          cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
        },
        null,
        2,
      ),
    );
  } finally {
    await browser.close();
    await app.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
