// The jobs area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { type BackgroundJob, roundLoop, type RoundLoop } from './loop.js';
export { createMaintenance, type MaintenanceTasks } from './maintenance.js';
