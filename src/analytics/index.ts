// The analytics area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { heatmapRoutes } from './heatmap.js';
export { DAY_MS, resolveRange } from './ranges.js';
export { GROUP_COLUMN } from './repository.js';
export { analyticsRoutes } from './routes.js';
export { SITE_GROUP_BYS } from './schemas.js';
