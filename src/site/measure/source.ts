import type { Channel, ChannelGroup } from '../../db/enums.js';
import { classifyTraffic, type Landing } from '../../visits/index.js';

export type { Landing } from '../../visits/index.js';

export interface Source {
  /** The referring host, without a leading `www.`; '' when direct or from the visited host. */
  referrerHost: string;
  channel: Channel;
  /** GA4's default channel group (visits/traffic.ts). */
  channelGroup: ChannelGroup;
}

const bare = (host: string) => host.toLowerCase().replace(/^www\./, '');

/**
 * The source of a visit to `visitedHost`: the referrer's host (none, or the visited host itself,
 * is no referrer), with the channel and GA4's channel group of that host and the landing URL's
 * UTM values and click ids (visits/traffic.ts).
 */
export function sourceOf(referrer: string, visitedHost: string, landing: Landing): Source {
  let host = '';
  try {
    host = referrer === '' ? '' : bare(new URL(referrer).hostname);
  } catch {
    host = '';
  }
  if (host === bare(visitedHost)) host = '';
  return { referrerHost: host, ...classifyTraffic(host, landing) };
}
