import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expectProblem, ok, startApp, type TestApp } from '../helpers.js';
import { fallbackHost, link, publishedPage, unique, visit } from './serve-helpers.js';

// Issue 46 §4: the brand's font, served by the tenant's own domain: six self-hosted families
// beside the system stacks, immutable files under /_pam/fonts/, `font-display: swap`, a fallback
// of the same metrics, the headline's weight preloaded; any other name is a 400 at /font.

const SELF_HOSTED = ['inter', 'source-sans-3', 'ibm-plex-sans', 'lora', 'merriweather', 'playfair-display'];
const FAMILY: Record<string, string> = {
  inter: 'Inter',
  'source-sans-3': 'Source Sans 3',
  'ibm-plex-sans': 'IBM Plex Sans',
  lora: 'Lora',
  merriweather: 'Merriweather',
  'playfair-display': 'Playfair Display',
};
const packageFile = (font: string, weight: number) =>
  fs.readFileSync(path.join('node_modules', '@fontsource', font, 'files', `${font}-latin-${weight}-normal.woff2`));

let t: TestApp;
let host: string;
let pagePath: string;
before(async () => {
  t = await startApp();
  host = await fallbackHost(t);
  const page = await publishedPage(t, { content: { headline: 'Fonts', subheadline: 'Served here', sections: [] } });
  pagePath = unique('fonts');
  await link(t, pagePath, { targetType: 'page', pageId: page.pageId });
});
after(async () => {
  await t.close();
});

const setFont = async (font: string) => ok(await t.req('PATCH', '/v0/site_settings', { font }));
const served = async () => {
  const res = await visit(t, host, pagePath);
  assert.equal(res.statusCode, 200);
  return res.body;
};

describe('brand fonts', () => {
  test('every self-hosted family and every system stack is taken; any other name is a 400 at /font', async () => {
    for (const font of [...SELF_HOSTED, 'system', 'serif', 'rounded', 'mono']) assert.equal((await setFont(font)).font, font);
    for (const font of ['comic-sans', 'Inter', 'inter ', 'roboto', '', 'lora-700']) {
      expectProblem(await t.req('PATCH', '/v0/site_settings', { font }), 400, 'validation_failed', ['/font']);
    }
    assert.equal(ok(await t.req('GET', '/v0/site_settings')).font, 'mono', 'a refused name changes nothing');
  });

  for (const font of SELF_HOSTED) {
    test(`${font}: faces with swap, a metric-matched fallback, the bold preloaded, each file served immutable from this domain`, async () => {
      await setFont(font);
      const html = await served();
      const family = FAMILY[font];
      const faces = [...html.matchAll(/@font-face\{([^}]*)\}/g)].map((m) => m[1] ?? '');
      assert.equal(faces.length, 4, 'regular and bold, each with its fallback');
      const own = faces.filter((f) => f.includes(`font-family:"${family}";`));
      const fallback = faces.filter((f) => f.includes(`font-family:"${family} Fallback"`));
      assert.equal(own.length, 2);
      assert.equal(fallback.length, 2);
      for (const f of own) assert.match(f, /font-display:swap/);
      for (const f of fallback) {
        assert.match(f, /src:local\("/);
        assert.match(f, /size-adjust:\d+(\.\d+)?%;ascent-override:\d+(\.\d+)?%;descent-override:\d+(\.\d+)?%/);
        assert.doesNotMatch(f, /url\(/, 'a fallback downloads nothing');
      }
      assert.match(html, new RegExp(`body\\{[^}]*font-family:"${family}","${family} Fallback",`));
      const urls = own.map((f) => /src:url\(([^)]+)\) format\("woff2"\)/.exec(f)?.[1] ?? '');
      for (const [i, weight] of [400, 700].entries()) {
        const url = urls[i] ?? '';
        assert.match(
          url,
          new RegExp(`^/_pam/fonts/${font}-latin-${weight}-normal\\.[\\w-]{12}\\.woff2$`),
          'on this domain, named by its bytes',
        );
        const res = await visit(t, host, url);
        assert.equal(res.statusCode, 200, url);
        assert.equal(res.headers['content-type'], 'font/woff2');
        assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.ok(res.rawPayload.equals(packageFile(font, weight)), 'the package’s latin woff2');
        const again = await visit(t, host, url, { headers: { 'if-none-match': String(res.headers.etag) } });
        assert.equal(again.statusCode, 304);
      }
      const preloads = [...html.matchAll(/<link rel="preload"[^>]*>/g)].map((m) => m[0]);
      assert.deepEqual(preloads, [`<link rel="preload" href="${urls[1]}" as="font" type="font/woff2" crossorigin>`], 'the bold, once');
      assert.ok(html.indexOf('rel="preload"') < html.indexOf('<style>'), 'before the style that needs it');
    });
  }

  test('a system stack fetches nothing: no face, no preload', async () => {
    for (const font of ['system', 'serif', 'rounded', 'mono']) {
      await setFont(font);
      const html = await served();
      assert.doesNotMatch(html, /@font-face|rel="preload"|\/_pam\/fonts\//, font);
    }
  });

  test('a name the domain does not serve is a 404', async () => {
    await setFont('inter');
    const html = await served();
    const url = /src:url\((\/_pam\/fonts\/inter-latin-400[^)]+)\)/.exec(html)?.[1] ?? '';
    assert.equal((await visit(t, host, url)).statusCode, 200);
    for (const name of [
      'inter-latin-400-normal.woff2',
      url.replace('/_pam/fonts/', '').replace(/\.[\w-]{12}\.woff2$/, '.AAAAAAAAAAAA.woff2'),
      url.replace('/_pam/fonts/', '').replace('400', '500'),
      'roboto-latin-400-normal.woff2',
      '..%2F..%2Fpackage.json',
      '',
    ]) {
      const res = await visit(t, host, `/_pam/fonts/${name}`);
      assert.equal(res.statusCode, 404, name);
      assert.match(String(res.headers['content-type']), /^text\/html/);
    }
    // Not on the API's host: the files are the visitor plane's.
    assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 404);
  });
});
