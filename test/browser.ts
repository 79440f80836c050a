import { existsSync } from 'node:fs';

// What the browser tests share: Debian's Chromium, driven by playwright-core.
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const available = existsSync(CHROMIUM);
/** Under CI the browser is installed by .ci/run: its absence is a failure, not a skip. */
export const skip = !available && process.env.CI !== 'true' ? `no browser at ${CHROMIUM} (apt-get install chromium)` : false;
/** An ordinary Chrome's name: isbot takes HeadlessChrome for a bot, whose visits are not recorded. */
export const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export { until } from './until.js';
