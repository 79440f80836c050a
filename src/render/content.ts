import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';

export interface TokenValues {
  personName?: string | null;
  accountName?: string | null;
  audienceName?: string | null;
  /**
   * A visit's own values (issue 39: utm.*, query.<name>, visitor.country, company.name|industry),
   * already held to the value rule (site/serve/visit.ts); null: the fallback. Absent: every such
   * token takes its fallback (previews, the agent).
   */
  visit?: (name: string) => string | null;
  /** Collects the visit tokens a rendering used: its cache key names their values (site/serve/documents.ts). */
  used?: Set<string>;
}

/**
 * `{{ name }}` or `{{ name | fallback }}`. A fallback holds no braces, so an inner token of a
 * "nested" one is filled on its own and the outer braces stay as written.
 */
const TOKEN = /\{\{\s*([A-Za-z_][\w.-]*)\s*(?:\|([^{}]*))?\}\}/g;

/** The tokens a visit fills: its URL's, its country's, its company's. */
export const VISIT_TOKEN =
  /^(?:utm\.(?:source|medium|campaign|term|content)|query\.[A-Za-z0-9_-]{1,40}|visitor\.country|company\.(?:name|industry))$/;

const firstWord = (name: string) => name.trim().split(/\s+/)[0];

const TOKENS: Record<string, (values: TokenValues) => string | null | undefined> = {
  'person.name': (v) => v.personName,
  'person.firstName': (v) => v.personName && firstWord(v.personName),
  'account.name': (v) => v.accountName,
  'audience.name': (v) => v.audienceName,
};

/** Plain text with the tokens filled (the caller escapes it for its context). */
export function fillTokens(text: string, values: TokenValues): string {
  if (!text.includes('{{')) return text;
  // One pass: a value that itself reads like a token is never filled again.
  return text.replace(TOKEN, (_match, name: string, fallback: string | undefined) => {
    if (VISIT_TOKEN.test(name)) {
      values.used?.add(name);
      return values.visit?.(name) ?? fallback?.trim() ?? '';
    }
    const token = Object.hasOwn(TOKENS, name) ? TOKENS[name] : undefined;
    if (!token) return '';
    const value = token(values)?.trim();
    return value ? value : (fallback?.trim() ?? '');
  });
}

const SAFE_LINK = /^(?:https?:|mailto:)/i;

const md = new MarkdownIt('default', { html: false, linkify: false, typographer: false });
// Anything but an absolute http(s) or mailto link stays as its text.
md.validateLink = (url) => SAFE_LINK.test(url.trim());

const renderToken = md.renderer.renderToken.bind(md.renderer);
md.renderer.rules.link_open = (tokens, idx, options) => {
  tokens[idx]?.attrSet('rel', 'nofollow noopener');
  return renderToken(tokens, idx, options);
};

// Images would load from anywhere; the body is text, lists, headings and links: an image shows its alt text.
// (renderInlineAsText does not escape: the alt text is escaped here.)
md.renderer.rules.image = (tokens, idx, options, env) =>
  md.utils.escapeHtml(md.renderer.renderInlineAsText(tokens[idx]?.children ?? [], options, env));

function fillInline(tokens: Token[], values: TokenValues): void {
  for (const token of tokens) {
    if (token.children) fillInline(token.children, values);
    // After parsing, so a value is only ever text: it can never become Markdown or HTML.
    else if (token.type === 'text') token.content = fillTokens(token.content, values);
  }
}

/** Safe HTML of a Markdown body, tokens filled and escaped as text (markdown-it, html: false). */
export function renderMarkdown(markdown: string, values: TokenValues): string {
  const env = {};
  const tokens = md.parse(markdown, env);
  fillInline(tokens, values);
  return md.renderer.render(tokens, md.options, env);
}
