// The leads area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { enrichmentOfLead, type LeadEnrichment, recordTakenLead } from './record.js';
export { forgetLeadsOf, leadsSentWithGpc } from './repository.js';
export { leadRoutes } from './routes.js';
