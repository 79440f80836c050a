import { createHash } from 'node:crypto';

/**
 * The measuring script, `/_pam/v.js`: the whole of it, sent as is (no build step). It reads the
 * view token the document carries, counts what the collector records (visible time, deepest
 * scroll, clicks, `pam.question()` and `pam.conversion()` calls, the URL's UTM parameters) and
 * reports the totals so far with `sendBeacon` (text/plain: no CORS preflight) at start, every 15 s
 * while visible, when hidden and when left. Totals, not increments: a lost or refused report costs
 * nothing, the next one carries it. No cookies, no storage, no third party, nothing about the
 * device. ES2017, so every browser of the last years runs it.
 */
export const MEASURING_SCRIPT = `(function () {
  'use strict';
  var d = document, w = window, n = navigator, token;
  try { token = JSON.parse(d.getElementById('pam-view').textContent).token; } catch (e) { return; }
  if (typeof token !== 'string') return;
  var clicks = 0, questions = 0, conversions = 0, scroll = 0, shown = 0, since = null, utm = {};
  var query = new URLSearchParams(location.search);
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
  function body(withUtm) {
    var r = { token: token, visibleMs: Math.round(shown), scroll: scroll, clicks: clicks, questions: questions, conversions: conversions };
    if (withUtm) for (var k in utm) r[k] = utm[k];
    return JSON.stringify(r);
  }
  function send() {
    tick();
    depth();
    var text = body(true);
    // The collector takes 2 KB at most: long non-ASCII UTM values must not cost the visit.
    if (new Blob([text]).size > 2048) text = body(false);
    try { if (n.sendBeacon && n.sendBeacon('/_pam/collect', text)) return; } catch (e) {}
    try { fetch('/_pam/collect', { method: 'POST', body: text, keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }); } catch (e) {}
  }
  d.addEventListener('click', function () { clicks++; }, true);
  w.addEventListener('scroll', depth, { passive: true });
  d.addEventListener('visibilitychange', function () { if (visible()) tick(); else send(); });
  w.addEventListener('pagehide', send);
  // A form's navigation may take the page before its pagehide report leaves: report as it is sent.
  d.addEventListener('submit', send, true);
  setInterval(function () { if (visible()) send(); }, 15000);
  w.pam = {
    question: function () { questions++; },
    conversion: function () { conversions++; send(); }
  };
  tick();
  send();
})();
`;

/** Strong, from the bytes: a new release's script is fetched again once the cache lets it go. */
export const MEASURING_SCRIPT_ETAG = `"${createHash('sha256').update(MEASURING_SCRIPT).digest('base64url').slice(0, 27)}"`;
