import { createHash } from 'node:crypto';

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
 */
export const MEASURING_SCRIPT = `(function () {
  'use strict';
  var d = document, w = window, n = navigator, token;
  try { token = JSON.parse(d.getElementById('pam-view').textContent).token; } catch (e) { return; }
  if (typeof token !== 'string') return;
  var purposes = {};
  try { purposes = JSON.parse(d.getElementById('pam-actions').textContent); } catch (e) {}
  var clicks = 0, questions = 0, conversions = 0, scroll = 0, shown = 0, since = null, utm = {}, pending = null, events = {}, actions = {};
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
  }
  function body(withUtm, keep) {
    var r = { token: token, visibleMs: Math.round(shown), scroll: scroll, clicks: clicks, questions: questions, conversions: conversions };
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
    var text = body(true, 16);
    // The collector takes 2 KB at most: long non-ASCII UTM values must not cost the visit.
    for (var keep = 16; keep >= 0 && new Blob([text]).size > 2048; keep--) text = body(false, keep);
    try { if (n.sendBeacon && n.sendBeacon('/_pam/collect', text)) return; } catch (e) {}
    try { fetch('/_pam/collect', { method: 'POST', body: text, keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }); } catch (e) {}
  }
  d.addEventListener('click', function (e) {
    clicks++;
    var b = e.target.closest && e.target.closest('.top .button, .actions > .button, .actions > .lead button'), a = b && b.closest('.actions > *');
    var p = b && (a ? (purposes.actions || [])[[].indexOf.call(a.parentNode.children, a)] : purposes.header);
    if (p && count(actions, p, 0)) send();
  }, true);
  w.addEventListener('scroll', depth, { passive: true });
  d.addEventListener('visibilitychange', function () { if (visible()) tick(); else send(); });
  w.addEventListener('pagehide', function () { left = true; send(); });
  w.addEventListener('pageshow', function () { left = false; });
  // A form's navigation may take the page before its pagehide report leaves: report as it is sent.
  d.addEventListener('submit', send, true);
  setInterval(function () { if (visible()) send(); }, 15000);
  w.pam = {
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
export const MEASURING_SCRIPT_ETAG = `"${createHash('sha256').update(MEASURING_SCRIPT).digest('base64url').slice(0, 27)}"`;
