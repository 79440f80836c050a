import type { Static } from '@sinclair/typebox';
import type { Action, Content, Metadata, Page } from '../pages/index.js';
import { fillTokens, type TokenValues } from './content.js';
import { type Brand, brandCss, brandFontPreload, brandFooter, faviconOf, logoImg } from './brand.js';
import { attr, scriptJson, text, url } from './html.js';
import { STYLE } from './style.js';
import { frameOrigins, heroCarriesHeadline, renderSections, VIDEO_SCRIPT } from './sections.js';
import type { FileVariant, ShownImage } from '../assets/index.js';

/** The lead form's fields, as submitted (kept when the form is shown again with its errors). */
export interface LeadFields {
  name: string;
  email: string;
  phone: string;
}
export type LeadErrors = Partial<Record<keyof LeadFields, string>>;

/** What one served document shows: the page, for one audience or none. */
export interface View {
  page: Page;
  audience?: {
    name: string;
    formInstructionsOverride: string | null;
    urlOverride: string | null;
  };
  /** The audience's effectiveMetadata, or the page's metadata without an audience. */
  metadata: Metadata | undefined;
  content: Content;
  values: TokenValues;
  /** The path the visitor asked for: a submitted form comes back to it. */
  path: string;
  /** A visitor's document with an audience: the view token and the measuring script are in it. */
  measured: boolean;
  /** Never to be indexed: an audience that names a person, or a preview. */
  noindex: boolean;
  /** Where the tenant's files are served: a `src` for the document and an absolute URL for crawlers. */
  fileSrc(fileId: string, variant?: FileVariant): string;
  fileUrl(fileId: string): string;
  form?: { submitted: boolean; actionId?: string; errors?: LeadErrors; fields?: LeadFields };
  /** The tenant's site settings; none: the default style, no logo, footer or favicon. */
  brand?: Brand;
  /** The images the sections show, by asset id (an asset gone since the content was written is missing). */
  images?: ReadonlyMap<string, ShownImage>;
}

/**
 * Where the visit's view token goes: rendered documents are cached and hashed without it (one ETag
 * for every visit), and each response puts a fresh token in its place. The token is base64url
 * with a dot, so the same string is safe in the JSON and in the attribute it fills.
 */
export const TOKEN_SLOT = '\u0000pam-token\u0000';
/**
 * Where the query the visitor's URL had goes (the lead form's `path`, so the confirmation comes back
 * to the version they were shown): filled per response like the token, never part of the cache.
 */
export const QUERY_SLOT = '\u0000pam-query\u0000';

const ROBOTS_PRIVATE = 'noindex, nofollow';

export function robotsOf(view: View): string | undefined {
  if (view.noindex) return ROBOTS_PRIVATE;
  const robots = view.metadata?.robots ?? [];
  return robots.length > 0 ? robots.join(', ') : undefined;
}

const meta = (name: string, content: string | undefined) => (content ? `<meta name="${attr(name)}" content="${attr(content)}">` : '');
const property = (name: string, content: string | undefined) =>
  content ? `<meta property="${attr(name)}" content="${attr(content)}">` : '';

/** An image field: its file served from this domain, else its URL when that is a safe one. */
function image(view: View, fileId: string | undefined, imageUrl: string | undefined): string | undefined {
  if (fileId) return attr(view.fileUrl(fileId));
  return imageUrl ? url(imageUrl) : undefined;
}

/**
 * The texts of the document's `<style>` elements, in order: the default style, then the brand's
 * rules in an element of their own (the default stays one constant text). The preview link's
 * policy allows exactly these by their hashes (src/pages/preview.ts).
 */
export function documentStyles(view: View): string[] {
  return view.brand ? [STYLE, brandCss(view.brand)] : [STYLE];
}

function head(view: View): string {
  const m = view.metadata;
  const title = m?.title || view.page.title;
  const robots = robotsOf(view);
  const canonical = m?.canonicalUrl ? url(m.canonicalUrl) : undefined;
  const ogImage = image(view, m?.ogImageFileId, m?.ogImageUrl);
  const twitterImage = image(view, m?.twitterImageFileId, m?.twitterImageUrl);
  return [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${text(title)}</title>`,
    meta('description', m?.description),
    meta('keywords', m?.keywords.join(', ')),
    meta('author', m?.author),
    meta('robots', robots),
    canonical ? `<link rel="canonical" href="${canonical}">` : '',
    meta('theme-color', m?.themeColor),
    property('og:title', m?.ogTitle),
    property('og:description', m?.ogDescription),
    ogImage ? `<meta property="og:image" content="${ogImage}">` : '',
    property('og:image:alt', m?.ogImageAlt),
    property('og:site_name', m?.ogSiteName),
    m?.ogUrl && url(m.ogUrl) ? `<meta property="og:url" content="${url(m.ogUrl)}">` : '',
    meta('twitter:card', ogImage || twitterImage ? 'summary_large_image' : m?.twitterTitle ? 'summary' : undefined),
    meta('twitter:title', m?.twitterTitle),
    meta('twitter:description', m?.twitterDescription),
    twitterImage ? `<meta name="twitter:image" content="${twitterImage}">` : '',
    meta('twitter:image:alt', m?.twitterImageAlt),
    meta('twitter:site', m?.twitterSite),
    meta('twitter:creator', m?.twitterCreator),
    faviconOf(view.brand, title),
    brandFontPreload(view.brand),
    ...documentStyles(view).map((css) => `<style>${css}</style>`),
    // The slot is filled with base64url and a dot: nothing in it needs escaping in JSON.
    view.measured ? `<script type="application/json" id="pam-view">{"token":"${TOKEN_SLOT}"}</script>` : '',
    view.measured ? actionPurposes(view.page) : '',
    view.measured ? '<script src="/_pam/v.js" defer></script>' : '',
  ].join('');
}

/**
 * The purposes of the header action and of each action in the order they are shown (one element
 * each in `.actions`): the measuring script counts a click on an action by its purpose, for goals
 * of kind action. Beside the markup, so the buttons stay as they are.
 */
function actionPurposes(page: View['page']): string {
  const cut = (purpose: string | undefined) => (purpose ?? '').slice(0, 100);
  const header = cut(page.headerActionId ? page.actions.find((a) => a.actionId === page.headerActionId)?.purpose : '');
  const actions = [...page.actions].sort((a, b) => a.actionIndex - b.actionIndex).map((a) => cut(a.purpose));
  if (!header && !actions.some(Boolean)) return '';
  return `<script type="application/json" id="pam-actions">${scriptJson({ header, actions })}</script>`;
}

type PageAction = Static<typeof Action>;

const isForm = (action: PageAction) => action.actionType === 'form';
const formAnchor = (action: PageAction) => `pam-form-${action.actionId}`;
/** The id of a lead form's confirmation: the fragment its redirect names (site/forms/routes.ts). */
export const confirmationId = (actionId: string) => `pam-thanks-${actionId}`;

/** A link button; a stored URL that is not a safe one leaves the title without a link. */
function linkButton(view: View, action: PageAction): string {
  const title = text(fillTokens(action.buttonTitle, view.values));
  const href = isForm(action) ? `#${attr(formAnchor(action))}` : url(view.audience?.urlOverride || action.url);
  return href ? `<a class="button" href="${href}">${title}</a>` : `<span class="button">${title}</span>`;
}

/**
 * The lead form's honeypot: a field people never see or reach (off-screen, hidden from assistive
 * technology, out of the tab order, never autofilled) under a name form-filling bots fill.
 */
export const HONEYPOT = 'website';
const HONEYPOT_FIELD = `<div class="hp" aria-hidden="true"><label>Website<input type="text" name="${HONEYPOT}" value="" tabindex="-1" autocomplete="off"></label></div>`;

const FIELD_LABELS: Record<keyof LeadFields, [string, string]> = {
  name: ['Name', 'text'],
  email: ['Email', 'email'],
  phone: ['Phone (optional)', 'tel'],
};

/** The inline lead form: it works without JavaScript, and carries the visit's token. */
function leadForm(view: View, action: PageAction): string {
  const id = formAnchor(action);
  const state = view.form?.actionId === action.actionId ? view.form : undefined;
  if (view.form?.submitted) {
    // A status is announced by screen readers; the form's redirect names its id, so it is in view at once.
    return `<section class="lead" id="${attr(id)}"><p class="thanks" id="${attr(confirmationId(action.actionId))}" role="status" tabindex="-1">Thank you! Your details have been sent.</p></section>`;
  }
  const instructions = view.audience?.formInstructionsOverride;
  const fields = (Object.keys(FIELD_LABELS) as (keyof LeadFields)[]).map((field) => {
    const [label, type] = FIELD_LABELS[field];
    const error = state?.errors?.[field];
    const errorId = `${id}-${field}-error`;
    const value = state?.fields?.[field] ?? '';
    return `<label>${text(label)}<input type="${type}" name="${field}" value="${attr(value)}"${field === 'phone' ? '' : ' required'}${
      field === 'name' ? ' maxlength="255" autocomplete="name"' : field === 'email' ? ' autocomplete="email"' : ' autocomplete="tel"'
    }${error ? ` aria-invalid="true" aria-describedby="${attr(errorId)}"` : ''}>${
      error ? `<span class="err" id="${attr(errorId)}">${text(error)}</span>` : ''
    }</label>`;
  });
  return [
    `<section class="lead" id="${attr(id)}">`,
    instructions ? `<p>${text(instructions)}</p>` : '',
    state?.errors ? '<p class="err" role="alert">Please correct the fields below.</p>' : '',
    '<form method="post" action="/_pam/forms">',
    `<input type="hidden" name="token" value="${view.measured ? TOKEN_SLOT : ''}">`,
    `<input type="hidden" name="action" value="${attr(action.actionId)}">`,
    `<input type="hidden" name="path" value="${attr(view.path)}${view.measured ? QUERY_SLOT : ''}">`,
    ...fields,
    HONEYPOT_FIELD,
    `<button type="submit">${text(fillTokens(action.buttonTitle, view.values))}</button>`,
    '</form></section>',
  ].join('');
}

function body(view: View): string {
  const { page, content, values } = view;
  const header = page.headerActionId && page.actions.find((a) => a.actionId === page.headerActionId);
  // A lead form appears once: where a cta section first shows it, else among the actions.
  const formsShown = new Set<string>();
  const actionHtml = (a: PageAction) => {
    if (!isForm(a) || formsShown.has(a.actionId)) return linkButton(view, a);
    formsShown.add(a.actionId);
    return leadForm(view, a);
  };
  const subheadline = fillTokens(content.subheadline, values);
  const headline = `<h1>${text(fillTokens(content.headline, values))}</h1>${subheadline ? `<p class="sub">${text(subheadline)}</p>` : ''}`;
  const sections = renderSections(
    {
      values,
      images: view.images ?? new Map(),
      fileSrc: view.fileSrc,
      headerButton: header ? linkButton(view, header) : '',
      headline,
      action: (actionId) => {
        const a = page.actions.find((x) => x.actionId === actionId);
        return a ? `<div class="actions">${actionHtml(a)}</div>` : '';
      },
      button: (actionId) => {
        const a = page.actions.find((x) => x.actionId === actionId);
        return a ? linkButton(view, a) : '';
      },
    },
    content,
  );
  const actions = [...page.actions]
    .sort((a, b) => a.actionIndex - b.actionIndex)
    .filter((a) => !formsShown.has(a.actionId))
    .map(actionHtml);
  const widgets = page.actionCardWidgets.map((w) => {
    const logos = w.logos
      .map(({ image: logo }) => {
        const src = logo.fileId ? attr(view.fileSrc(logo.fileId)) : url(logo.url);
        return src ? `<li><img src="${src}" alt="${attr(logo.altText)}" loading="lazy"></li>` : '';
      })
      .join('');
    return `<section class="widget" data-type="${attr(w.type)}">${w.title ? `<h2>${text(w.title)}</h2>` : ''}<ul class="logos">${logos}</ul></section>`;
  });
  const footer = page.footerLinks.map(
    (group) =>
      `<nav aria-label="${attr(group.title)}">${group.title ? `<h2>${text(group.title)}</h2>` : ''}<ul>${group.links
        .map((link) => {
          const href = url(link.url);
          return `<li>${href ? `<a href="${href}">${text(link.text)}</a>` : text(link.text)}</li>`;
        })
        .join('')}</ul></nav>`,
  );
  const logo = view.brand?.logo;
  const brandFoot = view.brand ? brandFooter(view.brand) : '';
  return [
    header || logo
      ? `<header class="top"><div class="wrap">${logo ? logoImg(logo) : ''}${header ? linkButton(view, header) : ''}</div></header>`
      : '',
    '<main>',
    // The page's one h1: in the first hero when that hero has no heading of its own, else above the sections.
    heroCarriesHeadline(content) ? '' : `<div class="hero">${headline}</div>`,
    sections,
    actions.length > 0 ? `<div class="actions">${actions.join('')}</div>` : '',
    ...widgets,
    '</main>',
    footer.length > 0 || brandFoot
      ? `<footer>${footer.length > 0 ? `<div class="wrap">${footer.join('')}</div>` : ''}${brandFoot}</footer>`
      : '',
    frameOrigins(content).length > 0 ? `<script>${VIDEO_SCRIPT}</script>` : '',
    // The tenant's own code, by design not escaped; a disabled script never appears.
    ...page.scripts.filter((s) => s.enabled).map((s) => s.content),
  ].join('');
}

/** The whole document, with `TOKEN_SLOT` wherever the visit's token goes. */
export function renderDocument(view: View): string {
  return `<!doctype html><html lang="en"><head>${head(view)}</head><body>${body(view)}</body></html>`;
}
