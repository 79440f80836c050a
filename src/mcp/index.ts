// The mcp area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { routeCatalogue } from './catalogue.js';
export { mcpRoutes } from './routes.js';
