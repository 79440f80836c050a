// The alerts area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { createAlertSender } from './dispatcher.js';
export { sealStoredWebhookUrls } from './repository.js';
export { alertRoutes } from './routes.js';
