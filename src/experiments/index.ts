// The experiments area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { armFor, visitorKey } from './assign.js';
export { createReweighing } from './reweigh.js';
export { experimentRoutes } from './routes.js';
export { assignment, type Assignment } from './serving.js';
export { analyse, type PeriodCounts } from './statistics.js';
export { stickyArm } from './units.js';
