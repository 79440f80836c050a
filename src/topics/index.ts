// The topics area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { firstTopicsOf } from './repository.js';
export { topicRoutes } from './routes.js';
export type { Topic } from './schemas.js';
