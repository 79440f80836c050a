import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { AppError } from '../http/errors.js';
import { FAVICON_SVG } from './favicon.js';

/** Where scripts/build-console.ts writes the bundle: the same place from src/console-host/ (tsx) and dist/console-host/ (built). */
const BUILT = fileURLToPath(new URL('../../dist/www/console/', import.meta.url));

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
/** The bundle's own file names: nothing else under the folder can be asked for, and no path can climb out. */
const ASSET = /^[a-z0-9-]+\.(js|css)$/;

/**
 * The console's policy. Scripts and styles only from the console itself, never inline. The page
 * preview is an iframe of a preview link on this origin (`frame-src 'self'`), a document with a
 * policy of its own (src/pages/preview.ts), into which the unsaved content is posted
 * (`form-action 'self'`); images come from the tenant's domains over https or the
 * public base URL (signed download links). A service on plain http (a local or test set-up)
 * serves its fallback domains' files over http too: the page maps draw a preview copy in the
 * console's own document (console/src/views/map-frame.tsx), whose images come from there.
 */
export function consolePolicy(publicBaseUrl: string, fallbackDomainSuffix: string): string {
  const base = new URL(publicBaseUrl);
  const images = new Set(["'self'", 'data:', 'https:', base.origin]);
  if (base.protocol === 'http:') images.add(`http://*.${fallbackDomainSuffix}:*`);
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${[...images].join(' ')}`,
    "frame-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    // The live preview posts the unsaved content into its frame (src/pages/preview.ts); no other form posts.
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The web console at /console (its source is console/, built by `npm run build`). Routes outside
 * /v0 need no API key: the page and its bundle are public, and the console then calls /v0 with
 * the key its user pastes. Only the API host gets here: the door (site/door.ts) sends requests on
 * tenant domains to the visitor plane. `GET /` on the API host redirects here (302).
 */
export const consoleRoutes: FastifyPluginAsync<{ publicBaseUrl: string; fallbackDomainSuffix: string }> = async (app, options) => {
  const policy = consolePolicy(options.publicBaseUrl, options.fallbackDomainSuffix);

  const send = async (reply: FastifyReply, name: string, extension: string) => {
    let body: Buffer;
    try {
      body = await readFile(BUILT + name);
    } catch {
      if (name === 'index.html') throw new AppError('unavailable', 'The console is not built: run `npm run build`');
      throw new AppError('not_found', `No console file ${name}`);
    }
    return (
      reply
        .type(TYPES[extension] ?? 'application/octet-stream')
        .header('content-security-policy', policy)
        .header('cache-control', 'no-cache')
        .header('referrer-policy', 'no-referrer')
        .header('x-frame-options', 'DENY')
        // Popups keep their opener (issue 48): "Pick an element" opens the customer's site, whose
        // script answers by window.opener.postMessage; same-origin would cut that tie.
        .header('cross-origin-opener-policy', 'same-origin-allow-popups')
        .send(body)
    );
  };

  // The API host's root is where a first visitor lands (the start-up line prints the host): send
  // them to the console. Tenant domains never get here (the door gives them the visitor plane).
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  app.get('/console/favicon.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('image/svg+xml')
      .header('content-security-policy', policy)
      .header('cache-control', 'public, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(FAVICON_SVG),
  );
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 308));
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => send(reply, 'index.html', 'html'));
  app.get<{ Params: { file: string } }>('/console/:file', { schema: { hide: true } }, async (request, reply) => {
    const match = ASSET.exec(request.params.file);
    if (!match?.[1]) throw new AppError('not_found', `No console file ${request.params.file}`);
    return send(reply, request.params.file, match[1]);
  });
};
