// The api-keys area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { apiKeyRoutes } from './routes.js';
