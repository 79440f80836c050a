/**
 * Measures the self-hosted brand fonts (issue 46 §4) against the fallback a visitor's device has
 * (Arial, or Times New Roman for the serifs; Liberation Sans and Serif here share their metrics),
 * in headless Chromium: the ratio of their widths over English text (size-adjust) and each font's
 * ascent and descent (from its own vertical metrics, as canvas reads them). Prints the table that
 * src/render/fonts.ts keeps; run `tsx scripts/font-metrics.ts` again when a @fontsource package moves.
 */
import { chromium } from 'playwright-core';
import { fontFile, SELF_HOSTED } from '../src/render/fonts.js';
import fs from 'node:fs';

const SAMPLE =
  'The quick brown fox jumps over the lazy dog. Plans that stay current, without meetings: Acme helps teams like yours ship faster, every week, with fewer surprises and clearer reviews.';

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const tab = await browser.newPage();
const out: Record<string, Record<string, number>> = {};
for (const [font, about] of Object.entries(SELF_HOSTED)) {
  for (const weight of [400, 700] as const) {
    const data = fs.readFileSync(fontFile(font as keyof typeof SELF_HOSTED, weight)).toString('base64');
    const fallback = about.serif ? 'Liberation Serif' : 'Liberation Sans';
    const measured = (await tab.evaluate(
      `(async () => {
        const face = new FontFace('Measured', 'url(data:font/woff2;base64,${data})', { weight: '${weight}' });
        await face.load();
        document.fonts.add(face);
        const c = document.createElement('canvas').getContext('2d');
        c.font = '${weight} 1000px Measured';
        const own = c.measureText(${JSON.stringify(SAMPLE)});
        c.font = '${weight} 1000px "${fallback}"';
        const other = c.measureText(${JSON.stringify(SAMPLE)});
        return { own: own.width, other: other.width, ascent: own.fontBoundingBoxAscent, descent: own.fontBoundingBoxDescent };
      })()`,
    )) as { own: number; other: number; ascent: number; descent: number };
    const sizeAdjust = measured.own / measured.other;
    out[`${font} ${weight}`] = {
      sizeAdjust: Math.round(sizeAdjust * 10000) / 100,
      ascent: Math.round((measured.ascent / 1000 / sizeAdjust) * 10000) / 100,
      descent: Math.round((measured.descent / 1000 / sizeAdjust) * 10000) / 100,
    };
  }
}
console.log(JSON.stringify(out, null, 1));
await browser.close();
