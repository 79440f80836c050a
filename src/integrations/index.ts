// The integrations area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { integrationRoutes } from './routes.js';
export { sealer, type Sealer, secretNotConfigured } from './secrets.js';
export { createCrmSync, type CrmSyncOptions } from './sync.js';
