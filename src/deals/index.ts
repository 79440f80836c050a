// The deals area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { upsertDeal } from './repository.js';
export { dealRoutes } from './routes.js';
export type { DealInput } from './schemas.js';
