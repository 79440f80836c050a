import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { messageOf } from '../components.js';
import { type PreviewChoices, pickToken, previewToken } from './onsite-api.js';
import { pageWith } from './onsite-urls.js';

// "Pick an element" and "Preview" (issue 48, §5): both open one of the site's pages in a new tab
// with a one-time token. A pick is answered by the site's script with a message to this window
// (`{type: 'pam:pick', token, selector}`), taken only from one of the site's origins and with the
// token this tab asked for.

const originOf = (text: string): string | undefined => {
  try {
    return new URL(text).origin;
  } catch {
    return undefined;
  }
};

/** A 404 of a tool's endpoint: this service does not have it (yet), said in words. */
function toolError(err: unknown, what: string): string {
  if (err instanceof ApiError && err.status === 404) return `${what} is not available on this service yet (${err.message}).`;
  return messageOf(err);
}

/**
 * Opens a tab at once (still in the click, so no pop-up blocker stops it), then sends it to the
 * page once its token is known; a failed request closes it again.
 */
async function openWith(url: () => Promise<string>, keepOpener: boolean): Promise<void> {
  const tab = window.open('about:blank', '_blank');
  if (!tab) throw new Error('The browser blocked the new tab: allow pop-ups for the console.');
  // A preview needs no way back to the console: the page gets no handle on it.
  if (!keepOpener) tab.opener = null;
  try {
    tab.location.href = await url();
  } catch (err) {
    tab.close();
    throw err;
  }
}

export interface PickState {
  /** The key of the change whose selector is being picked, while a tab is open for it. */
  waitingFor: number | undefined;
  error: string | undefined;
  start: (key: number, origin: string, path: string) => void;
  stop: () => void;
}

/**
 * "Pick an element": asks a pick token, opens the page with `?pam_pick=`, and fills the selector
 * of the change `key` with the one the page sends back. One pick at a time; a new one replaces it.
 */
export function usePick(siteId: string, origins: string[], picked: (key: number, selector: string) => void): PickState {
  const [waitingFor, setWaitingFor] = useState<number>();
  const [error, setError] = useState<string>();
  const listener = useRef<((e: MessageEvent) => void) | undefined>(undefined);
  const allowed = origins.map(originOf).filter((o): o is string => o !== undefined);
  const stop = () => {
    if (listener.current) removeEventListener('message', listener.current);
    listener.current = undefined;
    setWaitingFor(undefined);
  };
  // Leaving the form stops listening: a late message fills nothing.
  useEffect(
    () => () => {
      if (listener.current) removeEventListener('message', listener.current);
    },
    [],
  );
  const start = (key: number, origin: string, path: string) => {
    stop();
    setError(undefined);
    setWaitingFor(key);
    openWith(async () => {
      const { token } = await pickToken(siteId);
      const heard = (e: MessageEvent) => {
        const data = e.data as { type?: unknown; token?: unknown; selector?: unknown } | null;
        if (!allowed.includes(e.origin) || typeof data !== 'object' || data === null) return;
        if (data.type !== 'pam:pick' || data.token !== token || typeof data.selector !== 'string') return;
        const selector = data.selector.trim().slice(0, 500);
        if (!selector) return;
        stop();
        picked(key, selector);
      };
      listener.current = heard;
      addEventListener('message', heard);
      return pageWith(origin, path, 'pam_pick', token);
    }, true).catch((err: unknown) => {
      stop();
      setError(toolError(err, 'Picking an element'));
    });
  };
  return { waitingFor, error, start, stop };
}

/** "Preview": a preview token for the chosen visitor, then the page with `?pam_preview=`; a refusal keeps its fields. */
export async function openPreview(experienceId: string, origin: string, path: string, choices: PreviewChoices): Promise<void> {
  try {
    await openWith(async () => pageWith(origin, path, 'pam_preview', (await previewToken(experienceId, choices)).token), false);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new Error(toolError(err, 'Preview'));
    throw err;
  }
}
