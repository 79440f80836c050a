import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The measuring script, `/_pam/v.js`: the whole of it, sent as is (no build step). It reads the
 * view token the document carries, counts what the collector records (visible time, deepest
 * scroll, clicks, `pam.question()` and `pam.conversion()` calls, the URL's UTM parameters; the
 * referrer, whether the URL has an ad click id, whether the page was left; `pam.track(name, { value })`
 * events and page action clicks by purpose, for goals) and reports the totals so far with `sendBeacon` (text/plain: no CORS preflight) at start, every 15 s
 * while visible, when hidden and when left. Totals, not increments: a lost or refused report costs
 * nothing, the next one carries it. No cookies, no storage, no third party, nothing about the
 * device. ES2017, so every browser of the last years runs it.
 *
 * For goals (src/goals/): `pam.track(name, { value })` counts an event by name with the sum of its
 * values (a number from 0 to 1e9, any other counts 0), and a click on a page action (its purpose from
 * `#pam-actions`, by its place among the actions) counts its purpose and reports at once, before the click navigates. At most
 * 16 names of each, 100 characters each, 1,000 times each; a burst of `track` calls goes in one
 * report. A report over 2 KB drops the UTM values, then the last names, never the visit.
 *
 * For maps and web vitals (issue 49, src/visits/maps.ts): the viewport class at load, the clicks in
 * each `[data-pam-section]` since the previous report by element kind and cell of a 20 × 20 grid over
 * the section (48 cells at most per report; the rest are dropped), rage clicks, the sections whose
 * middle the viewport's bottom passed, and the web vitals `/_pam/wv.js` (web-vitals) reports.
 */
export const MEASURING_SCRIPT = `(function () {
  'use strict';
  var d = document, w = window, n = navigator, token;
  try { token = JSON.parse(d.getElementById('pam-view').textContent).token; } catch (e) { return; }
  if (typeof token !== 'string') return;
  var purposes = {};
  try { purposes = JSON.parse(d.getElementById('pam-actions').textContent); } catch (e) {}
  var clicks = 0, questions = 0, conversions = 0, scroll = 0, shown = 0, since = null, utm = {}, pending = null, events = {}, actions = {};
  // Maps (issue 49): clicks since the last report per section, kind and cell; sections seen; web vitals.
  var vw = w.innerWidth, viewport = vw < 768 ? 'mobile' : vw < 1024 ? 'tablet' : 'desktop';
  var cells = {}, reached = {}, vitals = null, recent = [], raging = false, vpending = null;
  function count(map, name, value) {
    name = String(name).slice(0, 100);
    var e = map[name];
    if (!name || (!e && Object.keys(map).length >= 16)) return false;
    e = map[name] = e || [name, 0, 0];
    if (e[1] < 1000) { e[1]++; e[2] += value; }
    return true;
  }
  var query = new URLSearchParams(location.search), left = false;
  // Where the visit came from: the collector keeps the referrer's host and channel only.
  var source = { referrer: d.referrer.slice(0, 512), adClick: ['gclid', 'fbclid', 'msclkid'].some(function (k) { return query.has(k); }) };
  ['source', 'medium', 'campaign', 'term', 'content'].forEach(function (k) {
    utm['utm' + k.charAt(0).toUpperCase() + k.slice(1)] = (query.get('utm_' + k) || '').slice(0, 255);
  });
  function visible() { return d.visibilityState === 'visible'; }
  function tick() {
    var t = performance.now();
    if (since !== null) shown += t - since;
    since = visible() ? t : null;
  }
  function depth() {
    var h = d.documentElement, b = d.body;
    var total = Math.max(h.scrollHeight, b ? b.scrollHeight : 0);
    var seen = Math.max(0, w.scrollY) + w.innerHeight;
    var p = total > 0 ? Math.min(100, Math.round(seen / total * 100)) : 100;
    if (p > scroll) scroll = p;
    // A section is reached once the viewport's bottom passed its middle.
    [].forEach.call(d.querySelectorAll('[data-pam-section]'), function (el) {
      var r = el.getBoundingClientRect(), i = +el.getAttribute('data-pam-section');
      if (i < 50 && r.height && r.top + r.height / 2 <= w.innerHeight) reached[i] = 1;
    });
  }
  function kind(t) {
    return t.closest('.top .button, .actions > *') ? 'action' : t.closest('.faq') ? 'faq' : t.closest('form') ? 'form'
      : t.closest('a') ? 'link' : t.closest('img, picture, video, figure') ? 'image' : 'other';
  }
  function cellOf(e) {
    var el = e.target.closest && e.target.closest('[data-pam-section]');
    if (!el) return;
    var r = el.getBoundingClientRect(), g = function (v, o, l) { return Math.max(0, Math.min(19, Math.floor((v - o) / l * 20))) || 0; };
    var c = [+el.getAttribute('data-pam-section'), kind(e.target), g(e.clientX, r.left, r.width), g(e.clientY, r.top, r.height), 0, 0], k = c.slice(0, 4).join();
    if (!cells[k] && Object.keys(cells).length >= 48) return;
    c = cells[k] = cells[k] || c;
    c[4]++;
    // A rage click: 3 or more clicks within 1 s and 30 px of each other, counted once.
    var t = e.timeStamp, x = e.pageX, y = e.pageY;
    recent = recent.filter(function (q) { return t - q[0] < 1000 && Math.abs(q[1] - x) <= 30 && Math.abs(q[2] - y) <= 30; });
    recent.push([t, x, y]);
    if (recent.length < 3) raging = false;
    else if (!raging) { raging = true; c[5]++; }
  }
  function body(withUtm, keep, cellsKept) {
    var r = { token: token, visibleMs: Math.round(shown), scroll: scroll, clicks: clicks, questions: questions, conversions: conversions, viewport: viewport };
    var c = Object.values(cells).slice(0, cellsKept), s = Object.keys(reached).map(Number);
    if (c.length) r.cells = c;
    if (s.length) r.reached = s;
    if (vitals) r.vitals = vitals;
    if (withUtm) for (var k in utm) r[k] = utm[k];
    var e = Object.values(events).slice(0, keep), a = Object.values(actions).slice(0, keep);
    if (e.length) r.events = e;
    if (a.length) r.actions = a.map(function (x) { return x.slice(0, 2); });
    for (var s in source) r[s] = source[s];
    if (left) r.left = true;
    return JSON.stringify(r);
  }
  function send() {
    tick();
    depth();
    var cellsKept = 48, text = body(true, 16, cellsKept), big = function () { return new Blob([text]).size > 2048; };
    // The collector takes 2 KB at most: clicks beyond that are dropped, then long non-ASCII UTM values, never the visit.
    while (cellsKept > 0 && big()) text = body(true, 16, cellsKept -= 8);
    for (var keep = 16; keep >= 0 && big(); keep--) text = body(false, keep, 0);
    // The cells are counts since the previous report: sent (or dropped), they start again.
    cells = {};
    try { if (n.sendBeacon && n.sendBeacon('/_pam/collect', text)) return; } catch (e) {}
    try { fetch('/_pam/collect', { method: 'POST', body: text, keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }); } catch (e) {}
  }
  d.addEventListener('click', function (e) {
    clicks++;
    cellOf(e);
    var b = e.target.closest && e.target.closest('.top .button, .actions > .button, .actions > .lead button'), a = b && b.closest('.actions > *');
    var p = b && (a ? (purposes.actions || [])[[].indexOf.call(a.parentNode.children, a)] : purposes.header);
    if (p && count(actions, p, 0)) send();
  }, true);
  w.addEventListener('scroll', depth, { passive: true });
  // Hidden: one report after the event's other listeners, with the vitals they finalise (two racing could lose the cells).
  function later() { if (!vpending) vpending = setTimeout(function () { vpending = null; send(); }, 0); }
  d.addEventListener('visibilitychange', function () { if (visible()) tick(); else later(); });
  w.addEventListener('pagehide', function () { left = true; send(); });
  w.addEventListener('pageshow', function () { left = false; });
  // A form's navigation may take the page before its pagehide report leaves: report as it is sent.
  d.addEventListener('submit', send, true);
  setInterval(function () { if (visible()) send(); }, 15000);
  // Web vitals: Google's web-vitals (its standard build), served as /_pam/wv.js and loaded once the page is,
  // so the page's own loading never waits for it. A value a page hides with goes in a report of its own.
  w.addEventListener('load', function () {
    var el = d.createElement('script');
    el.src = '/_pam/wv.js';
    el.async = true;
    d.head.appendChild(el);
  });
  w.pam = {
    _v: function (wv) {
      ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'].forEach(function (m) {
        wv['on' + m](function (v) {
          (vitals = vitals || {})[m.toLowerCase()] = Math.max(0, v.value);
          if (!visible()) later();
        });
      });
    },
    question: function () { questions++; },
    conversion: function () { conversions++; send(); },
    track: function (name, props) {
      var v = props && props.value;
      if (typeof name === 'string' && count(events, name, typeof v === 'number' && v >= 0 && v <= 1e9 ? v : 0) && !pending)
        pending = setTimeout(function () { pending = null; send(); }, 250);
    }
  };
  tick();
  send();
})();
`;

/** Strong, from the bytes: a new release's script is fetched again once the cache lets it go. */
export const MEASURING_SCRIPT_ETAG = etagOf(MEASURING_SCRIPT);

/**
 * `/_pam/wv.js`: web-vitals' standard build as the package ships it (minified), its global kept
 * inside a function, handing its functions to the measuring script. A file of its own: the package
 * alone is over 3 KB gzipped, more than the measuring script may weigh (docs/decisions.md, issue 49).
 */
export const VITALS_SCRIPT = `(function () {
${readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('web-vitals')), 'web-vitals.iife.js'), 'utf8')
  .replace(/\n\/\/# sourceMappingURL=.*$/m, '')
  .trim()}
var p = window.pam; if (p && p._v) p._v(webVitals);
})();
`;
export const VITALS_SCRIPT_ETAG = etagOf(VITALS_SCRIPT);

function etagOf(text: string): string {
  return `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
}
