// What "Pick an element" and "Preview" open, worked out without the browser's state (so the
// console's tests can run it in Node): the page of an experience's URL match, the URL with its
// token, and the preview's visitor as the API takes it.

export type UrlMatch = { type: 'exact' | 'prefix' | 'glob'; value: string };

/** The preview token's body: the visit's UTM values and company, as `{{utm.*}}` and `{{company.*}}` read them. */
export interface PreviewChoices {
  utm?: Partial<Record<'source' | 'medium' | 'campaign' | 'term' | 'content', string>>;
  company?: Partial<Record<'name' | 'domain' | 'industry' | 'country', string> & { employees: number | string }>;
}

/** A path that the experience's URL match takes, to open: the pattern's literal start for a glob. */
export function pathOf(urlMatch: UrlMatch): string {
  const value = urlMatch.value.trim() || '/';
  if (urlMatch.type !== 'glob') return value.startsWith('/') ? value : `/${value}`;
  const star = value.indexOf('*');
  const literal = star === -1 ? value : value.slice(0, value.lastIndexOf('/', star) + 1);
  return literal.startsWith('/') ? literal : `/${literal}`;
}

/**
 * The page at `origin` + `path` with `name=token` added to its query. A path that would leave the
 * origin (`//other.example/`, `/\\other.example`) is refused: the token is for the site's pages only.
 */
export function pageWith(origin: string, path: string, name: string, token: string): string {
  const site = new URL(origin).origin;
  const trimmed = path.trim();
  const url = new URL(trimmed.startsWith('/') ? trimmed : `/${trimmed}`, site);
  if (url.origin !== site) throw new Error(`The page must be a path on ${site}, like /pricing.`);
  url.searchParams.set(name, token);
  return url.href;
}

/**
 * Empty choices left out: the preview is a visitor who came with only what was typed. A number of
 * employees is sent as a number when it is one, else as typed (so the API names the field).
 */
export function choicesOf(utm: Record<string, string>, company: Record<string, string>): PreviewChoices {
  const given = (fields: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(fields)
        .map(([k, v]): [string, string | number] => [k, k === 'employees' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : v.trim()])
        .filter(([, v]) => v !== ''),
    );
  const body: PreviewChoices = {};
  const u = given(utm);
  const c = given(company);
  if (Object.keys(u).length > 0) body.utm = u;
  if (Object.keys(c).length > 0) body.company = c;
  return body;
}
