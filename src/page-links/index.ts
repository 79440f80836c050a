// The page-links area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { deleteDomainLinks, deletePageLinksOf, type Link, linkPathOf, liveLinkAt } from './repository.js';
export { pageLinkRoutes } from './routes.js';
