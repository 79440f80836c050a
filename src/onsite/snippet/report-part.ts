/**
 * The measuring part of the site script (issue 48 §4): `pamReport(base, answer)` is called once
 * the decision is applied or the page shown, with decide's JSON answer (`{experiences, token}`).
 * It reports the page view's totals so far to `POST {base}/_pam/x` (src/onsite/measure/door.ts)
 * with `sendBeacon` (text/plain: no CORS preflight): at once (a view per experience applied or held
 * out, and the token's conversionUrl matches), on a click on a changed element, on
 * `pam.conversion()` and `pam.identify(email)`, and when the page is hidden or left. Totals, not
 * increments: a lost report costs nothing, the next carries it. A click counts for an experience
 * when its target is inside an element one of its changes selects, or inside a section it
 * inserted (the section's host, `[data-pam-insert]`, stands beside that element). No cookie, no storage; every step is
 * guarded, so nothing ever throws into the host page. It is the only place that defines `window.pam`:
 * `pam.conversion()` and `pam.identify()` called before the decision are kept for its first report.
 * ES2017, as the measuring script of served pages (src/site/measure/script.ts).
 */
export const REPORT_PART = `var pamState = { clicks: {}, conversions: 0, identify: '', send: function () {} };
window.pam = window.pam || {};
window.pam.conversion = function () { pamState.conversions++; pamState.send(); };
window.pam.identify = function (email) { if (typeof email === 'string' && email.indexOf('@') > 0) { pamState.identify = email.slice(0, 254); pamState.send(); } };
function pamReport(base, answer) {
  try {
    var s = pamState, d = document, w = window, n = navigator, url = base + '/_pam/x';
    if (!answer || typeof answer.token !== 'string') return;
    var applied = (answer.experiences || []).filter(function (x) { return x && x.arm === 'personalised' && x.changes; });
    var body = function (keep) {
      var r = { token: answer.token }, c = {}, k = Object.keys(s.clicks).slice(0, keep);
      k.forEach(function (id) { c[id] = s.clicks[id]; });
      if (k.length) r.clicks = c;
      if (s.conversions) r.conversions = Math.min(s.conversions, 10000);
      if (s.identify) r.identify = s.identify;
      return JSON.stringify(r);
    };
    s.send = function () {
      try {
        var text = body(50);
        // The collector takes 2 KB at most: fewer experiences' clicks rather than no report.
        for (var keep = 49; keep >= 0 && new Blob([text]).size > 2048; keep--) text = body(keep);
        if (n.sendBeacon && n.sendBeacon(url, text)) return;
        fetch(url, { method: 'POST', body: text, mode: 'no-cors', keepalive: true, credentials: 'omit', headers: { 'content-type': 'text/plain' } }).catch(function () {});
      } catch (e) {}
    };
    d.addEventListener('click', function (e) {
      try {
        var t = e.target, hit = false;
        if (!t || !t.closest) return;
        // A click in an inserted section reaches the page as one on its host, beside the selected element.
        var h = t.closest('[data-pam-insert]'), near = h ? [h.nextElementSibling, h.previousElementSibling] : [];
        applied.forEach(function (x) {
          var on = x.changes.some(function (c) {
            try {
              return c.action === 'section' ? near.some(function (el) { return el && el.matches(c.selector); }) : t.closest(c.selector);
            } catch (err) { return false; }
          });
          if (on && (s.clicks[x.experienceId] || 0) < 10000) { s.clicks[x.experienceId] = (s.clicks[x.experienceId] || 0) + 1; hit = true; }
        });
        if (hit) s.send();
      } catch (err) {}
    }, true);
    d.addEventListener('visibilitychange', function () { if (d.visibilityState !== 'visible') s.send(); });
    w.addEventListener('pagehide', function () { s.send(); });
    s.send();
  } catch (e) {}
}
`;
