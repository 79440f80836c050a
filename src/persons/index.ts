// The persons area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { erasePerson } from './erasure.js';
export {
  createPerson,
  emailDomain,
  findPersonByEmail,
  getPerson,
  personNameOf,
  personRowsByIds,
  tenantOfPerson,
  toPerson,
} from './repository.js';
export { personRoutes } from './routes.js';
export type { Person } from './schemas.js';
