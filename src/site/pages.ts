/**
 * The plane's own small pages: they name no tenant and hold no stored value, so they need no
 * escaping and leak nothing about what exists.
 */
const page = (title: string, message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${title}</title><style>body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;color:#222;background:#fafafa}main{text-align:center;padding:2rem}h1{font-size:1.5rem}</style></head><body><main><h1>${title}</h1><p>${message}</p></main></body></html>`;

export const notFoundPage = () => page('Page not found', 'There is no page at this address.');
/** For a link whose audience was erased: it says nothing of whom the page was for. */
export const gonePage = () => page('Page gone', 'This page is no longer available.');

const MESSAGES: Record<number, [string, string]> = {
  400: ['Bad request', 'The request could not be understood.'],
  405: ['Method not allowed', 'This address only serves pages.'],
  413: ['Request too large', 'The request is larger than this address accepts.'],
  429: ['Too many requests', 'Please wait a moment and try again.'],
};

export function siteErrorPage(status: number): string {
  const [title, message] = MESSAGES[status] ?? ['Something went wrong', 'Please try again later.'];
  return page(title, message);
}

/** The lead form's rate limit (issue 25): what happened and when to try again. */
export const formRateLimitedPage = (retryAfterSeconds: number) =>
  page(
    'Too many submissions',
    `This form has been sent too often from your network. Please wait ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'} and try again.`,
  );
