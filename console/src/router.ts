import { useEffect, useState } from 'preact/hooks';

// Routes live in the fragment (#/pages/…): the server serves one page at /console/, and nothing
// in a route is secret (the API key never enters a URL).

export type Route =
  | { view: 'pages' }
  | { view: 'site' }
  | { view: 'goals' }
  | { view: 'brand' }
  | { view: 'page'; pageId: string; tab: PageTab }
  | { view: 'audience'; pageId: string; audienceId: string }
  | { view: 'experiment'; pageId: string; experimentId: string }
  | { view: 'persons' }
  | { view: 'person'; personId: string }
  | { view: 'accounts' }
  | { view: 'account'; accountId: string }
  | { view: 'leads' }
  | { view: 'webhooks' }
  | { view: 'alerts' }
  | { view: 'integrations' }
  | { view: 'subscription'; subscriptionId: string }
  | { view: 'domains' }
  | { view: 'assets' }
  | { view: 'topics' }
  | { view: 'sites' }
  | { view: 'experiences'; siteId?: string }
  | { view: 'experience'; experienceId: string };

/** A page's editing, in tabs (issue 46): `#/pages/{page_id}/{tab}`; none is Content. */
export const PAGE_TABS = ['content', 'audiences', 'links', 'experiments', 'settings'] as const;
export type PageTab = (typeof PAGE_TABS)[number];
const isTab = (part: string | undefined): part is PageTab => (PAGE_TABS as readonly string[]).includes(part ?? '');

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const [area, id, sub, subId] = parts;
  if (area === 'site') return { view: 'site' };
  if (area === 'goals') return { view: 'goals' };
  if (area === 'brand') return { view: 'brand' };
  if (area === 'pages' && id && sub === 'audiences' && subId) return { view: 'audience', pageId: id, audienceId: subId };
  if (area === 'pages' && id && sub === 'experiments' && subId) return { view: 'experiment', pageId: id, experimentId: subId };
  if (area === 'pages' && id) return { view: 'page', pageId: id, tab: isTab(sub) ? sub : 'content' };
  if (area === 'persons') return id ? { view: 'person', personId: id } : { view: 'persons' };
  if (area === 'accounts') return id ? { view: 'account', accountId: id } : { view: 'accounts' };
  if (area === 'leads') return { view: 'leads' };
  if (area === 'alerts') return { view: 'alerts' };
  if (area === 'integrations') return { view: 'integrations' };
  if (area === 'webhooks') return id ? { view: 'subscription', subscriptionId: id } : { view: 'webhooks' };
  // Issue 48: the customer's own sites, and their experiences (listed per site).
  if (area === 'sites' && id && sub === 'experiences') return { view: 'experiences', siteId: id };
  if (area === 'sites') return { view: 'sites' };
  if (area === 'experiences') return id ? { view: 'experience', experienceId: id } : { view: 'experiences' };
  if (area === 'domains' || area === 'assets' || area === 'topics') return { view: area };
  return { view: 'pages' };
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
