import { createHash } from 'node:crypto';
import { scriptJson } from '../../render/index.js';
import { REPORT_PART } from './report-part.js';

/** What one site's script knows: where to ask, which paths ask, and where the console is. */
export interface SiteScriptConfig {
  /** The service's public base URL (decide, pick and the reports go there). */
  base: string;
  /** The console's origin: the only one a picked selector is posted to. */
  consoleOrigin: string;
  siteKey: string;
  /** The live experiences' URL patterns (RegExp sources, src/onsite/url-match.ts): a page they match is hidden and asks. */
  pages: string[];
  /** The live experiences' conversionUrl patterns: a page they match asks, without hiding. */
  conversions: string[];
}

/**
 * The site script, `/_pam/site.js?site={key}` (issue 48 §3), sent as is (no build step), ES2017,
 * no dependency. On a path no pattern matches it does nothing at all. On a matching one it hides
 * the page (opacity 0 on the root element) for at most `data-timeout` ms (default 400), asks decide, applies
 * each change as soon as its element exists (a MutationObserver until load), re-applies for 5 s
 * after load when a framework re-renders (React hydration), then shows the page and hands the
 * answer to the measuring part (`pamReport`). An answer later than the timeout is not applied: the
 * visitor has already seen the page as it is, and a late change would be the flicker the hiding
 * is for. `?pam_pick=` shows the console's element picker, `?pam_preview=` forces an experience.
 * Every entry point is inside try/catch: nothing it does can throw into the host page. No cookie,
 * no storage.
 */
const SCRIPT = `(function () {
  'use strict';
  try {
    var C = __CONFIG__, d = document, w = window, l = location, s = d.currentScript, E = encodeURIComponent;
    var T = parseInt(s && s.getAttribute('data-timeout'), 10);
    T = T >= 0 ? Math.min(T, 5000) : 400;
    var q = new URLSearchParams(l.search), P = q.get('pam_pick'), V = q.get('pam_preview');
    var ATTR = ['href', 'src', 'alt', 'title', 'placeholder', 'aria-label'];
    __REPORT__
    var report = function (a) { try { pamReport(C.b, a); } catch (e) {} };
    var any = function (list) {
      return list.some(function (r) { try { return new RegExp(r).test(l.pathname); } catch (e) { return false; } });
    };
    var ask = function (path, extra) {
      return fetch(C.b + path + '?site=' + E(C.s) + extra, { credentials: 'omit' })
        .then(function (r) { return r.ok ? r.json() : null; });
    };
    if (P) return pick(P);
    var hit = !!V || any(C.x), conv = any(C.c);
    if (!hit && !conv) return;
    // Hidden through the CSSOM, which a Content-Security-Policy without 'unsafe-inline' allows.
    var hs = d.documentElement.style, was = [hs.getPropertyValue('opacity'), hs.getPropertyPriority('opacity')];
    var shown = !hit, late = false, answer = null;
    var show = function () {
      if (shown) return;
      shown = true;
      hs.setProperty('opacity', was[0], was[1]);
      if (answer) report(answer);
    };
    if (hit) {
      hs.setProperty('opacity', '0', 'important');
      setTimeout(function () { late = true; show(); }, T);
    }
    var url = (l.origin + l.pathname + l.search).slice(0, 2000);
    ask('/_pam/decide', '&url=' + E(url) + '&ref=' + E(d.referrer.slice(0, 1000)) + (V ? '&preview=' + E(V) : ''))
      .then(function (a) {
        if (!a || typeof a !== 'object') return show();
        // Too late: the page was shown as it is, and stays so (measured as such: no experience).
        // A preview is applied whenever it comes: the marketer asked to see it, and it is not measured.
        if ((late && !V) || !hit) return report({ experiences: [], token: a.token });
        answer = a;
        apply(a);
      })
      .catch(function () { try { show(); } catch (e) {} });
  } catch (e) {
    try { show(); } catch (x) {}
  }

  function safe(c) {
    var v = c.value;
    if (typeof v !== 'string' || ATTR.indexOf(c.attribute) < 0) return false;
    if (c.attribute !== 'href' && c.attribute !== 'src') return true;
    if (/[\\s\\u0000-\\u001f\\u007f\\\\]/.test(v)) return false;
    return /^\\/(?!\\/)/.test(v) || /^https:\\/\\/[^\\/?#@]+([\\/?#]|$)/i.test(v);
  }

  function apply(a) {
    var todo = [];
    (a.experiences || []).forEach(function (x) {
      (x.changes || []).forEach(function (c) { todo.push({ c: c }); });
    });
    var one = function (t) {
      var c = t.c, el = t.el;
      if (!el || !el.isConnected) el = t.el = d.querySelector(c.selector);
      if (!el) return false;
      if (c.action === 'text') {
        if (el.textContent !== c.value) el.textContent = c.value;
      } else if (c.action === 'attribute') {
        if (safe(c) && el.getAttribute(c.attribute) !== c.value) el.setAttribute(c.attribute, c.value);
      } else if (c.action === 'hide') {
        if (el.style.getPropertyValue('display') !== 'none') el.style.setProperty('display', 'none', 'important');
      } else if (c.action === 'section' && (!t.h || !t.h.isConnected)) {
        var h = t.h = d.createElement('div');
        h.setAttribute('data-pam-insert', '');
        var root = h.attachShadow({ mode: 'open' });
        root.innerHTML = c.html;
        // A constructed sheet is outside the page's style-src; a <style> only where there is none.
        try { var sh = new CSSStyleSheet(); sh.replaceSync(a.style || ''); root.adoptedStyleSheets = [sh]; }
        catch (e) { var y = d.createElement('style'); y.textContent = a.style || ''; root.prepend(y); }
        el.parentNode.insertBefore(h, c.placement === 'before' ? el : el.nextSibling);
      }
      return true;
    };
    var run = function () {
      var all = true;
      todo.forEach(function (t) {
        try { if (!t.bad && !one(t)) all = false; } catch (e) { t.bad = true; }
      });
      return all;
    };
    var mo = new MutationObserver(function () {
      try { if (run() && !shown) show(); } catch (e) {}
    });
    var done = function () {
      try { if (run() || !shown) show(); } catch (e) {}
      setTimeout(function () { mo.disconnect(); }, 5000);
    };
    mo.observe(d.documentElement, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ATTR.concat('style') });
    if (run()) show();
    if (d.readyState === 'complete') done();
    else {
      d.addEventListener('DOMContentLoaded', function () { try { run(); show(); } catch (e) {} });
      w.addEventListener('load', done);
    }
  }

  function pick(token) {
    ask('/_pam/pick', '&token=' + E(token)).then(function (ok) {
      if (!ok || !w.opener) return;
      if (d.body) overlay(token);
      else d.addEventListener('DOMContentLoaded', function () { try { overlay(token); } catch (e) {} });
    }).catch(function () {});
  }

  function overlay(token) {
    var o = d.createElement('div');
    o.style.cssText = 'position:fixed;z-index:2147483647;pointer-events:none;outline:2px solid #0b57d0;background:rgba(11,87,208,.15)';
    d.body.appendChild(o);
    d.addEventListener('mousemove', function (e) {
      try {
        var r = d.elementFromPoint(e.clientX, e.clientY).getBoundingClientRect();
        o.style.left = r.left + 'px'; o.style.top = r.top + 'px'; o.style.width = r.width + 'px'; o.style.height = r.height + 'px';
      } catch (x) {}
    }, true);
    d.addEventListener('click', function (e) {
      e.preventDefault();
      e.stopPropagation();
      try { w.opener.postMessage({ type: 'pam:pick', token: token, selector: selectorOf(e.target) }, C.o); } catch (x) {}
    }, true);
  }

  // The shortest chain of child steps (an id that is unique, else the tag and its place among its
  // own kind) that names the element alone.
  function selectorOf(el) {
    var parts = [];
    for (var n = el; n && n.nodeType === 1 && n !== d.documentElement; n = n.parentElement) {
      if (n.id && d.querySelectorAll('#' + CSS.escape(n.id)).length === 1) { parts.unshift('#' + CSS.escape(n.id)); break; }
      var t = n.localName, i = 1, k = 0, x;
      for (x = n.previousElementSibling; x; x = x.previousElementSibling) if (x.localName === t) i++;
      for (x = n.parentElement ? n.parentElement.firstElementChild : n; x; x = x.nextElementSibling) if (x.localName === t) k++;
      parts.unshift(k > 1 ? t + ':nth-of-type(' + i + ')' : t);
      if (d.querySelectorAll(parts.join('>')).length === 1) break;
    }
    return parts.join('>');
  }
})();
`;

export interface SiteScript {
  body: string;
  etag: string;
}

/** The script of one site: its configuration in place, and an ETag of the whole text. */
export function siteScript(config: SiteScriptConfig): SiteScript {
  const embedded = scriptJson({
    b: config.base,
    o: config.consoleOrigin,
    s: config.siteKey,
    x: config.pages,
    c: config.conversions,
  });
  // Functions, not strings: a `$` in either text would be read as a replacement pattern.
  const body = SCRIPT.replace('__REPORT__', () => REPORT_PART).replace('__CONFIG__', () => embedded);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
