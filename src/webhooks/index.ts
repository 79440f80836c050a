// The webhooks area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { pruneEvents, redactDeliveryErrors } from './deliveries.js';
export { createDispatcher } from './dispatcher.js';
export { webhookRoutes } from './routes.js';
