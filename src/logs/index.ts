// The logs area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { createLog, deleteLogsOf, forgetTypedLeads, latestLogsOf, type LogOwner, toPersonLog } from './repository.js';
export { logRoutes } from './routes.js';
