/**
 * A Slack webhook URL as the API shows it (issue 45): a secret, so only its origin, its shape and
 * its last 4 characters: `https://hooks.slack.com/services/T…/…/Wxyz`. The team's segment keeps its
 * `T` (every Slack team id starts with it), the rest of the path is `…`. A last segment shorter
 * than 8 characters shows at most half of itself. Migration 0046 holds a frozen copy of this rule.
 */
export function maskedWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '…';
  }
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  const last = segments[segments.length - 1] ?? '';
  const shown = last.slice(last.length - Math.min(4, Math.floor(last.length / 2)));
  const [first, team] = segments;
  if (segments.length === 4 && first === 'services' && team !== undefined)
    return `${parsed.origin}/services/${team.slice(0, 1)}…/…/${shown}`;
  return `${parsed.origin}/…/${shown}`;
}
